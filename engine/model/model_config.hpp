// engine/model: what a model is, apart from where it runs: its layers (configuration, presets,
// shape inference), the layer walk every backend shares (layer_stack.hpp), initialization,
// optimizer settings and safetensors checkpoints. Over engine/base and the CPU kernels.
//
// Model configurations: a list of layers read from JSON or taken from a preset, with the shape
// inference that validates them and names every parameter as PyTorch would.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpulab {

enum class LayerType { Conv2d, MaxPool2d, ReLU, Tanh, Dropout, Flatten, Linear };

const char* layer_type_name(LayerType type);

struct LayerSpec {
  LayerType type = LayerType::ReLU;
  std::string name;        // PyTorch-style name (conv1, fc2, dropout1); derived when empty
  int out_channels = 0;    // Conv2d
  int kernel = 0;          // Conv2d, MaxPool2d
  int stride = 1;          // Conv2d, MaxPool2d (MaxPool2d defaults to its kernel)
  int padding = 0;         // Conv2d
  int out_features = 0;    // Linear
  bool bias = true;        // Conv2d, Linear
  float p = 0.5f;          // Dropout
};

// (C, H, W); a flat vector is (F, 1, 1).
struct ActivationShape {
  int channels = 0, height = 0, width = 0;
  constexpr int64_t size() const { return int64_t(channels) * height * width; }
  bool operator==(const ActivationShape&) const = default;
};

std::string shape_text(const ActivationShape& shape);  // "1x28x28"

struct ParameterInfo {
  std::string name;           // "conv1.weight"
  std::vector<int64_t> shape; // PyTorch layout: conv [out,in,kh,kw], linear [out,in], bias [out]
  int64_t offset = 0;         // in floats, into the model's flat parameter buffer
  int64_t numel() const;
};

// What shape inference found for one layer, for display and for building the model.
struct LayerInfo {
  LayerSpec spec;             // with the name and defaults filled in
  ActivationShape input, output;
  int64_t parameter_count = 0;
};

struct ModelConfig {
  std::string name = "custom";
  ActivationShape input{1, 28, 28};
  int classes = 10;
  std::vector<LayerSpec> layers;
};

struct ModelPlan {
  std::vector<LayerInfo> layers;
  std::vector<ParameterInfo> parameters;
  int64_t parameter_count = 0;
};

// Infers every layer's shape and names its parameters. Throws ConfigError naming the layer
// (index and name) and what does not fit.
ModelPlan plan_model(const ModelConfig& config);

// A lower bound of the memory training `plan` takes, in bytes: each replica's parameters and
// gradients, the optimizer's two moments, and every layer's output and its gradient for each
// image of the batch (the replicas share the batch).
int64_t training_memory_bytes(const ModelPlan& plan, int batch, int replicas = 1);

// Per layer: an empty string where the layer is valid, else the problem, so an editor can show
// every problem at once. Layers after the first invalid one are checked with a best guess.
std::vector<std::string> validate_layers(const ModelConfig& config);

// Every layer's inferred shapes and parameter count beside its problem (empty where it fits), for
// an editor that shows them as the layers are edited. Never throws.
struct LayerCheck {
  LayerInfo info;
  std::string problem;
};
std::vector<LayerCheck> check_layers(const ModelConfig& config);

std::vector<std::string> preset_names();
bool is_preset(const std::string& name);
ModelConfig preset(const std::string& name);  // throws ConfigError listing the presets

ModelConfig model_from_json(const nlohmann::json& j);  // throws ConfigError
nlohmann::json model_to_json(const ModelConfig& config);
// A preset name, or a path to a JSON file with a model config.
ModelConfig load_model(const std::string& preset_or_file);

// Sets p on every dropout layer (the CLI's --dropout); p == 0 keeps the layers as identities.
void override_dropout(ModelConfig& config, float p);

}  // namespace gpulab
