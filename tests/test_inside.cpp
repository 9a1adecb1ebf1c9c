// engine/inside: the confusion matrix and mistakes of a trained model agree with the CPU
// backend's evaluation, pictures of digits at any size and colour come back as the 28x28 images
// MNIST's were, feature maps and filters are the reference forward pass and the weights, one
// output is the sum of its products, and inference is timed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <regex>

#include "bad_inputs.hpp"
#include "digit_glyphs.hpp"
#include "engine/base/errors.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/cpu/cpu_network.hpp"
#include "engine/devices/devices.hpp"
#include "engine/inside/activations.hpp"
#include "engine/inside/confusion.hpp"
#include "engine/inside/digit_image.hpp"
#include "engine/inside/inference_timing.hpp"
#include "engine/model/init.hpp"
#include "engine/records/run_record.hpp"
#include "kernels/cpu/ops.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

// An MLP trained for a few Adam steps on `train`: right on most of `test`, wrong on some.
ModelWeights small_model(const data::ImageSet& train, const data::ImageSet& test, int steps) {
  ModelWeights model;
  model.config = load_model("mlp");
  model.plan = plan_model(model.config);
  model.params.resize(size_t(model.plan.parameter_count));
  init_parameters(model.params, model.plan, 1);
  const DataSets sets{&train, nullptr, &test};
  BackendOptions options;
  options.batch = 32;
  options.threads = 1;
  CpuBackend backend(model.plan, OptimizerConfig{}, sets, options);
  backend.set_parameters(model.params);
  StepTimes times;
  std::vector<int32_t> indices(32);
  for (int step = 1; step <= steps; ++step) {
    for (int i = 0; i < 32; ++i) indices[size_t(i)] = ((step - 1) * 32 + i) % train.count;
    backend.train_step(indices, 1e-3f, step, times);
  }
  backend.get_parameters(model.params);
  return model;
}

BatchStats backend_evaluation(const ModelWeights& model, const data::ImageSet& test) {
  const DataSets sets{nullptr, nullptr, &test};
  BackendOptions options;
  options.batch = 100;
  CpuBackend backend(model.plan, OptimizerConfig{}, sets, options);
  backend.set_parameters(model.params);
  std::vector<int32_t> all(size_t(test.count));
  std::iota(all.begin(), all.end(), 0);
  return backend.evaluate(Split::Test, all);
}

TEST(Confusion, TotalsAndDiagonalAgreeWithTheBackendsEvaluation) {
  const data::ImageSet train = test::synthetic_set(256, 1), test = test::synthetic_set(300, 2);
  const ModelWeights model = small_model(train, test, 1);
  const Confusion confusion = confusion_matrix(model, test, 64);
  const BatchStats evaluated = backend_evaluation(model, test);
  EXPECT_EQ(confusion.total(), test.count);
  EXPECT_EQ(confusion.correct(), evaluated.correct);
  EXPECT_DOUBLE_EQ(confusion.accuracy(), evaluated.accuracy());
  // A few steps leave it partly wrong, so the mistakes are there to check.
  ASSERT_GT(confusion.mistakes.size(), 0u);
  ASSERT_GT(confusion.correct(), 0);
  EXPECT_EQ(int64_t(confusion.mistakes.size()), confusion.total() - confusion.correct());
  std::vector<int64_t> off_diagonal(confusion.counts.size(), 0);
  for (const Mistake& m : confusion.mistakes) {
    EXPECT_EQ(m.truth, test.labels[size_t(m.index)]);
    EXPECT_NE(m.truth, m.predicted);
    EXPECT_GE(m.p_predicted, m.p_truth);
    EXPECT_GT(m.p_predicted, 0.1f);  // the largest of ten probabilities
    ++off_diagonal[size_t(m.truth) * 10 + m.predicted];
  }
  for (int t = 0; t < 10; ++t)
    for (int p = 0; p < 10; ++p)
      if (t != p) {
        EXPECT_EQ(off_diagonal[size_t(t) * 10 + p], confusion.count(t, p));
      }
  // Rows normalized sum to 1 where a class has images; the per-class accuracy is their diagonal.
  const std::vector<double> rows = confusion.row_normalized();
  const std::vector<double> per_class = confusion.class_accuracy();
  for (int t = 0; t < 10; ++t) {
    const double sum = std::accumulate(rows.begin() + t * 10, rows.begin() + t * 10 + 10, 0.0);
    EXPECT_NEAR(sum, 1.0, 1e-12) << "class " << t;
    EXPECT_DOUBLE_EQ(per_class[size_t(t)], rows[size_t(t) * 11]);
  }
}

