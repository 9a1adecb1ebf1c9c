// Fast dropout (multiply by the mask) and dropout_mask, which draws the mask from the Philox
// counter-based generator shared with the CUDA kernels.
#include <stdexcept>
#include <string>

#include "kernels/counter_rng.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

namespace gpulab::kernels {

void dropout_mask(float* mask, size_t n, float p, uint64_t seed, uint64_t counter) {
  // mask (n): 0 or 1/(1-p)
  if (!(p >= 0.0f && p < 1.0f))
    throw std::invalid_argument("dropout_mask: p = " + std::to_string(p) +
                                " is outside [0, 1)");
  // Computed in float so that the CUDA kernel, which does the same, writes the same value.
  const float scale = 1.0f / (1.0f - p);
  const size_t blocks = (n + 3) / 4;
  // One Philox call yields four uniforms, so each iteration fills four elements.
#pragma omp parallel for num_threads(cpu::detail::threads()) \
    if (n >= cpu::detail::kMinParallelElements / 8) schedule(static)
  for (size_t block = 0; block < blocks; ++block) {
    float u[4];
    rng::uniform4(u, seed, counter, block);
    const size_t first = block * 4;
    for (size_t j = 0; j < 4 && first + j < n; ++j) mask[first + j] = u[j] >= p ? scale : 0.0f;
  }
}

namespace cpu {

void dropout_forward(float* out, const float* inp, const float* mask, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] * mask[i];
}

void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) dinp[i] += dout[i] * mask[i];
}

}  // namespace cpu
}  // namespace gpulab::kernels
