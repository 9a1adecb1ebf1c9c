// The layer-by-layer walk of a model over a flat parameter buffer, shared by the CPU and CUDA
// networks: which buffers each layer reads and writes, which kernel runs, in which order, and
// where gradients accumulate. An Ops type supplies the memory and the kernels:
//   template <class T> using Buffer = ...;               // owns n T's, has data()
//   template <class T> static Buffer<T> allocate(size_t n, const std::string& what);
//   conv2d_forward(...), conv2d_backward(...), linear_*, maxpool2d_*, relu_*, tanh_*,
//   dropout_forward/backward(...)                         // the kernels/cpu signatures
//   dropout_mask(mask, n, p, layer)                       // from the ops' seed and step
//   softmax_cross_entropy(dlogits, logits, labels, batch, classes)  // the ops keep the loss
//   copy(out, in, n), zero(out, n)
// Ops may also offer the fused conv2d_relu_* ops, and with them conv2d_relu_maxpool_* (the
// kernels/cpu/ops.hpp signatures): a stack built with fuse set then runs a convolution with the
// ReLU (and the max pooling, where offered) after it as one op, and the convolution's output never
// makes a trip through memory.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/model_config.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {

inline kernels::Conv2dShape conv_shape(const LayerInfo& info, int batch) {
  return {batch,
          info.input.channels,
          info.input.height,
          info.input.width,
          info.spec.out_channels,
          info.spec.kernel,
          info.spec.kernel,
          info.spec.stride,
          info.spec.padding};
}

inline kernels::Pool2dShape pool_shape(const LayerInfo& info, int batch) {
  return {
      batch,           info.input.channels, info.input.height, info.input.width, info.spec.kernel,
      info.spec.stride};
}

// Ops that fuse a convolution with the ReLU after it (the CUDA implicit-GEMM path), and those
// that also fuse the max pooling after that (the fast CPU kernels).
template <class Ops>
concept FusesConvRelu = requires(Ops& ops, float* f, const float* c,
                                 const kernels::Conv2dShape& conv) {
  ops.conv2d_relu_forward(f, c, c, c, conv);
  ops.conv2d_relu_backward(f, f, f, c, c, c, c, conv);
};
template <class Ops>
concept FusesConvBlocks = FusesConvRelu<Ops> &&
    requires(Ops& ops, float* f, int32_t* i, const float* c, const kernels::Conv2dShape& conv,
             const kernels::Pool2dShape& pool) {
  ops.conv2d_relu_maxpool_forward(f, i, c, c, c, conv, pool);
  ops.conv2d_relu_maxpool_backward(f, f, f, c, c, i, c, c, conv, pool);
};

template <class Ops>
class LayerStack {
 public:
  template <class T>
  using Buffer = typename Ops::template Buffer<T>;

  // fuse: run conv + ReLU (+ max pooling) blocks as one op, where Ops has the fused ops.
  LayerStack(const ModelPlan& plan, int max_batch, bool fuse = false);

  const ModelPlan& plan() const { return plan_; }
  int max_batch() const { return max_batch_; }
  size_t parameter_count() const { return size_t(plan_.parameter_count); }
  float* parameters() { return params_.data(); }  // (parameter_count) in the ops' memory
  float* gradients() { return grads_.data(); }
  // (batch, classes) in the ops' memory: the logits of the last forward().
  const float* logits() const { return layers_.back().out; }
  // (batch, output.size()) in the ops' memory: layer i's output of the last forward(). An identity
  // layer's is its input; a layer inside a fused block has its block's output, so a stack built
  // without fuse keeps every layer's own.
  const float* output(size_t layer) const { return layers_.at(layer).out; }

  // images (batch, C*H*W) normalized, labels (batch), in the ops' memory. Runs the forward pass
  // and the loss; with training set, dropout masks are drawn and dlogits is written for
  // backward().
  void forward(Ops& ops, const float* images, const uint8_t* labels, int batch, bool training);
  // Zeroes and fills gradients() for the batch of the last training forward(). Walking from the
  // last layer to the first, it calls ready(offset) after each layer with parameters (for Ops
  // that run on a device: after enqueuing its kernels): gradients()[offset, parameter_count())
  // are then final, so a reducer can start on them while the earlier layers still run.
  void backward(Ops& ops, const std::function<void(size_t)>& ready = {});

 private:
  struct Layer {
    LayerInfo info;
    float* out = nullptr;  // (batch, output.size()); aliases the input for identities
    float* dout = nullptr;
    const float* weight = nullptr;
    const float* bias = nullptr;
    float* dweight = nullptr;
    float* dbias = nullptr;
    Buffer<float> mask;      // dropout
    Buffer<int32_t> argmax;  // max pooling
    // A convolution that computes the ReLU after it (absorbs 1), and the max pooling after that
    // (absorbs 2), with the fused ops; the layers it absorbs are folded and do nothing.
    int absorbs = 0;
    bool folded = false;
  };
  static bool is_identity(const LayerSpec& s) {
    return s.type == LayerType::Flatten || (s.type == LayerType::Dropout && s.p == 0.0f);
  }

