// What a trained model computes inside, for the window's Inside tab: every layer's output for one
// image (feature maps), each convolution's filters, and one output value taken apart into the
// products and the bias it is the sum of ("from the whole network down to one multiply").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/inside/model_weights.hpp"

namespace gpulab {

// One layer's output for one image.
struct LayerActivation {
  LayerInfo info;             // the layer: its spec (name, type) and its input and output shapes
  std::vector<float> values;  // (C, H, W) = info.output
  float at(int channel, int y, int x) const {
    return values[(size_t(channel) * info.output.height + y) * info.output.width + x];
  }
};

// Everything the model computes for one image.
struct NetworkActivations {
  ActivationShape input_shape;
  std::vector<float> input;             // (C, H, W): the image normalized as in training
  std::vector<LayerActivation> layers;  // one per layer of the model's plan, in order
  std::vector<float> probabilities;     // (classes): the softmax of the last layer
};

// The outputs of every layer of `model` for a 28x28 image of bytes (white ink on black, as MNIST),
// from the CPU network's own forward pass on the reference kernels (which fuse nothing, so every
// layer keeps its output). Throws std::invalid_argument when the image is not 784 bytes or the
// model does not take 1x28x28 images.
NetworkActivations layer_activations(const ModelWeights& model, std::span<const uint8_t> digit);

// One image through one model, as the views that show it share it: the forward pass is made once
// for them all. `activations` is null without a model or an image, and when the two do not fit
// (`problem` then says why).
struct ForwardPass {
  std::shared_ptr<const ModelWeights> model;
  std::shared_ptr<const NetworkActivations> activations;
  std::string problem;
};
ForwardPass forward_pass(std::shared_ptr<const ModelWeights> model, std::span<const uint8_t> digit);

// The layers of `plan` that are convolutions, as indices into plan.layers.
std::vector<int> conv_layer_indices(const ModelPlan& plan);

// A convolution's filters, viewed in the model's parameters (which must outlive it).
struct ConvFilters {
  int layer = 0;  // index into plan.layers
  std::string name;
  int out_channels = 0, in_channels = 0, kernel = 0;
  std::span<const float> weights;  // (out, in, k, k), PyTorch's layout
  std::span<const float> bias;     // (out), empty for a layer without bias
  float max_abs = 0;               // the largest |weight|: a symmetric colour scale's end
  float at(int out, int in, int y, int x) const {
    return weights[((size_t(out) * in_channels + in) * kernel + y) * kernel + x];
  }
};

// Throws std::invalid_argument when `layer` is not a convolution of the model.
ConvFilters conv_filters(const ModelWeights& model, int layer);

// One output value of a convolution or linear layer as the sum it is: the input the layer reads
// for it (a convolution's window, zeros where it hangs over the padding; a linear layer's whole
// input), the weights, their products, the bias and the sum.
struct ProductSum {
  int layer = 0, channel = 0, y = 0, x = 0;  // the output value explained
  LayerType type = LayerType::Conv2d;
  // The window: in_channels planes of rows x cols. A convolution's is its kernel at (top, left) of
  // its input (negative or past the edge over the padding); a linear layer's is its whole input,
  // in the shape the layer before the flatten gave it, at (0, 0).
  int in_channels = 0, rows = 0, cols = 0;
  int top = 0, left = 0;
  ActivationShape input_shape;   // the shape of the input the window sits on
  std::vector<float> patch;      // (in_channels, rows, cols): the input under the window
  std::vector<uint8_t> padding;  // (in_channels, rows, cols): 1 where the window is off the input
  std::vector<float> weights;    // (in_channels, rows, cols)
  std::vector<float> products;   // (in_channels, rows, cols): patch * weights
  float bias = 0;                // 0 for a layer without bias
  float sum = 0;                 // bias + Σ products, summed in double as the reference kernels do
  float activation = 0;          // the layer's stored output at (channel, y, x)
  size_t index(int c, int row, int col) const { return (size_t(c) * rows + row) * cols + col; }
};

// Takes output (channel, y, x) of layer `layer` apart, reading its input from `activations`
// (layer_activations of the same model). A linear layer's outputs are (features, 1, 1): y = x = 0.
// Throws std::invalid_argument naming what is out of range or not a convolution or linear layer.
ProductSum explain_output(const ModelWeights& model, const NetworkActivations& activations,
                          int layer, int channel, int y, int x);

}  // namespace gpulab