TEST(Confusion, CsvHasAHeaderOfPredictionsAndARowPerTrueClass) {
  Confusion confusion;
  confusion.classes = 10;
  confusion.counts.assign(100, 0);
  confusion.counts[7 * 10 + 2] = 3;
  confusion.counts[0] = 5;
  const std::string csv = confusion_csv(confusion);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "true\\predicted,0,1,2,3,4,5,6,7,8,9");
  EXPECT_NE(csv.find("\n0,5,0,0,0,0,0,0,0,0,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n7,0,0,3,0,0,0,0,0,0,0\n"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 11);
}

TEST(Confusion, CountedInPartsWithProgressItIsTheSameAndStopsWhenTold) {
  const data::ImageSet train = test::synthetic_set(256, 1), test = test::synthetic_set(2500, 2);
  const ModelWeights model = small_model(train, test, 1);
  const Confusion whole = confusion_matrix(model, test, 64);
  std::vector<int> told;
  const Confusion parts = confusion_matrix(model, test, 64, [&](int done, int total) {
    EXPECT_EQ(total, test.count);
    told.push_back(done);
    return true;
  });
  EXPECT_EQ(told, (std::vector<int>{1024, 2048, 2500}));
  EXPECT_EQ(parts.counts, whole.counts);
  ASSERT_EQ(parts.mistakes.size(), whole.mistakes.size());
  for (size_t i = 0; i < parts.mistakes.size(); ++i)
    EXPECT_EQ(parts.mistakes[i].index, whole.mistakes[i].index);
  const Confusion stopped = confusion_matrix(model, test, 64, [](int, int) { return false; });
  EXPECT_EQ(stopped.total(), 1024);
}

TEST(Confusion, RowNormalizedCsvHasEachRowsShares) {
  Confusion confusion;
  confusion.classes = 10;
  confusion.counts.assign(100, 0);
  confusion.counts[7 * 10 + 2] = 1;
  confusion.counts[7 * 10 + 7] = 3;
  const std::string csv = confusion_csv(confusion, true);
  EXPECT_NE(csv.find("\n7,0.000000,0.000000,0.250000,0.000000,0.000000,0.000000,0.000000,0.750000,"
                     "0.000000,0.000000\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\n0,0.000000,"), std::string::npos) << csv;  // a class with no images
}

TEST(RunWeights, AreTheFileRunJsonNamesElseWeightsInTheRunFolder) {
  test::TempDir dir;
  RunData run;
  run.dir = dir.path() / "run";
  std::filesystem::create_directories(run.dir);
  EXPECT_FALSE(run_weights(run));
  std::ofstream(run.dir / "weights.safetensors") << "x";
  EXPECT_EQ(run_weights(run), run.dir / "weights.safetensors");
  const auto elsewhere = dir.path() / "saved.safetensors";
  std::ofstream(elsewhere) << "x";
  run.info["weights"] = elsewhere.string();
  EXPECT_EQ(run_weights(run), elsewhere);
  // The folder moved (imported from another machine): the file of that name in it.
  run.info["weights"] = "/gone/elsewhere/weights.safetensors";
  EXPECT_EQ(run_weights(run), run.dir / "weights.safetensors");
}

// The largest difference between two 28x28 images, in 0..255 levels.
int max_difference(const uint8_t* a, const uint8_t* b) {
  int worst = 0;
  for (int i = 0; i < 784; ++i) worst = std::max(worst, std::abs(int(a[i]) - int(b[i])));
  return worst;
}

// Drawn 10x larger, black on white, anywhere on a larger canvas: the preprocessing gives back the
// 28x28 digit it was drawn from, to the rounding of a level.
TEST(DigitImage, RedrawnDigitsComeBackAsTheOriginals) {
  const data::ImageSet digits = test::glyph_digits(20, 3);
  for (int i = 0; i < digits.count; ++i) {
    const int width = 400, height = 330, left = 7 + 5 * i, top = 40 - i;
    for (bool invert : {true, false}) {
      const std::vector<uint8_t> picture =
          test::redraw_digit(digits, i, 10, width, height, left, top, invert);
      const std::vector<uint8_t> digit = mnist_digit(gray_image(width, height, picture));
      EXPECT_LE(max_difference(digit.data(), digits.pixels.data() + size_t(i) * 784), 1)
          << "digit " << i << (invert ? " black on white" : " white on black");
    }
  }
}

