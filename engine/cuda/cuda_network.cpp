// The CUDA side of the shared layer walk: each op forwards to its kernels/cuda launcher.
#include "engine/cuda/cuda_network.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/conv2d.cuh"
#include "kernels/cuda/conv2d_implicit.cuh"
#include "kernels/cuda/dropout.cuh"
#include "kernels/cuda/linear.cuh"
#include "kernels/cuda/loss.cuh"
#include "kernels/cuda/pool.cuh"

namespace gpulab {
namespace kc = kernels::cuda;

namespace {

// The convolution scratch. im2col: enough for every conv layer to run its whole batch in one
// GEMM, capped (larger layers then run in chunks of images) but never below one image's worth.
// Implicit: the weight gradients' partial sums, nothing else.
size_t conv_scratch_floats(const ModelPlan& plan, int max_batch, ConvAlgorithm conv) {
  constexpr size_t kCapFloats = size_t(256) << 20 >> 2;  // 256 MiB
  size_t floats = 0;
  for (const LayerInfo& info : plan.layers) {
    if (info.spec.type != LayerType::Conv2d) continue;
    const kernels::Conv2dShape s = conv_shape(info, max_batch);
    if (conv == ConvAlgorithm::Implicit) {
      floats = std::max(floats, kc::conv2d_implicit_scratch_floats(s));
      continue;
    }
    const size_t whole = kc::conv2d_scratch_floats(s, max_batch);
    floats =
        std::max(floats, std::max(std::min(whole, kCapFloats), kc::conv2d_scratch_floats(s, 1)));
  }
  return floats;
}

// Room for the largest product's operands rounded to bf16, over every conv (im2col: implicit
// convolutions round as they load) and linear layer at max_batch, allocated with the network so
// that no captured step allocates.
size_t bf16_operand_elements(const ModelPlan& plan, int max_batch, ConvAlgorithm conv,
                             size_t conv_scratch) {
  size_t elements = 0;
  for (const LayerInfo& info : plan.layers) {
    if (info.spec.type == LayerType::Conv2d && conv == ConvAlgorithm::Im2col)
      elements =
          std::max(elements, kc::conv2d_bf16_elements(conv_shape(info, max_batch), conv_scratch));
    if (info.spec.type == LayerType::Linear)
      elements = std::max(elements, kc::linear_bf16_elements(max_batch, info.input.channels,
                                                             info.spec.out_features));
  }
  return elements;
}

}  // namespace

void CudaOps::conv2d_forward(float* out, const float* in, const float* w, const float* b,
                             const kernels::Conv2dShape& s) {
  if (conv == ConvAlgorithm::Implicit)
    kc::conv2d_implicit_forward(out, in, w, b, s, false, gemm, stream);
  else
    kc::conv2d_forward(out, in, w, b, s, gemm, stream);
}
void CudaOps::conv2d_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                              const float* w, const kernels::Conv2dShape& s) {
  if (conv == ConvAlgorithm::Implicit)
    kc::conv2d_implicit_backward(din, dw, db, dout, nullptr, in, w, s, gemm, stream);
  else
    kc::conv2d_backward(din, dw, db, dout, in, w, s, gemm, stream);
}
// A stack fuses only with implicit convolutions: the im2col path has no buffer to mask the
// gradient in, and gains nothing from a fused forward.
void CudaOps::conv2d_relu_forward(float* out, const float* in, const float* w, const float* b,
                                  const kernels::Conv2dShape& s) {
  if (conv != ConvAlgorithm::Implicit)
    throw std::logic_error("conv2d_relu_forward: fused only with --conv implicit");
  kc::conv2d_implicit_forward(out, in, w, b, s, true, gemm, stream);
}
void CudaOps::conv2d_relu_backward(float* din, float* dw, float* db, const float* dout,
                                   const float* out, const float* in, const float* w,
                                   const kernels::Conv2dShape& s) {
  if (conv != ConvAlgorithm::Implicit)
    throw std::logic_error("conv2d_relu_backward: fused only with --conv implicit");
  kc::conv2d_implicit_backward(din, dw, db, dout, out, in, w, s, gemm, stream);
}
void CudaOps::linear_forward(float* out, const float* in, const float* w, const float* b, int batch,
                             int in_features, int out_features) {
  kc::linear_forward(out, in, w, b, batch, in_features, out_features, gemm, stream);
}
void CudaOps::linear_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                              const float* w, int batch, int in_features, int out_features) {
  kc::linear_backward(din, dw, db, dout, in, w, batch, in_features, out_features, gemm, stream);
}
void CudaOps::maxpool2d_forward(float* out, int32_t* argmax, const float* in,
                                const kernels::Pool2dShape& s) {
  kc::maxpool2d_forward(out, argmax, in, s, stream);
}
void CudaOps::maxpool2d_backward(float* din, const float* dout, const int32_t* argmax,
                                 const kernels::Pool2dShape& s) {
  kc::maxpool2d_backward(din, dout, argmax, s, stream);
}
void CudaOps::relu_forward(float* out, const float* in, size_t n) {
  kc::relu_forward(out, in, n, stream);
}
void CudaOps::relu_backward(float* din, const float* dout, const float* out, size_t n) {
  kc::relu_backward(din, dout, out, n, stream);
}
void CudaOps::tanh_forward(float* out, const float* in, size_t n) {
  kc::tanh_forward(out, in, n, stream);
}
void CudaOps::tanh_backward(float* din, const float* dout, const float* out, size_t n) {
  kc::tanh_backward(din, dout, out, n, stream);
}
// Keyed on each element's position in the whole batch, so shards draw what one batch draws.
void CudaOps::dropout_mask(float* mask, size_t n, float p, uint64_t layer) {
  const uint64_t first = uint64_t(shard.first_image) * (n / size_t(batch));
  kc::dropout_mask(mask, n, p, seed, step, layer, first, stream);
}
void CudaOps::dropout_forward(float* out, const float* in, const float* mask, size_t n) {
  kc::dropout_forward(out, in, mask, n, stream);
}
void CudaOps::dropout_backward(float* din, const float* dout, const float* mask, size_t n) {
  kc::dropout_backward(din, dout, mask, n, stream);
}
void CudaOps::softmax_cross_entropy(float* dlogits, const float* logits, const uint8_t* labels,
                                    int batch, int classes) {
  kc::softmax_cross_entropy(dlogits, &loss->loss_sum, &loss->correct, logits, labels, batch,
                            classes, shard.global_batch, stream);
}
void CudaOps::copy(float* out, const float* in, size_t n) {
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}
void CudaOps::zero(float* out, size_t n) {
  GPULAB_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float), stream));
}

CudaNetwork::CudaNetwork(const ModelPlan& plan, int max_batch, kc::Precision precision,
                         ConvAlgorithm conv, cublasHandle_t blas, uint64_t seed,
                         const uint64_t* step, cudaStream_t stream)
    : stack_(plan, max_batch, conv == ConvAlgorithm::Implicit),
      scratch_(conv_scratch_floats(plan, max_batch, conv),
               conv == ConvAlgorithm::Implicit ? "the convolution scratch (weight gradients)"
                                               : "the convolution scratch (im2col)"),
      bf16_operands_(precision == kc::Precision::Bf16
                         ? bf16_operand_elements(plan, max_batch, conv, scratch_.size())
                         : 0,
                     "the GEMM operands rounded to bf16"),
      loss_(1, "the loss") {
  ops_.stream = stream;
  ops_.conv = conv;
  ops_.gemm = kc::Gemm{blas, precision, scratch_.data(), scratch_.size()};
  ops_.gemm.bf16_operands = bf16_operands_.data();
  ops_.gemm.bf16_elements = bf16_operands_.size();
  ops_.seed = seed;
  ops_.step = step;
  ops_.loss = loss_.data();
}

}  // namespace gpulab
