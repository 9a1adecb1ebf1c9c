// SGD (with momentum) and Adam/AdamW, one pass over the flat buffers. The step's scalars (bias
// corrections) are recomputed by every thread from lr and step, which costs a few flops against
// a memory-bound loop and keeps them correct under graph replay.
#include <cmath>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/optimizer.cuh"

namespace gpulab::kernels::cuda {
namespace {

__global__ void sgd_update_kernel(float* params, float* velocity, const float* grads, size_t n,
                                  const float* lr, float momentum, float weight_decay) {
  const float rate = *lr;
  GPULAB_GRID_STRIDE_LOOP(i, n) {
    float g = grads[i] + weight_decay * params[i];
    if (momentum != 0.0f) {
      velocity[i] = momentum * velocity[i] + g;
      g = velocity[i];
    }
    params[i] -= rate * g;
  }
}

__global__ void adam_update_kernel(float* params, float* exp_avg, float* exp_avg_sq,
                                   const float* grads, size_t n, const float* lr, float beta1,
                                   float beta2, float eps, float weight_decay, bool decoupled,
                                   const uint64_t* step) {
  const float rate = *lr;
  const float t = static_cast<float>(*step);
  const float bias_correction1 = 1.0f - powf(beta1, t);
  const float bias_correction2 = 1.0f - powf(beta2, t);
  const float step_size = rate / bias_correction1;
  const float bias_correction2_sqrt = sqrtf(bias_correction2);
  const float shrink = decoupled ? 1.0f - rate * weight_decay : 1.0f;
  const float l2 = decoupled ? 0.0f : weight_decay;
  GPULAB_GRID_STRIDE_LOOP(i, n) {
    const float p = params[i] * shrink;
    const float g = grads[i] + l2 * p;
    const float m = beta1 * exp_avg[i] + (1.0f - beta1) * g;
    const float v = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float denom = sqrtf(v) / bias_correction2_sqrt + eps;
    params[i] = p - step_size * m / denom;
  }
}

}  // namespace

void sgd_update(float* params, float* velocity, const float* grads, size_t n, const float* lr,
                float momentum, float weight_decay, cudaStream_t stream) {
  if (n == 0) return;
  sgd_update_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(params, velocity, grads, n,
                                                                        lr, momentum, weight_decay);
  GPULAB_CUDA_CHECK_LAUNCH("sgd_update_kernel");
}

void adam_update(float* params, float* exp_avg, float* exp_avg_sq, const float* grads, size_t n,
                 const float* lr, float beta1, float beta2, float eps, float weight_decay,
                 bool decoupled, const uint64_t* step, cudaStream_t stream) {
  if (n == 0) return;
  adam_update_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(
      params, exp_avg, exp_avg_sq, grads, n, lr, beta1, beta2, eps, weight_decay, decoupled, step);
  GPULAB_CUDA_CHECK_LAUNCH("adam_update_kernel");
}

}  // namespace gpulab::kernels::cuda
