// Optimizer updates on the CPU: one pass over the flat buffers, split across threads.
#include "kernels/cpu/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/parallel.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define GPULAB_X86_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPULAB_X86_CLONES
#endif

namespace gpulab::kernels {

void sgd_update(float* params, float* velocity, const float* grads, size_t n, float lr,
                float momentum, float weight_decay) {
  const long count = static_cast<long>(n);
#pragma omp parallel for num_threads(cpu::detail::threads()) schedule(static)
  for (long i = 0; i < count; ++i) {
    float g = grads[i] + weight_decay * params[i];
    if (momentum != 0.0f) {
      velocity[i] = momentum * velocity[i] + g;
      g = velocity[i];
    }
    params[i] -= lr * g;
  }
}

namespace {

// The Adam update of elements [begin, end). AVX2 and AVX-512 clones are picked at load time (as
// for dropout_mask); the file is built without FP contraction, so that every clone rounds
// exactly as the baseline one and a run's bits do not depend on the machine's vector width.
struct AdamStep {
  float shrink, l2, beta1, beta2, step_size, bias_correction2_sqrt, eps;
};
GPULAB_X86_CLONES void adam_range(float* __restrict params, float* __restrict exp_avg,
                                  float* __restrict exp_avg_sq, const float* __restrict grads,
                                  long begin, long end, AdamStep a) {
  for (long i = begin; i < end; ++i) {
    const float p = params[i] * a.shrink;
    const float g = grads[i] + a.l2 * p;
    exp_avg[i] = a.beta1 * exp_avg[i] + (1.0f - a.beta1) * g;
    exp_avg_sq[i] = a.beta2 * exp_avg_sq[i] + (1.0f - a.beta2) * g * g;
    const float denom = std::sqrt(exp_avg_sq[i]) / a.bias_correction2_sqrt + a.eps;
    params[i] = p - a.step_size * exp_avg[i] / denom;
  }
}

}  // namespace

void adam_update(float* params, float* exp_avg, float* exp_avg_sq, const float* grads, size_t n,
                 float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled,
                 long step) {
  const float bias_correction1 = 1.0f - std::pow(beta1, static_cast<float>(step));
  const float bias_correction2 = 1.0f - std::pow(beta2, static_cast<float>(step));
  const AdamStep a{decoupled ? 1.0f - lr * weight_decay : 1.0f,
                   decoupled ? 0.0f : weight_decay,
                   beta1,
                   beta2,
                   lr / bias_correction1,
                   std::sqrt(bias_correction2),
                   eps};
  // Chunks of 16K floats (64 KB per array), split over the threads.
  constexpr long kChunk = 1 << 14;
  const long count = static_cast<long>(n), chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(cpu::detail::threads()) schedule(static)
  for (long chunk = 0; chunk < chunks; ++chunk)
    adam_range(params, exp_avg, exp_avg_sq, grads, chunk * kChunk,
               std::min(count, (chunk + 1) * kChunk), a);
}

}  // namespace gpulab::kernels
