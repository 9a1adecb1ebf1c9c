// gpulab-cli opening a trained model up: eval's confusion matrix and mistakes (--confusion,
// --mistakes) and `predict`, the model's digit for pictures of any size and colour.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/inside/model_weights.hpp"

namespace gpulab::cli {

struct InsideEvalFlags {
  std::string confusion;  // FILE.csv: the confusion matrix
  std::string mistakes;   // DIR: a PNG per misclassified image and index.csv
  bool force = false;     // --force: --confusion may replace a file that is not gpulab's CSV
  bool any() const { return !confusion.empty() || !mistakes.empty(); }
};
void add_inside_eval_options(CLI::App& eval, InsideEvalFlags& flags);

// Before any work: throws ConfigError naming the flag when an output would overwrite one of
// `inputs` or a run's file, a folder holds other files, or PNG files cannot be written here.
void check_inside_outputs(const InsideEvalFlags& flags,
                          const std::vector<std::filesystem::path>& inputs);
// The confusion matrix of `model` on `test` and the files the flags ask for; prints the
// per-class accuracy and what it wrote.
void write_inside_outputs(const InsideEvalFlags& flags, const ModelWeights& model,
                          const data::ImageSet& test, int batch);

struct PredictFlags {
  std::string weights, model;
  std::vector<std::string> images;
  std::string format = "text";
};
CLI::App* add_predict_command(CLI::App& app, PredictFlags& flags);
// 0 when every picture was predicted; 1 when some could not be read (each named on stderr, the
// others still predicted).
int run_predict(const PredictFlags& flags);

}  // namespace gpulab::cli
