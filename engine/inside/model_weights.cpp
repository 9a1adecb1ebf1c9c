// Checkpoint plus config into a runnable model, and the model's probabilities on the CPU.
#include "engine/inside/model_weights.hpp"

#include <algorithm>
#include <cmath>

#include "datasets/mnist.hpp"
#include "engine/base/errors.hpp"
#include "engine/cpu/cpu_network.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

ModelWeights load_model_weights(const std::filesystem::path& weights,
                                const std::string& model_flag) {
  return model_weights(load_checkpoint(weights), model_flag, weights.string());
}

ModelWeights model_weights(const Checkpoint& checkpoint, const std::string& model_flag,
                           const std::string& source) {
  ModelWeights model;
  if (!model_flag.empty()) {
    model.config = load_model(model_flag);
  } else if (auto stored = checkpoint.model()) {
    model.config = *stored;
  } else {
    throw ConfigError(source + " holds no gpulab model config; pass --model PRESET|FILE.json");
  }
  model.source = source;
  model.plan = plan_model(model.config);
  // Before allocating: a 300-byte file whose metadata declares a layer of 2,000,000 features is
  // refused from its tensors, not after taking 6 GB for the parameters.
  check_checkpoint_fits(checkpoint, model.plan, source);
  model.params.resize(size_t(model.plan.parameter_count));
  apply_checkpoint(checkpoint, model.plan, model.params, source);
  return model;
}

void check_model_input(const ModelWeights& model, const ActivationShape& fed,
                       const std::string& consumer) {
  const ActivationShape input = model.plan.layers.front().input;
  if (input == fed) return;
  throw ConfigError((model.source.empty() ? "the model" : model.source + ": the model") +
                    " takes " + shape_text(input) + " images, but " + consumer + " needs " +
                    shape_text(fed) + "; use a model made for " + shape_text(fed) + " images");
}

void softmax(float* out, const float* logits, int classes) {
  const float shift = *std::max_element(logits, logits + classes);
  float sum = 0;
  for (int c = 0; c < classes; ++c) sum += out[c] = std::exp(logits[c] - shift);
  for (int c = 0; c < classes; ++c) out[c] /= sum;
}

std::optional<std::filesystem::path> run_weights(const RunData& run) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto is_file = [&](const fs::path& path) { return fs::is_regular_file(path, error); };
  if (auto named = run.info.find("weights"); named != run.info.end() && named->is_string()) {
    const fs::path path = named->get<std::string>();
    if (is_file(path)) return path;
    if (is_file(run.dir / path.filename())) return run.dir / path.filename();  // moved with it
  }
  if (is_file(run.dir / "weights.safetensors")) return run.dir / "weights.safetensors";
  return std::nullopt;
}

int predicted_class(const float* probabilities, int classes) {
  return int(std::max_element(probabilities, probabilities + classes) - probabilities);
}

namespace {

// The model, once it is known to take the digits a Classifier feeds it: checked before any
// buffer is sized from it (a 1x4x4 model took 64-byte blocks that 784 pixels overflowed).
const ModelWeights& digit_model(const ModelWeights& model) {
  check_model_input(model, kDigitShape, "classifying a digit");
  return model;
}

}  // namespace

Classifier::Classifier(const ModelWeights& model, int batch)
    : model_(digit_model(model)),
      batch_(std::max(1, batch)),
      network_(std::make_unique<CpuNetwork>(model.plan, batch_)),
      images_(size_t(batch_) * model.plan.layers.front().input.size()),
      no_labels_(size_t(batch_), 0) {  // the loss is computed and ignored
  std::copy(model.params.begin(), model.params.end(), network_->parameters().begin());
}

Classifier::~Classifier() = default;

std::vector<float> Classifier::probabilities(std::span<const uint8_t> pixels, int count) {
  constexpr size_t kImageSize = size_t(kDigitShape.size());
  if (pixels.size() != size_t(count) * kImageSize)
    throw std::invalid_argument("class_probabilities: " + std::to_string(pixels.size()) +
                                " bytes are not " + std::to_string(count) + " 28x28 images");
  const int classes = model_.plan.layers.back().output.channels;
  std::vector<float> probabilities(size_t(count) * classes);
  for (int first = 0; first < count; first += batch_) {
    const int n = std::min(batch_, count - first);
    data::normalize_pixels(images_.data(), pixels.data() + size_t(first) * kImageSize,
                           size_t(n) * kImageSize);
    network_->forward(images_.data(), no_labels_.data(), n, false, 0, 0);
    const std::span<const float> logits = network_->logits();
    for (int i = 0; i < n; ++i)
      softmax(probabilities.data() + size_t(first + i) * classes,
              logits.data() + size_t(i) * classes, classes);
  }
  return probabilities;
}

std::vector<float> class_probabilities(const ModelWeights& model, std::span<const uint8_t> pixels,
                                       int count, int batch) {
  Classifier classifier(model, std::min(batch, std::max(count, 1)));
  return classifier.probabilities(pixels, count);
}

}  // namespace gpulab
