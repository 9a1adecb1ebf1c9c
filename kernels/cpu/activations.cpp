// Fast elementwise activations: vectorizable loops split over the OpenMP threads when the
// tensor is large enough to repay the fork.
#include <cmath>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

namespace gpulab::kernels::cpu {

void relu_forward(float* out, const float* inp, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float* dinp, const float* dout, const float* out, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) {
    const float g = dout[i];  // loaded unconditionally, so that the select vectorizes
    dinp[i] += out[i] > 0.0f ? g : 0.0f;
  }
}

void tanh_forward(float* out, const float* inp, size_t n) {
  // tanh costs tens of cycles per element, so even small tensors are worth splitting.
#pragma omp parallel for num_threads(detail::threads()) if (n >= detail::kMinParallelElements / 16)
  for (size_t i = 0; i < n; ++i) out[i] = std::tanh(inp[i]);
}

void tanh_backward(float* dinp, const float* dout, const float* out, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

}  // namespace gpulab::kernels::cpu