TEST(DigitImage, FitsTheInkInto20x20KeepingItsShapeAndCentresItsMass) {
  // A 40x100 white bar on a 300x200 black picture: 8x20 after the fit, centred.
  std::vector<uint8_t> picture(300 * 200, 0);
  for (int y = 30; y < 130; ++y)
    for (int x = 200; x < 240; ++x) picture[size_t(y) * 300 + x] = 255;
  const std::vector<uint8_t> digit = mnist_digit(gray_image(300, 200, picture));
  int left = 28, right = -1, top = 28, bottom = -1;
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x)
      if (digit[size_t(y) * 28 + x] > 0) {
        EXPECT_EQ(digit[size_t(y) * 28 + x], 255);
        left = std::min(left, x), right = std::max(right, x);
        top = std::min(top, y), bottom = std::max(bottom, y);
      }
  EXPECT_EQ(right - left + 1, 8);
  EXPECT_EQ(bottom - top + 1, 20);
  EXPECT_EQ(left, 11);  // its centre of mass 3.5 moved to 14, the half rounded up: columns 11..18
  EXPECT_EQ(top, 5);
}

TEST(DigitImage, DownscalingAveragesTheArea) {
  // A one-pixel-wide checkerboard 40x40 averages to a uniform grey at 20x20.
  std::vector<uint8_t> picture(60 * 60, 0);
  for (int y = 10; y < 50; ++y)
    for (int x = 10; x < 50; ++x) picture[size_t(y) * 60 + x] = (x + y) % 2 ? 255 : 0;
  picture[10 * 60 + 10] = 255, picture[49 * 60 + 49] = 255;  // the box's corners are ink
  const std::vector<uint8_t> digit = mnist_digit(gray_image(60, 60, picture));
  EXPECT_NEAR(digit[14 * 28 + 14], 128, 1);
}

TEST(DigitImage, RefusesAPictureWithoutInk) {
  const std::vector<uint8_t> white(50 * 40, 255);
  EXPECT_THROW(mnist_digit(gray_image(50, 40, white)), std::invalid_argument);
  EXPECT_THROW(mnist_digit(GrayImage{}), std::invalid_argument);
}

// A small model of every layer kind with weights known in closed form: conv (padding 1), ReLU,
// max pooling, conv (stride 2, no padding), tanh, flatten, dropout, linear.
ModelWeights known_model() {
  ModelWeights model;
  auto layer = [](LayerType type, const std::string& name) {
    LayerSpec spec;
    spec.type = type;
    spec.name = name;
    return spec;
  };
  LayerSpec conv1 = layer(LayerType::Conv2d, "conv1");
  conv1.out_channels = 2, conv1.kernel = 3, conv1.padding = 1;
  LayerSpec pool = layer(LayerType::MaxPool2d, "pool1");
  pool.kernel = 2, pool.stride = 2;
  LayerSpec conv2 = layer(LayerType::Conv2d, "conv2");
  conv2.out_channels = 3, conv2.kernel = 3, conv2.stride = 2;
  LayerSpec dropout = layer(LayerType::Dropout, "dropout1");
  dropout.p = 0.5f;
  LayerSpec fc = layer(LayerType::Linear, "fc1");
  fc.out_features = 10;
  model.config.name = "known";
  model.config.layers = {conv1,
                         layer(LayerType::ReLU, "relu1"),
                         pool,
                         conv2,
                         layer(LayerType::Tanh, "tanh1"),
                         layer(LayerType::Flatten, "flatten"),
                         dropout,
                         fc};
  model.plan = plan_model(model.config);
  model.params.resize(size_t(model.plan.parameter_count));
  for (size_t i = 0; i < model.params.size(); ++i)
    model.params[i] = 0.3f * float(std::sin(0.7 * double(i) + 0.2));
  return model;
}

const float* weights_of(const ModelWeights& model, const std::string& name) {
  for (const ParameterInfo& p : model.plan.parameters)
    if (p.name == name) return model.params.data() + p.offset;
  ADD_FAILURE() << "no parameter " << name;
  return nullptr;
}

