// Model configs, presets, shape inference, initialization and the CPU network's wiring.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/cpu/cpu_network.hpp"
#include "engine/model/init.hpp"
#include "engine/model/layer_stack.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/experiment.hpp"
#include "preset_conv_shapes.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

TEST(ModelConfig, PresetParameterCountsMatchPyTorch) {
  // The counts PyTorch reports (sum(p.numel() for p in net.parameters())) for the same nets.
  EXPECT_EQ(plan_model(preset("mlp")).parameter_count, 203530);
  EXPECT_EQ(plan_model(preset("lenet5")).parameter_count, 61706);
  EXPECT_EQ(plan_model(preset("pytorch-example")).parameter_count, 1199882);
  EXPECT_EQ(plan_model(preset("tf-tutorial")).parameter_count, 3274634);
  // conv 320 + 9248 + 18496 + 36928 + 73856, linear 1152*128+128 and 1290.
  EXPECT_EQ(plan_model(preset("vgg-small")).parameter_count, 287722);
  // conv 32*9+32 and 64*32*9+64, linear 1600*128+128 and 128*10+10.
  EXPECT_EQ(plan_model(preset("fast-mnist")).parameter_count, 225034);
}

TEST(ModelConfig, FastMnistIsTwoConvolutionsEachPooledThenTwoLinears) {
  const ModelPlan plan = plan_model(preset("fast-mnist"));
  ASSERT_EQ(plan.layers.size(), 10u);
  EXPECT_EQ(plan.layers[0].output, (ActivationShape{32, 26, 26}));  // 3x3, no padding
  EXPECT_EQ(plan.layers[2].output, (ActivationShape{32, 13, 13}));
  EXPECT_EQ(plan.layers[3].output, (ActivationShape{64, 11, 11}));
  EXPECT_EQ(plan.layers[5].output, (ActivationShape{64, 5, 5}));  // the odd row and column dropped
  EXPECT_EQ(plan.layers[6].output, (ActivationShape{1600, 1, 1}));
  EXPECT_EQ(plan.layers[9].output, (ActivationShape{10, 1, 1}));
  ASSERT_EQ(plan.parameters.size(), 8u);
  EXPECT_EQ(plan.parameters[0].name, "conv1.weight");
  EXPECT_EQ(plan.parameters[0].shape, (std::vector<int64_t>{32, 1, 3, 3}));
  EXPECT_EQ(plan.parameters[2].shape, (std::vector<int64_t>{64, 32, 3, 3}));
  EXPECT_EQ(plan.parameters[4].name, "fc1.weight");
  EXPECT_EQ(plan.parameters[4].shape, (std::vector<int64_t>{128, 1600}));
  EXPECT_EQ(plan.parameters[6].shape, (std::vector<int64_t>{10, 128}));
  for (const LayerInfo& layer : plan.layers) EXPECT_NE(layer.spec.type, LayerType::Dropout);
}

// The race-to-99 demo carries the recipe that reached 99.0% in one epoch
// (bench/results/fast_recipe-2026-11-29.md): training it here would take a minute, so the test
// holds the file to the recipe instead.
TEST(ModelConfig, RaceTo99DemoCarriesTheFastMnistRecipe) {
  const auto source = std::filesystem::path(GPULAB_TEST_DATA_DIR).parent_path().parent_path();
  std::ifstream file(source / "resources/demos/race-to-99.json");
  ASSERT_TRUE(file) << "resources/demos/race-to-99.json";
  const nlohmann::json j = nlohmann::json::parse(file);
  const Experiment e = experiment_from_json(j);
  EXPECT_EQ(model_to_json(e.model)["layers"], model_to_json(preset("fast-mnist"))["layers"]);
  EXPECT_EQ(e.train.optimizer.kind, OptimizerKind::Adam);
  EXPECT_FLOAT_EQ(e.train.optimizer.lr, 0.0025f);
  EXPECT_EQ(e.train.schedule.kind, ScheduleKind::OneCycle);
  const ScheduleConfig defaults;  // what bench/pytorch_time_to_accuracy.py gives OneCycleLR
  EXPECT_FLOAT_EQ(e.train.schedule.pct_start, defaults.pct_start);
  EXPECT_FLOAT_EQ(e.train.schedule.div_factor, defaults.div_factor);
  EXPECT_FLOAT_EQ(e.train.schedule.final_div_factor, defaults.final_div_factor);
  EXPECT_EQ(e.train.batch, 32);
  EXPECT_EQ(e.train.epochs, 1);
  EXPECT_EQ(e.train.max_steps, 0);
  EXPECT_DOUBLE_EQ(e.train.stop_at_accuracy, 0.99);
  EXPECT_DOUBLE_EQ(e.train.target_accuracy, 0.99);
  // CPU against GPU, each line ending at its own 99%.
  ASSERT_EQ(j["race"].size(), 2u);
  EXPECT_EQ(j["race"][0]["device"], "cpu");
  EXPECT_EQ(j["race"][1]["device"], "cuda:0");
}

