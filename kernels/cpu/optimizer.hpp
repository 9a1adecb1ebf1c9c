// Optimizer updates over flat parameter buffers, with PyTorch's exact update rules. The CUDA
// twins (kernels/cuda/optimizer.cuh) take the same arguments plus a stream.
#pragma once

#include <cstddef>

namespace gpulab::kernels {

// PyTorch SGD (dampening 0, not Nesterov): g += wd * p; v = momentum * v + g; p -= lr * v.
// With momentum 0, velocity may be nullptr.
void sgd_update(float* params, float* velocity, const float* grads, size_t n, float lr,
                float momentum, float weight_decay);

// PyTorch Adam (L2 weight decay added to the gradient) when decoupled is false, AdamW (weights
// shrunk by lr * wd before the step) when true. step counts from 1.
void adam_update(float* params, float* exp_avg, float* exp_avg_sq, const float* grads, size_t n,
                 float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled,
                 long step);

}  // namespace gpulab::kernels