std::vector<uint8_t> test_digit() { return std::vector<uint8_t>(test::synthetic_set(1, 5).pixels); }

// The forward pass worked out layer by layer with the reference kernels, as the test's own oracle.
TEST(Activations, FeatureMapsAreTheReferenceKernelsForwardPass) {
  namespace ref = kernels::ref;
  const ModelWeights model = known_model();
  const std::vector<uint8_t> digit = test_digit();
  const NetworkActivations got = layer_activations(model, digit);

  std::vector<float> input(784);
  data::normalize_pixels(input.data(), digit.data(), 784);
  std::vector<float> conv1(2 * 28 * 28), relu1(conv1.size()), pool1(2 * 14 * 14);
  std::vector<int32_t> argmax(pool1.size());
  std::vector<float> conv2(3 * 6 * 6), tanh1(conv2.size()), fc1(10);
  ref::conv2d_forward(conv1.data(), input.data(), weights_of(model, "conv1.weight"),
                      weights_of(model, "conv1.bias"), {1, 1, 28, 28, 2, 3, 3, 1, 1});
  ref::relu_forward(relu1.data(), conv1.data(), conv1.size());
  ref::maxpool2d_forward(pool1.data(), argmax.data(), relu1.data(), {1, 2, 28, 28, 2, 2});
  ref::conv2d_forward(conv2.data(), pool1.data(), weights_of(model, "conv2.weight"),
                      weights_of(model, "conv2.bias"), {1, 2, 14, 14, 3, 3, 3, 2, 0});
  ref::tanh_forward(tanh1.data(), conv2.data(), conv2.size());
  ref::linear_forward(fc1.data(), tanh1.data(), weights_of(model, "fc1.weight"),
                      weights_of(model, "fc1.bias"), 1, 108, 10);
  // Flatten changes only the shape, and dropout is off in inference.
  const std::vector<std::vector<float>> expected = {conv1, relu1, pool1, conv2,
                                                    tanh1, tanh1, tanh1, fc1};

  EXPECT_EQ(got.input, input);
  EXPECT_EQ(got.input_shape, (ActivationShape{1, 28, 28}));
  ASSERT_EQ(got.layers.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got.layers[i].info.spec.name, model.plan.layers[i].spec.name);
    EXPECT_EQ(got.layers[i].values.size(), size_t(got.layers[i].info.output.size()));
    EXPECT_EQ(got.layers[i].values, expected[i])
        << "layer " << i << " " << got.layers[i].info.spec.name;
  }
  EXPECT_FLOAT_EQ(got.layers[3].at(2, 5, 4), conv2[(2 * 6 + 5) * 6 + 4]);
  // The probabilities are the softmax of the last layer's output.
  ASSERT_EQ(got.probabilities.size(), 10u);
  float sum = 0;
  for (float p : got.probabilities) sum += p;
  EXPECT_NEAR(sum, 1.0f, 1e-6f);
  EXPECT_EQ(predicted_class(got.probabilities.data(), 10),
            int(std::max_element(fc1.begin(), fc1.end()) - fc1.begin()));
}

TEST(Activations, RefuseAnImageThatIsNot28x28AndAModelForOtherImages) {
  const ModelWeights model = known_model();
  const std::vector<uint8_t> short_image(783, 0);
  EXPECT_THROW(layer_activations(model, short_image), std::invalid_argument);
  ModelWeights wide = model;
  wide.config.input = {1, 32, 32};
  wide.plan = plan_model(wide.config);
  const std::vector<uint8_t> digit = test_digit();
  EXPECT_THROW(layer_activations(wide, digit), ConfigError);
}

TEST(Activations, TheFastNetworkHasNoOutputPerLayer) {
  const ModelWeights model = known_model();
  CpuNetwork fast(model.plan, 1, CpuKernels::Fast);
  EXPECT_THROW(fast.layer_output(0), std::logic_error);
}

