// SGD, momentum, Adam and AdamW on the GPU.
#include "engine/cuda/cuda_optimizer.hpp"

#include "kernels/cuda/optimizer.cuh"

namespace gpulab {

namespace kc = kernels::cuda;

CudaOptimizer::CudaOptimizer(const OptimizerConfig& config, size_t count, cudaStream_t stream)
    : config_(config), count_(count) {
  const bool adam = config.kind == OptimizerKind::Adam || config.kind == OptimizerKind::AdamW;
  if (config.kind != OptimizerKind::SGD) {
    first_ = kc::DeviceBuffer<float>(count, "the optimizer state");
    GPULAB_CUDA_CHECK(cudaMemsetAsync(first_.data(), 0, count * sizeof(float), stream));
  }
  if (adam) {
    second_ = kc::DeviceBuffer<float>(count, "the optimizer state");
    GPULAB_CUDA_CHECK(cudaMemsetAsync(second_.data(), 0, count * sizeof(float), stream));
  }
}

void CudaOptimizer::enqueue(float* params, const float* grads, const float* lr,
                            const uint64_t* step, cudaStream_t stream) {
  const OptimizerConfig& c = config_;
  switch (c.kind) {
    case OptimizerKind::SGD:
      kc::sgd_update(params, nullptr, grads, count_, lr, 0.0f, c.weight_decay, stream);
      break;
    case OptimizerKind::Momentum:
      kc::sgd_update(params, first_.data(), grads, count_, lr, c.momentum, c.weight_decay, stream);
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      kc::adam_update(params, first_.data(), second_.data(), grads, count_, lr, c.beta1, c.beta2,
                      c.eps, c.weight_decay, c.kind == OptimizerKind::AdamW, step, stream);
      break;
  }
}

}  // namespace gpulab
