// Model configurations: presets, JSON reading and writing, and shape inference.
#include "engine/model/model_config.hpp"

#include <climits>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/base/bounds.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "io/input_file.hpp"

namespace gpulab {

std::string shape_text(const ActivationShape& s) {
  return std::to_string(s.channels) + "x" + std::to_string(s.height) + "x" +
         std::to_string(s.width);
}

namespace {

using json = nlohmann::json;

const std::map<std::string, LayerType>& layer_types() {
  static const std::map<std::string, LayerType> types = {
      {"conv2d", LayerType::Conv2d},   {"maxpool2d", LayerType::MaxPool2d},
      {"relu", LayerType::ReLU},       {"tanh", LayerType::Tanh},
      {"dropout", LayerType::Dropout}, {"flatten", LayerType::Flatten},
      {"linear", LayerType::Linear}};
  return types;
}

std::string layer_label(size_t index, const LayerSpec& spec) {
  return "layer " + std::to_string(index + 1) + " (" + spec.name + ")";
}

// Fills in PyTorch-style names: conv1, conv2, ... fc1, fc2, ... dropout1, ... counted per kind.
std::vector<LayerSpec> named_layers(const std::vector<LayerSpec>& layers) {
  std::map<std::string, int> counters;
  std::vector<LayerSpec> named = layers;
  for (auto& spec : named) {
    const char* prefix = nullptr;
    switch (spec.type) {
      case LayerType::Conv2d: prefix = "conv"; break;
      case LayerType::Linear: prefix = "fc"; break;
      case LayerType::Dropout: prefix = "dropout"; break;
      case LayerType::MaxPool2d: prefix = "pool"; break;
      case LayerType::ReLU: prefix = "relu"; break;
      case LayerType::Tanh: prefix = "tanh"; break;
      case LayerType::Flatten: prefix = "flatten"; break;
    }
    const int number = ++counters[prefix];
    if (spec.name.empty()) spec.name = prefix + std::to_string(number);
    if (spec.type == LayerType::MaxPool2d && spec.stride <= 0) spec.stride = spec.kernel;
  }
  return named;
}

// Far beyond any model an image of 28x28 pixels needs, and within the int sizes of the kernels:
// a padding of 1e9 overflowed into a request for more memory than a vector can hold.
constexpr int kMaxPadding = 1024;
// A config of a thousand layers is some 100 KB.
constexpr std::uintmax_t kMaxModelFileBytes = std::uintmax_t(16) << 20;
// The memory one layer's output may take per image. MNIST's models need far less (the widest
// preset layer holds 25,088 values, 98 KiB); a padding of 1024 on a 28x28 image made 6 feature
// maps of 2072x2072, 98 MiB an image and 12 GiB with their gradients at a batch of 64, and a run
// that stepped for minutes without ending.
constexpr int64_t kMaxActivationBytesPerImage = int64_t(64) << 20;
// The deepest preset, vgg-small, has 18 layers; a model of 100,000 made the window's layer table
// and every per-layer view unusable for minutes. A thousand is far beyond anything MNIST needs.
constexpr size_t kMaxLayers = 1000;

// Infers one layer's output; returns the problem, or an empty string when the layer fits.
std::string infer_layer(LayerInfo& info) {
  const LayerSpec& s = info.spec;
  const ActivationShape in = info.input;
  ActivationShape& out = info.output;
  out = in;
  info.parameter_count = 0;
  switch (s.type) {
    case LayerType::Conv2d: {
      if (s.out_channels < 1) return "out_channels must be at least 1";
      if (s.kernel < 1) return "kernel must be at least 1";
      if (s.stride < 1) return "stride must be at least 1";
      if (s.padding < 0) return "padding must not be negative";
      if (s.padding > kMaxPadding)
        return "padding " + std::to_string(s.padding) + " is more than " +
               std::to_string(kMaxPadding) + " pixels a side; use less";
      if (in.height + 2 * s.padding < s.kernel || in.width + 2 * s.padding < s.kernel)
        return "kernel " + std::to_string(s.kernel) + "x" + std::to_string(s.kernel) +
               " is larger than its input " + shape_text(in) + " with padding " +
               std::to_string(s.padding);
      out.channels = s.out_channels;
      out.height = (in.height + 2 * s.padding - s.kernel) / s.stride + 1;
      out.width = (in.width + 2 * s.padding - s.kernel) / s.stride + 1;
      info.parameter_count =
          int64_t(s.out_channels) * in.channels * s.kernel * s.kernel + (s.bias ? s.out_channels : 0);
      return {};
    }
    case LayerType::MaxPool2d: {
      if (s.kernel < 1) return "kernel must be at least 1";
      if (s.stride < 1) return "stride must be at least 1";
      if (in.height < s.kernel || in.width < s.kernel)
        return "pool kernel " + std::to_string(s.kernel) + " is larger than its input " +
               shape_text(in);
      out.height = (in.height - s.kernel) / s.stride + 1;
      out.width = (in.width - s.kernel) / s.stride + 1;
      return {};
    }
    case LayerType::Dropout:
      if (!(s.p >= 0.0f && s.p < 1.0f)) return "dropout p must be in [0, 1)";
      return {};
    case LayerType::ReLU:
    case LayerType::Tanh:
      return {};
    case LayerType::Flatten:
      out = {static_cast<int>(in.size()), 1, 1};
      return {};
    case LayerType::Linear:
      if (s.out_features < 1) return "out_features must be at least 1";
      if (in.height != 1 || in.width != 1)
        return "input " + shape_text(in) + " is not flat: add a flatten layer before it";
      out = {s.out_features, 1, 1};
      info.parameter_count = int64_t(s.out_features) * in.channels + (s.bias ? s.out_features : 0);
      return {};
  }
  return "unknown layer type";
}

struct Inference {
  std::vector<LayerInfo> layers;
  std::vector<std::string> problems;
};

Inference infer(const ModelConfig& config) {
  Inference result;
  ActivationShape shape = config.input;
  std::map<std::string, size_t> numbers;  // layer names -> the first layer of that name, from 1
  for (const auto& spec : named_layers(config.layers)) {
    LayerInfo info;
    info.spec = spec;
    info.input = shape;
    std::string problem = infer_layer(info);
    // A checkpoint names weights by their layer (fc1.weight): two of one name save a file no
    // reader can load.
    if (const auto [first, added] = numbers.emplace(spec.name, result.layers.size() + 1);
        !added && problem.empty())
      problem = "its name \"" + spec.name + "\" is layer " + std::to_string(first->second) +
                "'s too; give each layer a name of its own";
    if (const int64_t bytes = info.output.size() * int64_t(sizeof(float));
        problem.empty() && bytes > kMaxActivationBytesPerImage)
      problem = "its output " + shape_text(info.output) + " takes " + size_text(uint64_t(bytes)) +
                " of memory per image (" + size_text(uint64_t(bytes) * 2 * 64) +
                " with its gradient at a batch of 64), more than the " +
                size_text(kMaxActivationBytesPerImage) +
                " a layer may have per image; use less padding, a larger stride or fewer channels";
    if (!problem.empty()) info.output = shape;  // best guess to keep checking the rest
    result.problems.push_back(problem);
    shape = info.output;
    result.layers.push_back(info);
  }
  return result;
}

// A whole number of a model config, never wrapped or truncated (an input of 1.5 was 1, a layer
// of 4294967306 features 10): sizes are at least `least`, and an int holds them.
int whole_value(const json& value, const std::string& label, int least) {
  if (!value.is_number()) throw ConfigError(label + " must be a whole number, not " + value.dump());
  if (const std::string problem = Bound::whole_from(least, INT_MAX).problem(value);
      !problem.empty())
    throw ConfigError(label + ": " + problem);
  return value.get<int>();
}

int json_int(const json& j, const char* key, int fallback, int least = 0) {
  if (!j.contains(key)) return fallback;
  return whole_value(j[key], std::string("\"") + key + "\"", least);
}

}  // namespace

const char* layer_type_name(LayerType type) {
  for (const auto& [name, t] : layer_types())
    if (t == type) return name.c_str();
  return "unknown";
}

int64_t ParameterInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<std::string> validate_layers(const ModelConfig& config) {
  Inference inference = infer(config);
  if (!inference.layers.empty() && inference.problems.back().empty()) {
    const ActivationShape last = inference.layers.back().output;
    if (last.height != 1 || last.width != 1 || last.channels != config.classes)
      inference.problems.back() = "the last layer gives " + shape_text(last) + " but the model needs " +
                                  std::to_string(config.classes) + " class scores";
  }
  return inference.problems;
}

std::vector<LayerCheck> check_layers(const ModelConfig& config) {
  const Inference inference = infer(config);
  const std::vector<std::string> problems = validate_layers(config);
  std::vector<LayerCheck> checks;
  for (size_t i = 0; i < inference.layers.size(); ++i)
    checks.push_back({inference.layers[i], problems[i]});
  return checks;
}

int64_t training_memory_bytes(const ModelPlan& plan, int batch, int replicas) {
  int64_t activations = 0;
  for (const LayerInfo& layer : plan.layers)  // a flatten layer's output is its input's memory
    if (layer.spec.type != LayerType::Flatten) activations += layer.output.size();
  // Per replica its parameters and gradients; one optimizer's two moments; per image each
  // layer's output and its gradient.
  const int64_t floats =
      plan.parameter_count * (2 * int64_t(replicas) + 2) + 2 * int64_t(batch) * activations;
  return floats * int64_t(sizeof(float));
}

ModelPlan plan_model(const ModelConfig& config) {
  if (config.layers.empty()) throw ConfigError("the model has no layers");
  if (config.input.size() <= 0) throw ConfigError("the model input shape must be positive");
  Inference inference = infer(config);
  const std::vector<std::string> problems = validate_layers(config);
  for (size_t i = 0; i < problems.size(); ++i)
    if (!problems[i].empty())
      throw ConfigError("model \"" + config.name + "\": " + layer_label(i, inference.layers[i].spec) +
                        ": " + problems[i]);
  ModelPlan plan;
  plan.layers = inference.layers;
  int64_t offset = 0;
  for (const auto& info : plan.layers) {
    const LayerSpec& s = info.spec;
    auto add = [&](const std::string& suffix, std::vector<int64_t> shape) {
      ParameterInfo p{s.name + "." + suffix, std::move(shape), offset};
      offset += p.numel();
      plan.parameters.push_back(std::move(p));
    };
    if (s.type == LayerType::Conv2d) {
      add("weight", {s.out_channels, info.input.channels, s.kernel, s.kernel});
      if (s.bias) add("bias", {s.out_channels});
    } else if (s.type == LayerType::Linear) {
      add("weight", {s.out_features, info.input.channels});
      if (s.bias) add("bias", {s.out_features});
    }
  }
  plan.parameter_count = offset;
  return plan;
}

std::vector<std::string> preset_names() {
  return {"mlp", "lenet5", "pytorch-example", "tf-tutorial", "vgg-small", "fast-mnist"};
}

bool is_preset(const std::string& name) {
  for (const auto& n : preset_names())
    if (n == name) return true;
  return false;
}

ModelConfig preset(const std::string& name) {
  auto conv = [](int out, int k, int pad = 0) {
    LayerSpec s;
    s.type = LayerType::Conv2d;
    s.out_channels = out;
    s.kernel = k;
    s.padding = pad;
    return s;
  };
  auto linear = [](int out) {
    LayerSpec s;
    s.type = LayerType::Linear;
    s.out_features = out;
    return s;
  };
  auto pool = [] {
    LayerSpec s;
    s.type = LayerType::MaxPool2d;
    s.kernel = 2;
    s.stride = 2;
    return s;
  };
  auto dropout = [](float p) {
    LayerSpec s;
    s.type = LayerType::Dropout;
    s.p = p;
    return s;
  };
  auto simple = [](LayerType t) {
    LayerSpec s;
    s.type = t;
    return s;
  };
  const LayerSpec relu = simple(LayerType::ReLU), tanh = simple(LayerType::Tanh),
                  flatten = simple(LayerType::Flatten);
  ModelConfig c;
  c.name = name;
  if (name == "mlp") {
    c.layers = {flatten, linear(256), relu, linear(10)};
  } else if (name == "lenet5") {
    // LeCun et al. 1998 with max pooling; tanh as in the original.
    c.layers = {conv(6, 5, 2), tanh, pool(),      conv(16, 5), tanh,       pool(), flatten,
                linear(120),   tanh, linear(84), tanh,        linear(10)};
  } else if (name == "pytorch-example") {
    // PyTorch's examples/mnist/main.py Net.
    c.layers = {conv(32, 3),   relu, conv(64, 3),  relu, pool(), dropout(0.25f), flatten,
                linear(128),   relu, dropout(0.5f), linear(10)};
  } else if (name == "tf-tutorial") {
    // The TensorFlow "Deep MNIST for experts" CNN.
    c.layers = {conv(32, 5, 2), relu,    pool(),       conv(64, 5, 2), relu, pool(),
                flatten,        linear(1024), relu,    dropout(0.5f),  linear(10)};
  } else if (name == "vgg-small") {
    // VGG's pattern at MNIST's scale: 3x3 convolutions in pairs, 32-64-128 channels, a pool after
    // each stage. About 22 M multiply-adds per image on 288 k parameters, so a step is arithmetic
    // (what a GPU is for) rather than kernel launches.
    c.layers = {conv(32, 3, 1),  relu, conv(32, 3, 1), relu, pool(),
                conv(64, 3, 1),  relu, conv(64, 3, 1), relu, pool(),
                conv(128, 3, 1), relu, pool(),         flatten,
                linear(128),     relu, dropout(0.5f),  linear(10)};
  } else if (name == "fast-mnist") {
    // A small CNN for the race to 99.0% test accuracy in one epoch (Adam, one-cycle to lr 2.5e-3,
    // batch 32: resources/demos/race-to-99.json), chosen over seeds against other nets, batches
    // and rates (bench/results/fast_recipe-2026-11-29.md). About 2.6 M multiply-adds per image,
    // a fifth of pytorch-example's 12 M, on 225 k parameters.
    c.layers = {conv(32, 3), relu,    pool(),      conv(64, 3), relu,
                pool(),      flatten, linear(128), relu,        linear(10)};
  } else {
    std::string list;
    for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("unknown model preset \"" + name + "\"; the presets are " + list +
                      ", or give a path to a JSON model file");
  }
  return c;
}

ModelConfig model_from_json(const json& j) {
  try {
    if (!j.is_object()) throw ConfigError("a model config must be a JSON object");
    ModelConfig c;
    c.name = j.value("name", std::string("custom"));
    // The name is kept in run.json, which holds UTF-8 only, and labels charts.
    if (const std::string problem = name_problem(c.name); !problem.empty())
      throw ConfigError("\"name\" " + problem);
    if (j.contains("input")) {
      const auto& in = j["input"];
      if (!in.is_array() || in.size() != 3)
        throw ConfigError("\"input\" must be [channels, height, width]");
      c.input = {whole_value(in[0], "\"input\" channels", 1),
                 whole_value(in[1], "\"input\" height", 1),
                 whole_value(in[2], "\"input\" width", 1)};
    }
    c.classes = json_int(j, "classes", 10);
    if (!j.contains("layers") || !j["layers"].is_array())
      throw ConfigError("a model config needs \"layers\": a list of layer objects");
    if (j["layers"].size() > kMaxLayers)
      throw ConfigError("\"layers\" holds " + std::to_string(j["layers"].size()) +
                        " layers; a model has at most " + std::to_string(kMaxLayers));
    for (size_t i = 0; i < j["layers"].size(); ++i) {
      const json& l = j["layers"][i];
      const std::string where = "layer " + std::to_string(i + 1);
      if (!l.is_object() || !l.contains("type") || !l["type"].is_string())
        throw ConfigError(where + ": needs a \"type\" (conv2d, maxpool2d, relu, tanh, dropout, "
                                  "flatten, linear)");
      const std::string type = l["type"].get<std::string>();
      auto found = layer_types().find(type);
      if (found == layer_types().end())
        throw ConfigError(where + ": unknown type \"" + type +
                          "\"; known types: conv2d, maxpool2d, relu, tanh, dropout, flatten, linear");
      // A misspelt setting would otherwise leave the layer at its default without a word.
      static const std::vector<std::string> kLayerKeys = {"bias",         "kernel",       "name",
                                                          "out_channels", "out_features", "p",
                                                          "padding",      "stride",       "type"};
      for (const auto& [key, value] : l.items())
        if (const std::string problem = unknown_key_problem(key, kLayerKeys); !problem.empty())
          throw ConfigError(where + ": " + problem);
      LayerSpec s;
      s.type = found->second;
      s.name = l.value("name", std::string());
      if (const std::string problem = name_problem(s.name); !problem.empty())
        throw ConfigError(where + ": \"name\" " + problem);
      s.out_channels = json_int(l, "out_channels", 0);
      s.kernel = json_int(l, "kernel", s.type == LayerType::MaxPool2d ? 2 : 0);
      // A stride of 0 is no step at all: a pooling layer took it as "the kernel's" unsaid.
      s.stride = json_int(l, "stride", s.type == LayerType::MaxPool2d ? s.kernel : 1, 1);
      s.padding = json_int(l, "padding", 0);
      s.out_features = json_int(l, "out_features", 0);
      s.bias = l.value("bias", true);
      s.p = l.value("p", 0.5f);
      c.layers.push_back(s);
    }
    return c;
  } catch (const json::exception& e) {
    throw ConfigError(std::string("bad model config: ") + e.what());
  }
}

json model_to_json(const ModelConfig& c) {
  json layers = json::array();
  for (const auto& s : named_layers(c.layers)) {
    json l = {{"type", layer_type_name(s.type)}, {"name", s.name}};
    switch (s.type) {
      case LayerType::Conv2d:
        l.update({{"out_channels", s.out_channels}, {"kernel", s.kernel}, {"stride", s.stride},
                  {"padding", s.padding}, {"bias", s.bias}});
        break;
      case LayerType::MaxPool2d: l.update({{"kernel", s.kernel}, {"stride", s.stride}}); break;
      case LayerType::Dropout: l["p"] = s.p; break;
      case LayerType::Linear: l.update({{"out_features", s.out_features}, {"bias", s.bias}}); break;
      default: break;
    }
    layers.push_back(l);
  }
  return {{"name", c.name},
          {"input", {c.input.channels, c.input.height, c.input.width}},
          {"classes", c.classes},
          {"layers", layers}};
}

ModelConfig load_model(const std::string& preset_or_file) {
  if (is_preset(preset_or_file)) return preset(preset_or_file);
  // Through the one reader of input files: a FIFO is refused, never waited on.
  std::string text;
  try {
    if (!read_input_file(preset_or_file, kMaxModelFileBytes, "a model config", &text)) {
      std::string list;
      for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
      throw ConfigError("--model " + preset_or_file + ": not a preset (" + list +
                        ") and no such file");
    }
  } catch (const InputFileError& e) {
    throw ConfigError(std::string("--model ") + e.what());
  }
  if (const std::string bom = bom_problem(text); !bom.empty())  // else "not valid JSON"
    throw ConfigError(preset_or_file + ": " + bom);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(preset_or_file + ": not valid JSON: " + e.what());
  }
  try {
    ModelConfig c = model_from_json(j);
    plan_model(c);
    return c;
  } catch (const ConfigError& e) {
    throw ConfigError(preset_or_file + ": " + e.what());
  }
}

void override_dropout(ModelConfig& config, float p) {
  if (!(p >= 0.0f && p < 1.0f)) throw ConfigError("--dropout must be in [0, 1)");
  for (auto& layer : config.layers)
    if (layer.type == LayerType::Dropout) layer.p = p;
}

}  // namespace gpulab