TEST(ModelConfig, PyTorchNamesAndLayouts) {
  const ModelPlan plan = plan_model(preset("pytorch-example"));
  ASSERT_EQ(plan.parameters.size(), 8u);
  EXPECT_EQ(plan.parameters[0].name, "conv1.weight");
  EXPECT_EQ(plan.parameters[0].shape, (std::vector<int64_t>{32, 1, 3, 3}));
  EXPECT_EQ(plan.parameters[2].name, "conv2.weight");
  EXPECT_EQ(plan.parameters[4].name, "fc1.weight");
  EXPECT_EQ(plan.parameters[4].shape, (std::vector<int64_t>{128, 9216}));
  EXPECT_EQ(plan.parameters[7].name, "fc2.bias");
  EXPECT_EQ(plan.layers[4].output, (ActivationShape{64, 12, 12}));
  EXPECT_EQ(plan.layers[5].spec.name, "dropout1");
}

// The CUDA kernel suite tests the convolutions of tests/preset_conv_shapes.hpp as the presets'
// own: the list must be every convolution of every preset, in order, with whether a ReLU follows.
TEST(ModelConfig, TheKernelSuitesPresetConvolutionsAreThePresets) {
  size_t next = 0;
  for (const std::string& name : preset_names()) {
    const ModelPlan plan = plan_model(preset(name));
    int index = 0;
    for (size_t i = 0; i < plan.layers.size(); ++i) {
      if (plan.layers[i].spec.type != LayerType::Conv2d) continue;
      const std::string what = name + " conv" + std::to_string(++index);
      ASSERT_LT(next, test::kPresetConvs.size()) << what << " is missing from the list";
      const test::PresetConv& listed = test::kPresetConvs[next++];
      EXPECT_EQ(listed.what, what);
      const kernels::Conv2dShape s = conv_shape(plan.layers[i], 1), l = listed.shape;
      EXPECT_EQ(std::vector<int>({l.batch, l.in_channels, l.in_height, l.in_width, l.out_channels,
                                  l.kernel_h, l.kernel_w, l.stride, l.padding}),
                std::vector<int>({s.batch, s.in_channels, s.in_height, s.in_width, s.out_channels,
                                  s.kernel_h, s.kernel_w, s.stride, s.padding}))
          << what;
      const bool relu_after =
          i + 1 < plan.layers.size() && plan.layers[i + 1].spec.type == LayerType::ReLU;
      EXPECT_EQ(listed.relu_after, relu_after) << what;
    }
  }
  EXPECT_EQ(next, test::kPresetConvs.size()) << "the list holds convolutions no preset has";
}