TEST(Filters, AreTheConvolutionsWeightsWithTheirLargestMagnitude) {
  const ModelWeights model = known_model();
  EXPECT_EQ(conv_layer_indices(model.plan), (std::vector<int>{0, 3}));
  const ConvFilters filters = conv_filters(model, 3);
  EXPECT_EQ(filters.name, "conv2");
  EXPECT_EQ(filters.out_channels, 3);
  EXPECT_EQ(filters.in_channels, 2);
  EXPECT_EQ(filters.kernel, 3);
  const float* w = weights_of(model, "conv2.weight");
  float largest = 0;
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 2; ++i)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 3; ++x) {
          const float expected = w[((o * 2 + i) * 3 + y) * 3 + x];
          EXPECT_EQ(filters.at(o, i, y, x), expected);
          largest = std::max(largest, std::abs(expected));
        }
  EXPECT_EQ(filters.weights.size(), 54u);
  EXPECT_EQ(filters.max_abs, largest);
  ASSERT_EQ(filters.bias.size(), 3u);
  EXPECT_EQ(filters.bias[2], weights_of(model, "conv2.bias")[2]);
  EXPECT_THROW(conv_filters(model, 1), std::invalid_argument);  // the ReLU
  EXPECT_THROW(conv_filters(model, 8), std::invalid_argument);
}

// One output is its bias plus its products, each the input under the filter times the weight.
TEST(ExplainOutput, TheSumOfProductsIsTheStoredActivation) {
  const ModelWeights model = known_model();
  const NetworkActivations maps = layer_activations(model, test_digit());
  const ProductSum p = explain_output(model, maps, 3, 1, 4, 2);
  EXPECT_EQ(p.type, LayerType::Conv2d);
  EXPECT_EQ(p.in_channels, 2);
  EXPECT_EQ(p.rows, 3);
  EXPECT_EQ(p.cols, 3);
  EXPECT_EQ(p.top, 8);  // stride 2, no padding
  EXPECT_EQ(p.left, 4);
  const float* w = weights_of(model, "conv2.weight");
  double sum = weights_of(model, "conv2.bias")[1];
  EXPECT_EQ(p.bias, weights_of(model, "conv2.bias")[1]);
  for (int c = 0; c < 2; ++c)
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        const size_t i = p.index(c, r, q);
        const float input = maps.layers[2].at(c, 8 + r, 4 + q);  // the pooling's output
        EXPECT_EQ(p.patch[i], input);
        EXPECT_EQ(p.weights[i], w[((1 * 2 + c) * 3 + r) * 3 + q]);
        EXPECT_EQ(p.products[i], input * p.weights[i]);
        EXPECT_EQ(p.padding[i], 0);
        sum += double(p.products[i]);
      }
  EXPECT_NEAR(p.sum, sum, 1e-5);
  EXPECT_EQ(p.activation, maps.layers[3].at(1, 4, 2));
  EXPECT_NEAR(p.sum, p.activation, 1e-6f * std::max(1.0f, std::abs(p.activation)));
}

TEST(ExplainOutput, PaddingReadsAsZerosAtTheEdge) {
  const ModelWeights model = known_model();
  const NetworkActivations maps = layer_activations(model, test_digit());
  const ProductSum p = explain_output(model, maps, 0, 0, 0, 27);
  EXPECT_EQ(p.top, -1);
  EXPECT_EQ(p.left, 26);
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) {
      const size_t i = p.index(0, r, q);
      const bool off = r == 0 || q == 2;
      EXPECT_EQ(p.padding[i], off ? 1 : 0) << r << "," << q;
      EXPECT_EQ(p.patch[i], off ? 0.0f : maps.input[size_t(r - 1) * 28 + 26 + q]);
    }
  EXPECT_NEAR(p.sum, maps.layers[0].at(0, 0, 27), 1e-6f);
}

TEST(ExplainOutput, ALinearOutputReadsTheFeatureMapsBeforeTheFlatten) {
  const ModelWeights model = known_model();
  const NetworkActivations maps = layer_activations(model, test_digit());
  const ProductSum p = explain_output(model, maps, 7, 6, 0, 0);
  EXPECT_EQ(p.type, LayerType::Linear);
  EXPECT_EQ(p.input_shape, (ActivationShape{3, 6, 6}));
  EXPECT_EQ(p.in_channels * p.rows * p.cols, 108);
  EXPECT_EQ(p.patch, maps.layers[6].values);
  const float* w = weights_of(model, "fc1.weight") + 6 * 108;
  for (size_t i = 0; i < 108; ++i) EXPECT_EQ(p.products[i], p.patch[i] * w[i]);
  EXPECT_NEAR(p.sum, maps.layers[7].values[6], 1e-5f);
  EXPECT_EQ(p.activation, maps.layers[7].values[6]);
}

