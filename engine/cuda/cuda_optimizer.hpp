// The optimizer update on the GPU, the one update of this device kind (the CPU's is
// engine/model/optimizer.cpp): its state and the fused kernel of each rule.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/model/optimizer.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

class CudaOptimizer {
 public:
  // Allocates and zeroes the state for `count` parameters on the current device, on `stream`.
  CudaOptimizer(const OptimizerConfig& config, size_t count, cudaStream_t stream);
  // params += update(grads); lr: (1) and step: (1, from 1) in device memory, read when the
  // kernel runs, so one captured graph serves every step of a schedule.
  void enqueue(float* params, const float* grads, const float* lr, const uint64_t* step,
               cudaStream_t stream);

 private:
  OptimizerConfig config_;
  size_t count_;
  kernels::cuda::DeviceBuffer<float> first_, second_;  // velocity or exp_avg; exp_avg_sq
};

}  // namespace gpulab
