// A model executed on one GPU: the shared layer walk (engine/model/layer_stack.hpp) over device
// memory, the CUDA kernels on one stream, the GEMM scratch (and its bf16 operands), and the loss
// left in device memory.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/model/layer_stack.hpp"
#include "engine/model/model_config.hpp"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

// Where a forward pass leaves its loss, in device memory; copied to the host in one piece.
struct DeviceLoss {
  double loss_sum = 0;  // summed over the batch
  int32_t correct = 0;
  int32_t unused = 0;
};

// LayerStack's Ops on the GPU: every call goes to `stream`; the step (for dropout) is read from
// device memory so that captured graphs stay correct.
struct CudaOps {
  template <class T>
  using Buffer = kernels::cuda::DeviceBuffer<T>;
  template <class T>
  static Buffer<T> allocate(size_t n, const std::string& what) {
    return Buffer<T>(n, what);
  }

  cudaStream_t stream = nullptr;
  kernels::cuda::Gemm gemm;
  ConvAlgorithm conv = ConvAlgorithm::Im2col;
  uint64_t seed = 0;
  const uint64_t* step = nullptr;  // (1) on the device
  DeviceLoss* loss = nullptr;      // (1) on the device
  int batch = 0;  // this forward's rows, the shard's position in the whole batch and its size
  Shard shard;

  void conv2d_forward(float* out, const float* in, const float* w, const float* b,
                      const kernels::Conv2dShape& s);
  void conv2d_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, const kernels::Conv2dShape& s);
  // The convolution and the ReLU after it, for a stack that fuses them (implicit convolutions
  // only): the ReLU in the forward's store, its mask (out > 0) in the backward's loads.
  void conv2d_relu_forward(float* out, const float* in, const float* w, const float* b,
                           const kernels::Conv2dShape& s);
  void conv2d_relu_backward(float* din, float* dw, float* db, const float* dout, const float* out,
                            const float* in, const float* w, const kernels::Conv2dShape& s);
  void linear_forward(float* out, const float* in, const float* w, const float* b, int batch,
                      int in_features, int out_features);
  void linear_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, int batch, int in_features, int out_features);
  void maxpool2d_forward(float* out, int32_t* argmax, const float* in,
                         const kernels::Pool2dShape& s);
  void maxpool2d_backward(float* din, const float* dout, const int32_t* argmax,
                          const kernels::Pool2dShape& s);
  void relu_forward(float* out, const float* in, size_t n);
  void relu_backward(float* din, const float* dout, const float* out, size_t n);
  void tanh_forward(float* out, const float* in, size_t n);
  void tanh_backward(float* din, const float* dout, const float* out, size_t n);
  void dropout_mask(float* mask, size_t n, float p, uint64_t layer);
  void dropout_forward(float* out, const float* in, const float* mask, size_t n);
  void dropout_backward(float* din, const float* dout, const float* mask, size_t n);
  void softmax_cross_entropy(float* dlogits, const float* logits, const uint8_t* labels, int batch,
                             int classes);
  void copy(float* out, const float* in, size_t n);
  void zero(float* out, size_t n);
};

class CudaNetwork {
 public:
  // Allocates everything for batches up to max_batch on the current device. step: (1) device.
  // conv: implicit also fuses each convolution with a ReLU after it.
  CudaNetwork(const ModelPlan& plan, int max_batch, kernels::cuda::Precision precision,
              ConvAlgorithm conv, cublasHandle_t blas, uint64_t seed, const uint64_t* step,
              cudaStream_t stream);

  size_t parameter_count() const { return stack_.parameter_count(); }
  float* parameters() { return stack_.parameters(); }  // (parameter_count) on the device
  float* gradients() { return stack_.gradients(); }
  const DeviceLoss* loss() const { return loss_.data(); }
  // (batch, classes) on the device: the logits of the last forward().
  const float* logits() const { return stack_.logits(); }

  // images (batch, C*H*W), labels (batch) on the device; enqueues the pass, returns at once.
  // shard: where these images sit in the whole batch of a step (dropout, the loss normalizer).
  void forward(const float* images, const uint8_t* labels, int batch, bool training,
               Shard shard = {}) {
    ops_.batch = batch;
    ops_.shard = shard;
    stack_.forward(ops_, images, labels, batch, training);
  }
  void backward(const std::function<void(size_t)>& ready = {}) { stack_.backward(ops_, ready); }

 private:
  LayerStack<CudaOps> stack_;
  kernels::cuda::DeviceBuffer<float> scratch_;
  kernels::cuda::DeviceBuffer<__nv_bfloat16> bf16_operands_;  // bf16 only: GEMM operands
  kernels::cuda::DeviceBuffer<DeviceLoss> loss_;
  CudaOps ops_;
};

}  // namespace gpulab
