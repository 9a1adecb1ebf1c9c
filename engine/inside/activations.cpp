// Feature maps from the CPU network's own layer walk, filters viewed in the parameters, and one
// output value recomputed as the reference kernels compute it.
#include "engine/inside/activations.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "datasets/mnist.hpp"
#include "engine/cpu/cpu_network.hpp"

namespace gpulab {
namespace {

const ParameterInfo* find_parameter(const ModelPlan& plan, const std::string& name) {
  for (const ParameterInfo& p : plan.parameters)
    if (p.name == name) return &p;
  return nullptr;
}

std::span<const float> parameter_values(const ModelWeights& model, const ParameterInfo* p) {
  if (p == nullptr) return {};
  return std::span<const float>(model.params).subspan(size_t(p->offset), size_t(p->numel()));
}

void check_index(const char* what, int value, int count, const LayerInfo& layer) {
  if (value < 0 || value >= count)
    throw std::invalid_argument("explain_output: " + std::string(what) + " " +
                                std::to_string(value) + " is outside 0.." +
                                std::to_string(count - 1) + " of layer " + layer.spec.name);
}

// The shape a linear layer's flat input had before a flatten (dropouts between change nothing),
// so its weights can be shown over the feature maps they read; else the flat shape.
ActivationShape unflattened_input(const ModelPlan& plan, int layer) {
  const ActivationShape flat = plan.layers[size_t(layer)].input;
  for (int j = layer - 1; j >= 0; --j) {
    const LayerInfo& before = plan.layers[size_t(j)];
    if (before.spec.type == LayerType::Dropout) continue;
    if (before.spec.type == LayerType::Flatten && before.input.size() == flat.size())
      return before.input;
    break;
  }
  return flat;
}

}  // namespace

NetworkActivations layer_activations(const ModelWeights& model, std::span<const uint8_t> digit) {
  check_model_input(model, kDigitShape, "showing a digit's layers");
  const ActivationShape input = model.plan.layers.front().input;
  if (digit.size() != size_t(kDigitShape.size()))
    throw std::invalid_argument("layer_activations: " + std::to_string(digit.size()) +
                                " bytes are not a 28x28 image");
  NetworkActivations result;
  result.input_shape = input;
  result.input.resize(digit.size());
  data::normalize_pixels(result.input.data(), digit.data(), digit.size());
  CpuNetwork network(model.plan, 1, CpuKernels::Reference);
  std::copy(model.params.begin(), model.params.end(), network.parameters().begin());
  const uint8_t no_label = 0;  // the loss is computed and ignored
  network.forward(result.input.data(), &no_label, 1, false, 0, 0);
  for (size_t i = 0; i < model.plan.layers.size(); ++i) {
    const std::span<const float> out = network.layer_output(i);
    result.layers.push_back({model.plan.layers[i], std::vector<float>(out.begin(), out.end())});
  }
  const std::span<const float> logits = network.logits();
  result.probabilities.resize(logits.size());
  softmax(result.probabilities.data(), logits.data(), int(logits.size()));
  return result;
}

ForwardPass forward_pass(std::shared_ptr<const ModelWeights> model,
                         std::span<const uint8_t> digit) {
  ForwardPass pass{std::move(model), nullptr, {}};
  if (!pass.model || digit.empty()) return pass;
  try {
    pass.activations =
        std::make_shared<const NetworkActivations>(layer_activations(*pass.model, digit));
  } catch (const std::exception& e) {
    pass.problem = e.what();
  }
  return pass;
}

std::vector<int> conv_layer_indices(const ModelPlan& plan) {
  std::vector<int> indices;
  for (size_t i = 0; i < plan.layers.size(); ++i)
    if (plan.layers[i].spec.type == LayerType::Conv2d) indices.push_back(int(i));
  return indices;
}

ConvFilters conv_filters(const ModelWeights& model, int layer) {
  if (layer < 0 || size_t(layer) >= model.plan.layers.size() ||
      model.plan.layers[size_t(layer)].spec.type != LayerType::Conv2d)
    throw std::invalid_argument("conv_filters: layer " + std::to_string(layer) +
                                " is not a convolution of the model");
  const LayerInfo& info = model.plan.layers[size_t(layer)];
  ConvFilters filters;
  filters.layer = layer;
  filters.name = info.spec.name;
  filters.out_channels = info.spec.out_channels;
  filters.in_channels = info.input.channels;
  filters.kernel = info.spec.kernel;
  filters.weights = parameter_values(model, find_parameter(model.plan, info.spec.name + ".weight"));
  filters.bias = parameter_values(model, find_parameter(model.plan, info.spec.name + ".bias"));
  for (float w : filters.weights) filters.max_abs = std::max(filters.max_abs, std::abs(w));
  return filters;
}

ProductSum explain_output(const ModelWeights& model, const NetworkActivations& activations,
                          int layer, int channel, int y, int x) {
  const ModelPlan& plan = model.plan;
  if (layer < 0 || size_t(layer) >= plan.layers.size() ||
      activations.layers.size() != plan.layers.size())
    throw std::invalid_argument("explain_output: layer " + std::to_string(layer) +
                                " is not a layer of the model whose activations were given");
  const LayerInfo& info = plan.layers[size_t(layer)];
  const LayerType type = info.spec.type;
  if (type != LayerType::Conv2d && type != LayerType::Linear)
    throw std::invalid_argument("explain_output: layer " + info.spec.name + " is a " +
                                layer_type_name(type) +
                                ", not a convolution or linear layer: it has no products to show");
  check_index("channel", channel, info.output.channels, info);
  check_index("row", y, info.output.height, info);
  check_index("column", x, info.output.width, info);

  ProductSum p;
  p.layer = layer, p.channel = channel, p.y = y, p.x = x;
  p.type = type;
  const std::vector<float>& in =
      layer == 0 ? activations.input : activations.layers[size_t(layer) - 1].values;
  if (type == LayerType::Conv2d) {
    p.input_shape = info.input;
    p.in_channels = info.input.channels;
    p.rows = p.cols = info.spec.kernel;
    p.top = y * info.spec.stride - info.spec.padding;
    p.left = x * info.spec.stride - info.spec.padding;
  } else {
    p.input_shape = unflattened_input(plan, layer);
    p.in_channels = p.input_shape.channels;
    p.rows = p.input_shape.height;
    p.cols = p.input_shape.width;
  }
  const size_t window = size_t(p.in_channels) * p.rows * p.cols;
  const std::span<const float> weights =
      parameter_values(model, find_parameter(plan, info.spec.name + ".weight"))
          .subspan(size_t(channel) * window, window);
  const std::span<const float> bias =
      parameter_values(model, find_parameter(plan, info.spec.name + ".bias"));
  p.bias = bias.empty() ? 0.0f : bias[size_t(channel)];
  p.weights.assign(weights.begin(), weights.end());
  p.patch.assign(window, 0.0f);
  p.padding.assign(window, 0);
  p.products.assign(window, 0.0f);
  // In the reference kernels' order, in double from the bias: the sum is the stored value's.
  double sum = p.bias;
  const int height = p.input_shape.height, width = p.input_shape.width;
  for (int c = 0; c < p.in_channels; ++c)
    for (int r = 0; r < p.rows; ++r)
      for (int q = 0; q < p.cols; ++q) {
        const size_t i = p.index(c, r, q);
        const int hi = p.top + r, wi = p.left + q;
        if (hi < 0 || hi >= height || wi < 0 || wi >= width) {
          p.padding[i] = 1;
          continue;
        }
        p.patch[i] = in[(size_t(c) * height + hi) * width + wi];
        const double product = double(p.patch[i]) * p.weights[i];
        p.products[i] = float(product);
        sum += product;
      }
  p.sum = float(sum);
  p.activation = activations.layers[size_t(layer)].at(channel, y, x);
  return p;
}

}  // namespace gpulab
