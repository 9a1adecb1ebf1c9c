// Layer-by-layer execution of a model on the CPU.
#include "engine/cpu_network.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/cpu/ops.hpp"

namespace gpulab {
namespace {

namespace k = gpulab::kernels;

// One table of entry points so the same network runs on the fast or the reference kernels.
struct Ops {
  decltype(&k::cpu::conv2d_forward) conv2d_forward;
  decltype(&k::cpu::conv2d_backward) conv2d_backward;
  decltype(&k::cpu::conv2d_relu_forward) conv2d_relu_forward;
  decltype(&k::cpu::conv2d_relu_backward) conv2d_relu_backward;
  decltype(&k::cpu::conv2d_relu_maxpool_forward) conv2d_relu_maxpool_forward;
  decltype(&k::cpu::conv2d_relu_maxpool_backward) conv2d_relu_maxpool_backward;
  decltype(&k::cpu::linear_forward) linear_forward;
  decltype(&k::cpu::linear_backward) linear_backward;
  decltype(&k::cpu::maxpool2d_forward) maxpool2d_forward;
  decltype(&k::cpu::maxpool2d_backward) maxpool2d_backward;
  decltype(&k::cpu::relu_forward) relu_forward;
  decltype(&k::cpu::relu_backward) relu_backward;
  decltype(&k::cpu::tanh_forward) tanh_forward;
  decltype(&k::cpu::tanh_backward) tanh_backward;
  decltype(&k::cpu::dropout_forward) dropout_forward;
  decltype(&k::cpu::dropout_backward) dropout_backward;
  decltype(&k::cpu::softmax_cross_entropy) softmax_cross_entropy;
};

#define GPULAB_OPS_TABLE(ns)                                                                    \
  Ops {                                                                                         \
    ns::conv2d_forward, ns::conv2d_backward, ns::conv2d_relu_forward, ns::conv2d_relu_backward, \
        ns::conv2d_relu_maxpool_forward, ns::conv2d_relu_maxpool_backward, ns::linear_forward,  \
        ns::linear_backward, ns::maxpool2d_forward, ns::maxpool2d_backward, ns::relu_forward,   \
        ns::relu_backward, ns::tanh_forward, ns::tanh_backward, ns::dropout_forward,            \
        ns::dropout_backward, ns::softmax_cross_entropy                                         \
  }
const Ops kFastOps = GPULAB_OPS_TABLE(k::cpu);
const Ops kReferenceOps = GPULAB_OPS_TABLE(k::ref);
#undef GPULAB_OPS_TABLE

k::Conv2dShape conv_shape(const LayerInfo& info, int batch) {
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

k::Pool2dShape pool_shape(const LayerInfo& info, int batch) {
  return {batch, info.input.channels, info.input.height, info.input.width, info.spec.kernel,
          info.spec.stride};
}

}  // namespace

bool CpuNetwork::is_identity(const Layer& layer) const {
  const LayerSpec& s = layer.info.spec;
  return s.type == LayerType::Flatten || (s.type == LayerType::Dropout && s.p == 0.0f);
}

CpuNetwork::CpuNetwork(const ModelPlan& plan, int max_batch, CpuKernels kernels)
    : plan_(plan), max_batch_(max_batch), kernels_(kernels) {
  if (max_batch < 1) throw std::invalid_argument("batch size must be at least 1");
  params_.assign(plan.parameter_count, 0.0f);
  grads_.assign(plan.parameter_count, 0.0f);
  size_t next_param = 0;
  int folding = 0, group = 0;  // layers still to fold into the convolution before them, of group
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerInfo& info = plan.layers[i];
    Layer layer;
    layer.info = info;
    // The fast kernels run a convolution and the ReLU after it, and the max pooling after that,
    // as one op (conv2d_relu_*, conv2d_relu_maxpool_*), so that the convolution's output never
    // makes a trip through memory: the layers of the group but the last get no buffers. The
    // reference network stays layer by layer: it is the oracle the fast one is tested against.
    auto type_at = [&](size_t j) {
      return j < plan.layers.size() ? plan.layers[j].spec.type : LayerType::Flatten;
    };
    if (kernels == CpuKernels::Fast && info.spec.type == LayerType::Conv2d &&
        type_at(i + 1) == LayerType::ReLU)
      layer.absorbs = type_at(i + 2) == LayerType::MaxPool2d ? 2 : 1;
    if (folding > 0) {
      layer.folded = true;
      --folding;
    }
    const bool group_inner = layer.absorbs > 0 || (layer.folded && folding > 0);
    const LayerType type = info.spec.type;
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
    const size_t out_size = static_cast<size_t>(max_batch) * info.output.size();
    if (type == LayerType::Dropout) layer.mask.assign(out_size, 1.0f);
    if (type == LayerType::MaxPool2d) layer.argmax.assign(out_size, 0);
    if (!is_identity(layer) && !group_inner) {
      activations_.emplace_back(out_size);
      activation_grads_.emplace_back(out_size);
      layer.out = activations_.back().data();
      layer.dout = activation_grads_.back().data();
    }
    if (layer.absorbs > 0) folding = group = layer.absorbs;
    layers_.push_back(std::move(layer));
    // The group's last layer holds the output that the layer after the group reads.
    if (layers_.back().folded && folding == 0)
      for (size_t j = layers_.size() - 1 - group; j + 1 < layers_.size(); ++j)
        layers_[j].out = layers_.back().out;
  }
}

LossStats CpuNetwork::forward(const float* images, const uint8_t* labels, int batch,
                              bool training, uint64_t seed, uint64_t step) {
  if (batch < 1 || batch > max_batch_)
    throw std::invalid_argument("batch of " + std::to_string(batch) + " exceeds the network's " +
                                std::to_string(max_batch_));
  const Ops& ops = kernels_ == CpuKernels::Fast ? kFastOps : kReferenceOps;
  input_ = images;
  batch_ = batch;
  const float* in = images;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = layers_[i];
    const LayerInfo& info = layer.info;
    const size_t n = static_cast<size_t>(batch) * info.output.size();
    // Identity layers alias their input, which for a first layer is whatever images it is given.
    if (is_identity(layer)) {
      layer.out = const_cast<float*>(in);
      layer.dout = i == 0 ? nullptr : layers_[i - 1].dout;
    }
    float* out = layer.out;
    switch (info.spec.type) {
      case LayerType::Conv2d:  // a fused convolution's out is its group's last layer's
        if (layer.absorbs == 2)
          ops.conv2d_relu_maxpool_forward(out, layers_[i + 2].argmax.data(), in, layer.weight,
                                          layer.bias, conv_shape(info, batch),
                                          pool_shape(layers_[i + 2].info, batch));
        else
          (layer.absorbs == 1 ? ops.conv2d_relu_forward : ops.conv2d_forward)(
              out, in, layer.weight, layer.bias, conv_shape(info, batch));
        break;
      case LayerType::Linear:
        ops.linear_forward(out, in, layer.weight, layer.bias, batch, info.input.channels,
                           info.spec.out_features);
        break;
      case LayerType::MaxPool2d:
        if (!layer.folded)
          ops.maxpool2d_forward(out, layer.argmax.data(), in, pool_shape(info, batch));
        break;
      case LayerType::ReLU:
        if (!layer.folded) ops.relu_forward(out, in, n);
        break;
      case LayerType::Tanh: ops.tanh_forward(out, in, n); break;
      case LayerType::Dropout:
        if (info.spec.p == 0.0f) break;
        if (training) {
          kernels::dropout_mask(layer.mask.data(), n, info.spec.p, seed, step * 64 + i);
          ops.dropout_forward(out, in, layer.mask.data(), n);
        } else {
          std::memcpy(out, in, n * sizeof(float));
        }
        break;
      case LayerType::Flatten: break;
    }
    in = out;
  }
  LossStats stats;
  stats.count = batch;
  Layer& last = layers_.back();
  ops.softmax_cross_entropy(training ? last.dout : nullptr, &stats.loss_sum, &stats.correct, in,
                            labels, batch, plan_.layers.back().output.channels);
  trained_forward_ = training;
  return stats;
}

