// Optimizer updates on the CPU: one pass over the flat buffers, split across threads.
#include "kernels/cpu/optimizer.hpp"

#include <cmath>

namespace gpulab::kernels {

void sgd_update(float* params, float* velocity, const float* grads, size_t n, float lr,
                float momentum, float weight_decay) {
  const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < count; ++i) {
    float g = grads[i] + weight_decay * params[i];
    if (momentum != 0.0f) {
      velocity[i] = momentum * velocity[i] + g;
      g = velocity[i];
    }
    params[i] -= lr * g;
  }
}

void adam_update(float* params, float* exp_avg, float* exp_avg_sq, const float* grads, size_t n,
                 float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled,
                 long step) {
  const float bias_correction1 = 1.0f - std::pow(beta1, static_cast<float>(step));
  const float bias_correction2 = 1.0f - std::pow(beta2, static_cast<float>(step));
  const float step_size = lr / bias_correction1;
  const float bias_correction2_sqrt = std::sqrt(bias_correction2);
  const float shrink = decoupled ? 1.0f - lr * weight_decay : 1.0f;
  const float l2 = decoupled ? 0.0f : weight_decay;
  const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < count; ++i) {
    const float p = params[i] * shrink;
    const float g = grads[i] + l2 * p;
    exp_avg[i] = beta1 * exp_avg[i] + (1.0f - beta1) * g;
    exp_avg_sq[i] = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
    const float denom = std::sqrt(exp_avg_sq[i]) / bias_correction2_sqrt + eps;
    params[i] = p - step_size * exp_avg[i] / denom;
  }
}

}  // namespace gpulab::kernels