  ModelPlan plan_;
  int max_batch_;
  Buffer<float> params_, grads_;
  std::vector<Buffer<float>> activations_, activation_grads_;
  std::vector<Layer> layers_;
  const float* input_ = nullptr;
  int batch_ = 0;
  bool trained_forward_ = false;
};

template <class Ops>
LayerStack<Ops>::LayerStack(const ModelPlan& plan, int max_batch, bool fuse)
    : plan_(plan), max_batch_(max_batch) {
  if (max_batch < 1) throw std::invalid_argument("batch size must be at least 1");
  const size_t count = size_t(plan.parameter_count);
  params_ = Ops::template allocate<float>(count, "the parameters");
  grads_ = Ops::template allocate<float>(count, "the parameter gradients");
  size_t next_param = 0;
  auto type_at = [&](size_t j) {
    return j < plan.layers.size() ? plan.layers[j].spec.type : LayerType::Flatten;
  };
  int folding = 0, group = 0;  // layers still to fold into the convolution before them, of group
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerInfo& info = plan.layers[i];
    const std::string name = "layer " + std::to_string(i + 1) + " (" + info.spec.name + ")";
    Layer layer;
    layer.info = info;
    const LayerType type = info.spec.type;
    if (FusesConvRelu<Ops> && fuse && type == LayerType::Conv2d &&
        type_at(i + 1) == LayerType::ReLU)
      layer.absorbs = FusesConvBlocks<Ops> && type_at(i + 2) == LayerType::MaxPool2d ? 2 : 1;
    if (folding > 0) {
      layer.folded = true;
      --folding;
    }
    // Inside a fused block only its last layer holds an output.
    const bool block_inner = layer.absorbs > 0 || (layer.folded && folding > 0);
    if (type == LayerType::Conv2d || type == LayerType::Linear) {
      const ParameterInfo& w = plan.parameters[next_param++];
      layer.weight = params_.data() + w.offset;
      layer.dweight = grads_.data() + w.offset;
      if (info.spec.bias) {
        const ParameterInfo& b = plan.parameters[next_param++];
        layer.bias = params_.data() + b.offset;
        layer.dbias = grads_.data() + b.offset;
      }
    }
    const size_t out_size = size_t(max_batch) * size_t(info.output.size());
    if (type == LayerType::Dropout && !is_identity(info.spec))
      layer.mask = Ops::template allocate<float>(out_size, "the dropout mask of " + name);
    if (type == LayerType::MaxPool2d)
      layer.argmax = Ops::template allocate<int32_t>(out_size, "the max-pool indices of " + name);
    if (!is_identity(info.spec) && !block_inner) {
      activations_.push_back(Ops::template allocate<float>(out_size, "the activations of " + name));
      activation_grads_.push_back(
          Ops::template allocate<float>(out_size, "the activation gradients of " + name));
      layer.out = activations_.back().data();
      layer.dout = activation_grads_.back().data();
    }
    if (layer.absorbs > 0) folding = group = layer.absorbs;
    layers_.push_back(std::move(layer));
    // The block's last layer holds the output that the layer after the block reads.
    if (layers_.back().folded && folding == 0)
      for (size_t j = layers_.size() - 1 - group; j + 1 < layers_.size(); ++j)
        layers_[j].out = layers_.back().out;
  }
}