TEST(ModelConfig, KernelLargerThanInputIsExplained) {
  ModelConfig c = preset("lenet5");
  c.layers[3].kernel = 9;  // conv2 on 6x14x14 is fine with 9; make it too large
  c.layers[3].kernel = 15;
  try {
    plan_model(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("conv2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("larger than its input"), std::string::npos) << e.what();
  }
  const auto problems = validate_layers(c);
  EXPECT_TRUE(problems[0].empty());
  EXPECT_FALSE(problems[3].empty());
}

TEST(ModelConfig, LinearNeedsFlatInputAndLastLayerNeedsClasses) {
  ModelConfig c = preset("mlp");
  c.layers.erase(c.layers.begin());  // no flatten
  EXPECT_NE(validate_layers(c)[0].find("flatten"), std::string::npos);
  ModelConfig d = preset("mlp");
  d.layers.back().out_features = 7;
  EXPECT_NE(validate_layers(d).back().find("10 class scores"), std::string::npos);
  EXPECT_THROW(plan_model(d), ConfigError);
}

// A key that is no setting of a layer (or of a setup's "train") is refused, naming the known ones
// and the likely one, where it left the layer at its default without a word.
TEST(ModelConfig, UnknownKeysAreRefusedWithTheNearestKnownOne) {
  const auto refusal = [](const std::string& text) {
    try {
      experiment_from_json(nlohmann::json::parse(text));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("taken");
  };
  EXPECT_EQ(refusal(R"({"layers": [{"type": "flatten"}, {"type": "linear", "out_feature": 10}]})"),
            "layer 2: unknown key \"out_feature\" (did you mean \"out_features\"?); the known keys "
            "are bias, kernel, name, out_channels, out_features, p, padding, stride, type");
  EXPECT_EQ(refusal(R"({"layers": [{"type": "relu", "colour": "red"}]})"),
            "layer 1: unknown key \"colour\"; the known keys are bias, kernel, name, out_channels, "
            "out_features, p, padding, stride, type");
  const std::string train = refusal(R"({"layers": [{"type": "flatten"}], "train": {"lr": 0.1,
      "learning_rate": 0.5}})");
  EXPECT_EQ(train.rfind("\"train\": unknown key \"learning_rate\" (did you mean \"lr\"?); the "
                        "known keys are batch, ",
                        0),
            0u)
      << train;
  EXPECT_EQ(nearest_name("epoch", {"batch", "epochs"}), "epochs");
  EXPECT_EQ(nearest_name("batch_size", {"batch", "epochs"}), "batch");
  EXPECT_EQ(nearest_name("weightdecay", {"weight_decay", "lr"}), "weight_decay");
  EXPECT_EQ(nearest_name("colour", {"bias", "p"}), "");
  // What gpulab writes reads back: every setting of a setup, and every layer of every preset.
  Experiment every;
  every.model = preset("lenet5");
  EXPECT_NO_THROW(experiment_from_json(experiment_to_json(every)));
}

// The convolution algorithm (--conv) in a setup and a record: written only when it is implicit,
// so the im2col path's files are as before; a file without it (every record older than the
// setting) reads as im2col; an unknown value is refused naming --conv.
TEST(ModelConfig, TheConvAlgorithmIsWrittenWhenImplicitAndReadAsIm2colWhenAbsent) {
  TrainOptions train;
  BackendOptions backend;
  EXPECT_FALSE(train_config_to_json(train, backend).contains("conv"));
  backend.conv = ConvAlgorithm::Implicit;
  const nlohmann::json written = train_config_to_json(train, backend);
  EXPECT_EQ(written["conv"], "implicit");
  BackendOptions read;
  train_config_from_json(written, train, read);
  EXPECT_EQ(read.conv, ConvAlgorithm::Implicit);
  EXPECT_NO_THROW(check_train_keys(written));
  BackendOptions old;
  old.conv = ConvAlgorithm::Implicit;
  train_config_from_json(nlohmann::json{{"batch", 32}}, train, old);
  EXPECT_EQ(old.conv, ConvAlgorithm::Implicit) << "an absent key keeps what was there";
  BackendOptions fresh;
  train_config_from_json(nlohmann::json{{"batch", 32}}, train, fresh);
  EXPECT_EQ(fresh.conv, ConvAlgorithm::Im2col);
  try {
    train_config_from_json(nlohmann::json{{"conv", "winograd"}}, train, fresh);
    ADD_FAILURE() << "conv: winograd was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--conv winograd: unknown; use im2col"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_conv("im2col"), ConvAlgorithm::Im2col);
  EXPECT_STREQ(conv_name(ConvAlgorithm::Implicit), "implicit");
}

// Two layers of one name trained and saved a checkpoint no reader could load (fc1.weight twice):
// refused before training, naming both layers.
TEST(ModelConfig, TwoLayersOfOneNameAreRefused) {
  ModelConfig c = preset("mlp");
  c.layers[1].name = "fc2";  // the first linear layer, named as the last one is by default
  EXPECT_EQ(validate_layers(c).back(),
            "its name \"fc2\" is layer 2's too; give each layer a name of its own");
  try {
    plan_model(c);
    ADD_FAILURE() << "planned";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is layer 2's too"), std::string::npos) << e.what();
  }
}

// A padding of 1024 made LeNet-5's first maps 6x2072x2072 (98 MiB an image): a run stepped for
// minutes and its record said "running" forever. Refused at once, naming the layer and the memory,
// in the check the window's layer table shows too.
TEST(ModelConfig, ALayerWhoseOutputTakesMoreMemoryThanALayerMayHaveIsRefused) {
  ModelConfig c = preset("lenet5");
  c.layers[0].padding = 1024;
  const std::string problem = validate_layers(c)[0];
  EXPECT_EQ(problem,
            "its output 6x2072x2072 takes 98.3 MiB of memory per image (12.3 GiB with its gradient "
            "at a batch of 64), more than the 64 MiB a layer may have per image; use less padding, "
            "a larger stride or fewer channels");
  try {
    plan_model(c);
    ADD_FAILURE() << "planned";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 1 (conv1): its output 6x2072x2072 takes 98.3 MiB"),
              std::string::npos)
        << e.what();
  }
  c.layers[0].padding = 100;  // 6x224x224, 1.1 MiB an image: a slow model, not an impossible one
  EXPECT_NO_THROW(plan_model(c));
}

