// A trained model read back from a checkpoint, and its class probabilities for images: what
// `gpulab-cli eval` and `predict` (and the window's Inside tab) run the model with.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/model/model_config.hpp"

namespace gpulab {

class CpuNetwork;
struct Checkpoint;
struct RunData;

struct ModelWeights {
  std::string source;  // the checkpoint it came from, for messages
  ModelConfig config;
  ModelPlan plan;
  std::vector<float> params;  // (plan.parameter_count)
};

// The checkpoint's weights under `model_flag`'s config (a preset or FILE.json), or, where that is
// empty, the config stored in the checkpoint's metadata. Throws ConfigError when there is none,
// CheckpointError when the file or its tensors do not fit.
ModelWeights load_model_weights(const std::filesystem::path& weights,
                                const std::string& model_flag);
// The same for a checkpoint already read; `source` names it in messages.
ModelWeights model_weights(const Checkpoint& checkpoint, const std::string& model_flag,
                           const std::string& source);

// What predict, the drawn digit and the Inside tab feed a model: one 28x28 grayscale digit.
inline constexpr ActivationShape kDigitShape{1, 28, 28};

// Throws ConfigError unless `model` takes images of `fed`, the shape a consumer feeds it, naming
// both: "W.safetensors: the model takes 1x4x4 images, but classifying a digit needs 1x28x28; ...".
// `consumer` names who feeds it. The Classifier and every layer walk of a loaded model check here.
void check_model_input(const ModelWeights& model, const ActivationShape& fed,
                       const std::string& consumer);

// The weights a run saved: run.json's "weights" (as written, else in the run folder by its
// name), else weights.safetensors in the run folder; none when neither is there.
std::optional<std::filesystem::path> run_weights(const RunData& run);

// Softmax probabilities (count, classes) of the model for `count` images of 28x28 bytes
// (count, 784), white ink on black as in MNIST, normalized as in training. CPU forward passes of
// up to `batch` images at a time.
std::vector<float> class_probabilities(const ModelWeights& model, std::span<const uint8_t> pixels,
                                       int count, int batch = 256);

// The same with the CPU network built once and kept: building it allocates every layer's buffers,
// which takes longer than a forward pass of one image, so a caller classifying again and again
// (the window's drawn digit) keeps one. `model` must outlive it. Throws ConfigError when the model
// does not take 1x28x28 images (check_model_input).
class Classifier {
 public:
  Classifier(const ModelWeights& model, int batch);
  ~Classifier();
  std::vector<float> probabilities(std::span<const uint8_t> pixels, int count);

 private:
  const ModelWeights& model_;
  int batch_;
  std::unique_ptr<CpuNetwork> network_;
  std::vector<float> images_;
  std::vector<uint8_t> no_labels_;
};

// out (classes) = the softmax of logits (classes), shifted by their largest so exp() stays finite.
void softmax(float* out, const float* logits, int classes);

// The first class of the highest probability in one row of `classes` probabilities.
int predicted_class(const float* probabilities, int classes);

}  // namespace gpulab
