// engine/inside: the confusion matrix and mistakes of a trained model agree with the CPU
// backend's evaluation, and pictures of digits at any size and colour come back as the 28x28
// images MNIST's were.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <numeric>

#include "digit_glyphs.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/inside/confusion.hpp"
#include "engine/inside/digit_image.hpp"
#include "engine/model/init.hpp"
#include "engine/records/run_record.hpp"
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

}  // namespace
}  // namespace gpulab