// A pooling stride of 0 was taken as "the kernel's" without a word.
TEST(ModelConfig, AStrideOfZeroIsRefusedNamingTheField) {
  for (const char* type : {"maxpool2d", "conv2d"}) {
    const nlohmann::json j = {{"layers",
                               {{{"type", "conv2d"}, {"out_channels", 2}, {"kernel", 3}},
                                {{"type", type}, {"kernel", 2}, {"stride", 0}, {"out_channels", 2}},
                                {{"type", "flatten"}},
                                {{"type", "linear"}, {"out_features", 10}}}}};
    try {
      model_from_json(j);
      ADD_FAILURE() << type << ": a stride of 0 was taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("\"stride\""), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("from 1"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

// 100,000 layers made the window's layer table unusable for minutes: a model has at most 1,000.
TEST(ModelConfig, AModelOfMoreThanAThousandLayersIsRefused) {
  nlohmann::json layers = nlohmann::json::array();
  for (int i = 0; i < 998; ++i) layers.push_back({{"type", "relu"}});
  layers.push_back({{"type", "flatten"}});
  layers.push_back({{"type", "linear"}, {"out_features", 10}});
  EXPECT_EQ(model_from_json({{"layers", layers}}).layers.size(), 1000u);
  layers.insert(layers.begin(), {{"type", "relu"}});
  try {
    model_from_json({{"layers", layers}});
    ADD_FAILURE() << "1,001 layers were taken";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "\"layers\" holds 1001 layers; a model has at most 1000");
  }
}

TEST(ModelConfig, JsonRoundTripAndErrors) {
  for (const auto& name : preset_names()) {
    const ModelConfig c = preset(name);
    const ModelConfig back = model_from_json(model_to_json(c));
    EXPECT_EQ(model_to_json(back), model_to_json(c)) << name;
  }
  EXPECT_THROW(model_from_json(nlohmann::json::parse(R"({"layers":[{"type":"conv3d"}]})")), ConfigError);
  EXPECT_THROW(model_from_json(nlohmann::json::parse(R"({"nolayers":1})")), ConfigError);
  try {
    load_model("no-such-model");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pytorch-example"), std::string::npos);
  }
}

TEST(ModelConfig, LoadsModelFile) {
  test::TempDir dir;
  const auto path = dir.path() / "model.json";
  std::ofstream(path) << R"({"name":"tiny","layers":[{"type":"flatten"},{"type":"linear","out_features":10}]})";
  const ModelConfig c = load_model(path.string());
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(plan_model(c).parameter_count, 7850);
  std::ofstream(dir.path() / "bad.json") << "{ not json";
  EXPECT_THROW(load_model((dir.path() / "bad.json").string()), ConfigError);
}

TEST(ModelConfig, DropoutOverride) {
  ModelConfig c = preset("pytorch-example");
  override_dropout(c, 0.0f);
  for (const auto& l : c.layers) {
    if (l.type == LayerType::Dropout) {
      EXPECT_EQ(l.p, 0.0f);
    }
  }
  EXPECT_THROW(override_dropout(c, 1.0f), ConfigError);
}

TEST(Init, PyTorchDefaultBoundsAndDeterminism) {
  const ModelPlan plan = plan_model(preset("lenet5"));
  std::vector<float> a(plan.parameter_count), b(plan.parameter_count), c(plan.parameter_count);
  init_parameters(a, plan, 7);
  init_parameters(b, plan, 7);
  init_parameters(c, plan, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (const auto& p : plan.parameters) {
    // fan_in: conv1 1*5*5, conv2 6*5*5, fc1 400, ...; weight and bias share the bound.
    const auto& w = p.shape.size() == 1 ? (&p - 1)->shape : p.shape;
    int64_t fan_in = 1;
    for (size_t d = 1; d < w.size(); ++d) fan_in *= w[d];
    const float bound = 1.0f / std::sqrt(float(fan_in));
    float max_abs = 0;
    for (int64_t i = 0; i < p.numel(); ++i) max_abs = std::max(max_abs, std::abs(a[p.offset + i]));
    EXPECT_LE(max_abs, bound) << p.name;
    EXPECT_GT(max_abs, 0.5f * bound) << p.name;
  }
}

// The whole network's gradient against finite differences of its loss, with the reference
// kernels: checks the wiring between layers (aliasing, accumulation, the loss's scaling).
TEST(CpuNetwork, GradientMatchesFiniteDifferences) {
  ModelConfig c;
  c.input = {1, 8, 8};
  c.classes = 3;
  c.layers = model_from_json(nlohmann::json::parse(R"({"layers": [
      {"type": "conv2d", "out_channels": 2, "kernel": 3, "padding": 1}, {"type": "tanh"},
      {"type": "maxpool2d", "kernel": 2}, {"type": "flatten"},
      {"type": "linear", "out_features": 5}, {"type": "relu"},
      {"type": "linear", "out_features": 3}]})")).layers;
  const ModelPlan plan = plan_model(c);
  CpuNetwork net(plan, 4, CpuKernels::Reference);
  init_parameters(net.parameters(), plan, 3);
  std::vector<float> images(4 * 64);
  for (size_t i = 0; i < images.size(); ++i) images[i] = std::sin(0.37f * float(i));
  const std::vector<uint8_t> labels = {0, 2, 1, 2};
  net.forward(images.data(), labels.data(), 4, true, 1, 1);
  net.backward();
  const std::vector<float> analytic(net.gradients().begin(), net.gradients().end());
  auto loss_at = [&] {
    return net.forward(images.data(), labels.data(), 4, false, 0, 0).loss_sum / 4.0;
  };
  const double eps = 1e-2;
  for (size_t i = 0; i < analytic.size(); i += 7) {
    float& w = net.parameters()[i];
    const float saved = w;
    w = saved + float(eps);
    const double up = loss_at();
    w = saved - float(eps);
    const double down = loss_at();
    w = saved;
    const double numeric = (up - down) / (2 * eps);
    EXPECT_NEAR(analytic[i], numeric, 2e-3 + 2e-2 * std::abs(numeric)) << "parameter " << i;
  }
}

double normalized_error(std::span<const float> a, std::span<const float> b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm > 0 ? diff / norm : diff;
}

TEST(CpuNetwork, FastMatchesReferenceOnEveryPreset) {
  for (const auto& name : preset_names()) {
    const ModelPlan plan = plan_model(preset(name));
    CpuNetwork fast(plan, 3, CpuKernels::Fast), slow(plan, 3, CpuKernels::Reference);
    init_parameters(fast.parameters(), plan, 11);
    init_parameters(slow.parameters(), plan, 11);
    const data::ImageSet set = test::synthetic_set(3, 5);
    std::vector<float> images(3 * 784);
    data::normalize_pixels(images.data(), set.pixels.data(), images.size());
    const LossStats a = fast.forward(images.data(), set.labels.data(), 3, true, 9, 4);
    const LossStats b = slow.forward(images.data(), set.labels.data(), 3, true, 9, 4);
    EXPECT_NEAR(a.loss_sum, b.loss_sum, 1e-4 * std::abs(b.loss_sum)) << name;
    fast.backward();
    slow.backward();
    EXPECT_LE(normalized_error(fast.gradients(), slow.gradients()), 1e-9) << name;
  }
}

}  // namespace
}  // namespace gpulab