void CpuNetwork::backward() {
  if (!trained_forward_) throw std::logic_error("backward() needs a training forward() first");
  const Ops& ops = kernels_ == CpuKernels::Fast ? kFastOps : kReferenceOps;
  const int batch = batch_;
  k::cpu::zero(grads_.data(), grads_.size());
  // Every activation gradient but the loss's (just written) starts at zero: backward accumulates.
  for (const Layer& layer : layers_)
    if (!is_identity(layer) && layer.dout != nullptr && layer.dout != layers_.back().dout)
      k::cpu::zero(layer.dout, static_cast<size_t>(batch) * layer.info.output.size());
  for (size_t i = layers_.size(); i-- > 0;) {
    Layer& layer = layers_[i];
    const LayerInfo& info = layer.info;
    const float* in = i == 0 ? input_ : layers_[i - 1].out;
    float* din = i == 0 ? nullptr : layers_[i - 1].dout;
    const size_t n = static_cast<size_t>(batch) * info.output.size();
    switch (info.spec.type) {
      case LayerType::Conv2d:
        if (layer.absorbs == 2)  // from the pooling's output gradient, output and argmax
          ops.conv2d_relu_maxpool_backward(din, layer.dweight, layer.dbias, layers_[i + 2].dout,
                                           layers_[i + 2].out, layers_[i + 2].argmax.data(), in,
                                           layer.weight, conv_shape(info, batch),
                                           pool_shape(layers_[i + 2].info, batch));
        else if (layer.absorbs == 1)  // from the ReLU's output gradient, through its output
          ops.conv2d_relu_backward(din, layer.dweight, layer.dbias, layers_[i + 1].dout,
                                   layers_[i + 1].out, in, layer.weight, conv_shape(info, batch));
        else
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
      case LayerType::Flatten: break;
    }
  }
}

}  // namespace gpulab
