// eval --confusion/--mistakes and predict: the model's own probabilities (engine/inside), written
// as CSV and PNG files that are checked before any work and replaced atomically.
#include "app/cli_inside.hpp"

#include <cstdio>
#include <regex>

#include "app/cli_png.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/text.hpp"
#include "engine/inside/confusion.hpp"
#include "engine/inside/digit_image.hpp"
#include "engine/records/output_paths.hpp"

namespace gpulab::cli {
namespace fs = std::filesystem;

namespace {

constexpr int kMistakeScale = 4;  // 28x28 drawn as 112x112, big enough to look at

std::string mistake_file_name(const Mistake& m) {
  char name[64];
  std::snprintf(name, sizeof name, "%05d_true%d_pred%d.png", m.index, m.truth, m.predicted);
  return name;
}

// This command's files, and the temporaries beside them that an earlier, killed gpulab left.
bool is_mistakes_file(const std::string& name) {
  static const std::regex ours(
      R"(([0-9]+_true[0-9]+_pred[0-9]+\.png|index\.csv)(\.[0-9]+-[0-9]+\.tmp)?)");
  return std::regex_match(name, ours);
}

std::string probability(float p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", p);
  return text;
}

// The new set is made in a folder beside the old one and swapped in: a kill leaves the old set
// or the new one, whole, and never a folder the next run refuses.
void write_mistakes(const fs::path& dir, const Confusion& confusion, const data::ImageSet& test) {
  replace_folder_atomically(dir, [&](const fs::path& staging) {
    std::string index = "file,test_index,true,predicted,p_predicted,p_true\n";
    for (const Mistake& m : confusion.mistakes) {
      const std::string name = mistake_file_name(m);
      const std::span<const uint8_t> pixels(test.pixels.data() + size_t(m.index) * 784, 784);
      write_file_atomically(staging / name, encode_png_gray(pixels, 28, 28, kMistakeScale));
      index += name + "," + std::to_string(m.index) + "," + std::to_string(m.truth) + "," +
               std::to_string(m.predicted) + "," + probability(m.p_predicted) + "," +
               probability(m.p_truth) + "\n";
    }
    write_file_atomically(staging / "index.csv", index);
  });
}

}  // namespace

void add_inside_eval_options(CLI::App& eval, InsideEvalFlags& flags) {
  eval.add_option("--confusion", flags.confusion,
                  "write the confusion matrix on the test set to FILE.csv (a row per true "
                  "label, a column per prediction)");
  eval.add_option("--mistakes", flags.mistakes,
                  "write every misclassified test image to DIR as a PNG, with index.csv");
  eval.add_flag("--force", flags.force,
                "let --confusion replace a file that is no confusion matrix of gpulab's");
}

void check_inside_outputs(const InsideEvalFlags& flags, const std::vector<fs::path>& inputs) {
  if (!flags.confusion.empty())
    check_output_file(flags.confusion, "--confusion", confusion_csv_kind(), flags.force, inputs);
  if (!flags.mistakes.empty()) {
    if (const std::string why = png_unavailable_reason(); !why.empty())
      throw ConfigError("--mistakes " + flags.mistakes + ": " + why);
    // A folder holding anything but earlier mistakes (the inputs among them) is refused.
    check_output_folder(flags.mistakes, "--mistakes", is_mistakes_file);
  }
}

void write_inside_outputs(const InsideEvalFlags& flags, const ModelWeights& model,
                          const data::ImageSet& test, int batch) {
  const Confusion confusion = confusion_matrix(model, test, batch);
  std::printf("per-class accuracy:");
  const std::vector<double> per_class = confusion.class_accuracy();
  for (size_t c = 0; c < per_class.size(); ++c) std::printf(" %zu %.2f%%", c, 100 * per_class[c]);
  std::printf("\n");
  if (!flags.confusion.empty()) {
    write_file_atomically(flags.confusion, confusion_csv(confusion));
    std::printf("wrote %s (confusion matrix: %lld images, %lld correct)\n", flags.confusion.c_str(),
                static_cast<long long>(confusion.total()),
                static_cast<long long>(confusion.correct()));
  }
  if (!flags.mistakes.empty()) {
    write_mistakes(flags.mistakes, confusion, test);
    std::printf("wrote %s (%zu misclassified images and index.csv)\n", flags.mistakes.c_str(),
                confusion.mistakes.size());
  }
}

CLI::App* add_predict_command(CLI::App& app, PredictFlags& flags) {
  CLI::App* predict =
      app.add_subcommand("predict",
                         "the digit a model sees in PNG pictures of any size, white "
                         "on black or black on white");
  predict->add_option("--weights", flags.weights, "FILE.safetensors")
      ->required()
      ->check(CLI::ExistingFile);
  predict->add_option("--model", flags.model,
                      "preset or FILE.json (default: the config in the file)");
  predict->add_option("--format", flags.format, "text|csv: a line per picture, or CSV rows")
      ->check(CLI::IsMember({"text", "csv"}))
      ->capture_default_str();
  predict->add_option("images", flags.images, "IMAGE.png...")->required()->expected(1, -1);
  return predict;
}

int run_predict(const PredictFlags& flags) {
  if (const std::string why = png_unavailable_reason(); !why.empty())
    throw ConfigError("predict: " + why);
  const ModelWeights model = load_model_weights(flags.weights, flags.model);
  // Every picture that can be read, preprocessed; each one that cannot is named and skipped.
  std::vector<std::string> names;
  std::vector<uint8_t> digits;
  int failed = 0;
  for (const std::string& file : flags.images) {
    try {
      const std::vector<uint8_t> digit = mnist_digit(read_png_gray(file));
      digits.insert(digits.end(), digit.begin(), digit.end());
      names.push_back(file);
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "gpulab-cli: %s\n", e.what());
      ++failed;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "gpulab-cli: %s: %s\n", file.c_str(), e.what());
      ++failed;
    }
  }
  const int classes = model.plan.layers.back().output.channels;
  const std::vector<float> probabilities =
      names.empty() ? std::vector<float>{} : class_probabilities(model, digits, int(names.size()));
  const bool csv = flags.format == "csv";
  if (csv) {
    std::printf("file,class");
    for (int c = 0; c < classes; ++c) std::printf(",p%d", c);
    std::printf("\n");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const float* row = probabilities.data() + i * size_t(classes);
    const int predicted = predicted_class(row, classes);
    if (csv) {
      std::printf("%s,%d", csv_field(names[i]).c_str(), predicted);
      for (int c = 0; c < classes; ++c) std::printf(",%s", probability(row[c]).c_str());
    } else {
      std::printf("%s: %d (p %.1f%%)", names[i].c_str(), predicted, 100 * row[predicted]);
      for (int c = 0; c < classes; ++c) std::printf(" %d:%.4f", c, row[c]);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  return failed == 0 ? 0 : 1;
}

}  // namespace gpulab::cli