TEST(ExplainOutput, RefusesWhatHasNoProducts) {
  const ModelWeights model = known_model();
  const NetworkActivations maps = layer_activations(model, test_digit());
  EXPECT_THROW(explain_output(model, maps, 1, 0, 0, 0), std::invalid_argument);  // ReLU
  EXPECT_THROW(explain_output(model, maps, 0, 2, 0, 0), std::invalid_argument);  // channel
  EXPECT_THROW(explain_output(model, maps, 0, 0, 28, 0), std::invalid_argument);
  EXPECT_THROW(explain_output(model, maps, 9, 0, 0, 0), std::invalid_argument);
}

TEST(InferenceTiming, CpuFiguresArePositiveAndAgree) {
  const ModelWeights model = known_model();
  const std::vector<InferenceTiming> timings = time_inference(model, "cpu", {1, 7}, 1);
  ASSERT_EQ(timings.size(), 2u);
  for (const InferenceTiming& t : timings) {
    EXPECT_EQ(t.device, "cpu");
    EXPECT_TRUE(std::isfinite(t.batch_ms) && t.batch_ms > 0) << t.batch_ms;
    EXPECT_DOUBLE_EQ(t.images_per_second(), t.batch * 1000.0 / t.batch_ms);
    EXPECT_DOUBLE_EQ(t.ms_per_image(), t.batch_ms / t.batch);
  }
  EXPECT_EQ(timings[0].batch, 1);
  EXPECT_EQ(timings[1].batch, 7);
  // The answers of the timed passes come back with the times: a row of logits per image.
  for (const InferenceTiming& t : timings) {
    ASSERT_EQ(t.logits.size(), size_t(t.batch) * 10u) << t.batch;
    for (const float x : t.logits) EXPECT_TRUE(std::isfinite(x)) << t.batch;
  }
}

TEST(InferenceTiming, AGpuIsTimedWhereThereIsOneAndSaysNoGpuWhereNot) {
  const ModelWeights model = known_model();
  const DeviceList devices = list_devices();
  if (devices.gpus.empty()) {
    try {
      time_inference(model, "cuda:0", {1});
      ADD_FAILURE() << "cuda:0 was timed on a machine without a GPU";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--device cuda:0: no GPU"), std::string::npos)
          << e.what();
    }
    GTEST_SKIP() << devices.no_gpu_reason;
  }
  const std::vector<InferenceTiming> timings = time_inference(model, "cuda:0", {1, 64}),
                                     cpu = time_inference(model, "cpu", {1, 64}, 1);
  ASSERT_EQ(timings.size(), 2u);
  ASSERT_EQ(cpu.size(), 2u);
  // A time alone would also come from a pass that computed nothing: the GPU's logits (NaN until
  // a pass writes them) are the CPU's, to fp32 rounding.
  for (size_t i = 0; i < timings.size(); ++i) {
    const InferenceTiming& t = timings[i];
    EXPECT_TRUE(std::isfinite(t.batch_ms) && t.batch_ms > 0) << t.batch_ms;
    ASSERT_EQ(t.logits.size(), cpu[i].logits.size()) << "batch " << t.batch;
    for (const float x : t.logits) ASSERT_TRUE(std::isfinite(x)) << "batch " << t.batch;
    EXPECT_LE(test::relative_error(t.logits, cpu[i].logits), 1e-5) << "batch " << t.batch;
  }
}

TEST(InferenceTiming, BadListsAreRefusedNamingTheFlag) {
  EXPECT_EQ(parse_inference_batches("1, 64,1000"), (std::vector<int>{1, 64, 1000}));
  EXPECT_EQ(parse_inference_devices("cpu"), (std::vector<std::string>{"cpu"}));
  for (const char* bad : {"0", "-1", "x", "1,,2", "", "65537", "1.5"})
    EXPECT_THROW(parse_inference_batches(bad), ConfigError) << bad;
  for (const char* bad : {"gpu", "cuda", "cuda:", "cuda:x", "cpu,", "", "cuda:0x2"})
    EXPECT_THROW(parse_inference_devices(bad), ConfigError) << bad;
  try {
    parse_inference_batches("1,zero");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch: \"zero\""), std::string::npos) << e.what();
  }
}

