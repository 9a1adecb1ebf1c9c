// Fused optimizer updates on the GPU with PyTorch's rules, the same formulas as
// kernels/cpu/optimizer.hpp. The learning rate and the step number are read from DEVICE memory
// when the kernel runs, so one captured CUDA graph serves every step of a schedule.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpulab::kernels::cuda {

// params, velocity (nullptr with momentum 0), grads: (n); lr: (1) on the device
void sgd_update(float* params, float* velocity, const float* grads, size_t n, const float* lr,
                float momentum, float weight_decay, cudaStream_t stream);

// params, exp_avg, exp_avg_sq, grads: (n); lr: (1) and step: (1, from 1) on the device
void adam_update(float* params, float* exp_avg, float* exp_avg_sq, const float* grads, size_t n,
                 const float* lr, float beta1, float beta2, float eps, float weight_decay,
                 bool decoupled, const uint64_t* step, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