template <class Ops>
void LayerStack<Ops>::forward(Ops& ops, const float* images, const uint8_t* labels, int batch,
                              bool training) {
  if (batch < 1 || batch > max_batch_)
    throw std::invalid_argument("batch of " + std::to_string(batch) + " exceeds the network's " +
                                std::to_string(max_batch_));
  input_ = images;
  batch_ = batch;
  const float* in = images;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = layers_[i];
    const LayerInfo& info = layer.info;
    const size_t n = size_t(batch) * size_t(info.output.size());
    // Identity layers alias their input, which for a first layer is whatever images it is given.
    if (is_identity(info.spec)) {
      layer.out = const_cast<float*>(in);
      layer.dout = i == 0 ? nullptr : layers_[i - 1].dout;
    }
    float* out = layer.out;
    switch (info.spec.type) {
      case LayerType::Conv2d:  // a fused convolution's out is its block's last layer's
        if constexpr (FusesConvBlocks<Ops>) {
          if (layer.absorbs == 2) {
            ops.conv2d_relu_maxpool_forward(out, layers_[i + 2].argmax.data(), in, layer.weight,
                                            layer.bias, conv_shape(info, batch),
                                            pool_shape(layers_[i + 2].info, batch));
            break;
          }
        }
        if constexpr (FusesConvRelu<Ops>) {
          if (layer.absorbs == 1) {
            ops.conv2d_relu_forward(out, in, layer.weight, layer.bias, conv_shape(info, batch));
            break;
          }
        }
        ops.conv2d_forward(out, in, layer.weight, layer.bias, conv_shape(info, batch));
        break;
      case LayerType::Linear:
        ops.linear_forward(out, in, layer.weight, layer.bias, batch, info.input.channels,
                           info.spec.out_features);
        break;
      case LayerType::MaxPool2d:
        if (!layer.folded) ops.maxpool2d_forward(out, layer.argmax.data(), in, pool_shape(info, batch));
        break;
      case LayerType::ReLU:
        if (!layer.folded) ops.relu_forward(out, in, n);
        break;
      case LayerType::Tanh:
        ops.tanh_forward(out, in, n);
        break;
      case LayerType::Dropout:
        if (info.spec.p == 0.0f) break;
        if (training) {
          ops.dropout_mask(layer.mask.data(), n, info.spec.p, i);
          ops.dropout_forward(out, in, layer.mask.data(), n);
        } else {
          ops.copy(out, in, n);
        }
        break;
      case LayerType::Flatten:
        break;
    }
    in = out;
  }
  ops.softmax_cross_entropy(training ? layers_.back().dout : nullptr, in, labels, batch,
                            plan_.layers.back().output.channels);
  trained_forward_ = training;
}

template <class Ops>
void LayerStack<Ops>::backward(Ops& ops, const std::function<void(size_t)>& ready) {
  if (!trained_forward_) throw std::logic_error("backward() needs a training forward() first");
  const int batch = batch_;
  ops.zero(grads_.data(), parameter_count());
  // Every activation gradient but the loss's (just written) starts at zero: backward accumulates.
  for (const Layer& layer : layers_)
    if (!is_identity(layer.info.spec) && layer.dout != nullptr && layer.dout != layers_.back().dout)
      ops.zero(layer.dout, size_t(batch) * size_t(layer.info.output.size()));
  for (size_t i = layers_.size(); i-- > 0;) {
    Layer& layer = layers_[i];
    const LayerInfo& info = layer.info;
    const float* in = i == 0 ? input_ : layers_[i - 1].out;
    float* din = i == 0 ? nullptr : layers_[i - 1].dout;
    const size_t n = size_t(batch) * size_t(info.output.size());
    switch (info.spec.type) {
      case LayerType::Conv2d:
        if constexpr (FusesConvBlocks<Ops>) {
          if (layer.absorbs == 2) {  // from the pooling's output gradient, output and argmax
            ops.conv2d_relu_maxpool_backward(din, layer.dweight, layer.dbias, layers_[i + 2].dout,
                                             layers_[i + 2].out, layers_[i + 2].argmax.data(), in,
                                             layer.weight, conv_shape(info, batch),
                                             pool_shape(layers_[i + 2].info, batch));
            break;
          }
        }
        if constexpr (FusesConvRelu<Ops>) {
          if (layer.absorbs == 1) {  // from the ReLU's output gradient, through its output
            ops.conv2d_relu_backward(din, layer.dweight, layer.dbias, layers_[i + 1].dout,
                                     layers_[i + 1].out, in, layer.weight, conv_shape(info, batch));
            break;
          }
        }
        ops.conv2d_backward(din, layer.dweight, layer.dbias, layer.dout, in, layer.weight,
                            conv_shape(info, batch));
        break;
      case LayerType::Linear:
        ops.linear_backward(din, layer.dweight, layer.dbias, layer.dout, in, layer.weight, batch,
                            info.input.channels, info.spec.out_features);
        break;
      case LayerType::MaxPool2d:
        if (din && !layer.folded)
          ops.maxpool2d_backward(din, layer.dout, layer.argmax.data(), pool_shape(info, batch));
        break;
      case LayerType::ReLU:
        if (din && !layer.folded) ops.relu_backward(din, layer.dout, layer.out, n);
        break;
      case LayerType::Tanh:
        if (din) ops.tanh_backward(din, layer.dout, layer.out, n);
        break;
      case LayerType::Dropout:
        if (din && info.spec.p != 0.0f) ops.dropout_backward(din, layer.dout, layer.mask.data(), n);
        break;
      case LayerType::Flatten:
        break;
    }
    if (ready && layer.dweight) ready(size_t(layer.dweight - grads_.data()));
  }
}

}  // namespace gpulab