// A checkpoint whose model takes other images than 28x28 digits loads (its file and config agree),
// and every consumer that feeds it digits refuses it in one line naming both shapes: predict and
// the drawn digit (the Classifier), the confusion matrix (eval --confusion, the window) and the
// layer view. A 1x4x4 model took a 64-byte block that 784 pixels overflowed.
TEST(ModelInput, EveryConsumerRefusesAModelOfOtherImagesNamingBothShapes) {
  test::TempDir dir;
  const data::ImageSet digits = test::synthetic_set(20, 5);
  const std::vector<uint8_t> digit(digits.pixels.begin(), digits.pixels.begin() + 784);
  int tried = 0;
  for (const char* name : {"mlp", "lenet5"}) {
    for (const test::BadCheckpoint& bad :
         test::shape_mismatch_checkpoints(dir.path() / name, preset(name))) {
      if (!bad.loads) continue;
      ModelWeights model;
      try {
        model = load_model_weights(bad.path, "");
      } catch (const ConfigError&) {  // lenet5's layers do not fit every input: refused at load
        continue;
      }
      ++tried;
      const std::string input = shape_text(model.plan.layers.front().input);
      const std::string takes = bad.path.string() + ": the model takes " + input + " images, but ";
      auto expect_refused = [&](const std::function<void()>& feed, const std::string& who) {
        try {
          feed();
          ADD_FAILURE() << bad.what << ": " << who << " fed it";
        } catch (const ConfigError& e) {
          const std::string message = e.what();
          EXPECT_EQ(message, takes + who + " needs 1x28x28; use a model made for 1x28x28 images");
          EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        }
      };
      expect_refused([&] { Classifier(model, 4).probabilities(digit, 1); }, "classifying a digit");
      expect_refused([&] { class_probabilities(model, digit, 1); }, "classifying a digit");
      expect_refused([&] { layer_activations(model, digit); }, "showing a digit's layers");
      EXPECT_THROW(confusion_matrix(model, digits, 8), ConfigError) << bad.what;
    }
  }
  EXPECT_GE(tried, 5 + 1);  // the MLP takes each of the five inputs; LeNet-5 at least 3x28x28
}

// eval, the window's confusion matrix and every backend check the data's image size against the
// model's input: 56x56 images crashed eval, and 14x14 or 1x1 sets gave an accuracy.
TEST(ModelInput, DataOfAnotherImageSizeIsRefusedByEveryBackendAndTheConfusionMatrix) {
  const ModelWeights model = small_model(test::synthetic_set(64, 1), test::synthetic_set(8, 2), 1);
  for (const int side : {56, 14, 1, 27}) {
    data::ImageSet set;
    set.count = 8;
    set.rows = set.cols = side;
    set.pixels.assign(size_t(8) * side * side, 9);
    set.labels.assign(8, 1);
    const std::string message = "the test set's images are " + std::to_string(side) + "x" +
                                std::to_string(side) +
                                " pixels (one channel), and the model takes 1x28x28 images";
    try {
      backend_evaluation(model, set);
      ADD_FAILURE() << side << ": evaluated";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
    try {
      confusion_matrix(model, set, 4);
      ADD_FAILURE() << side << ": counted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
  }
}

// bench inference checks the memory its largest batch needs against the memory free before it
// allocates: a batch of 65536 took 7.1 GB without a word. A model of wide feature maps (3 MB an
// image) asks for far more than any machine has at that batch.
TEST(InferenceTiming, ABatchBeyondTheFreeMemoryIsRefusedNamingBothFigures) {
  const ModelConfig config = test::wide_feature_map_model();
  ModelWeights model;
  model.config = config;
  model.plan = plan_model(config);
  model.params.assign(size_t(model.plan.parameter_count), 0.01f);
  const uint64_t peak_before = test::peak_memory_bytes();
  try {
    time_inference(model, "cpu", {1, 65536}, 1);
    ADD_FAILURE() << "timed";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(std::regex_match(message, std::regex("--batch 65536: timing mlp on a batch of "
                                                     "65536 needs [0-9.]+ GiB of memory, and this "
                                                     "machine has [0-9.]+ (GiB|MiB) free; use a "
                                                     "smaller --batch")))
        << message;
  }
  EXPECT_LT(test::peak_memory_bytes(), peak_before + (uint64_t(256) << 20));
  EXPECT_EQ(time_inference(model, "cpu", {1}, 1).size(), 1u);  // one image fits
}

}  // namespace
}  // namespace gpulab
