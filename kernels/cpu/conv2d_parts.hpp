// What the two fast convolutions share: conv2d.cpp (im2col + one GEMM per image) hands 3x3,
// stride-1 shapes to conv2d_winograd.cpp. Internal to the fast kernels.
#pragma once

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::cpu::detail {

// sums (K) += the sum of each of the K planes of P floats (a bias gradient).
inline void add_channel_sums(float* sums, const float* planes, int K, int P) {
  for (int k = 0; k < K; ++k) {
    const float* row = planes + size_t(k) * P;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int p = 0; p < P; ++p) sum += row[p];
    sums[k] += sum;
  }
}

// The gradient at a ReLU's input, masked (n) = out > 0 ? dout : 0 as relu_backward adds it, for
// one image of conv2d_relu_backward. Returns masked.
inline const float* relu_gradient(float* __restrict masked, const float* dout, const float* out,
                                  size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dout[i];  // loaded unconditionally, so that the select vectorizes
    masked[i] = out[i] > 0.0f ? g : 0.0f;
  }
  return masked;
}

// conv2d_forward (conv2d_relu_forward when relu) and conv2d_backward (conv2d_relu_backward, with
// the ReLU's output relu_out, when relu_out is not nullptr) through Winograd F(2x2, 3x3), for
// shapes where winograd_applies (kernels/cpu/winograd.hpp).
void winograd_conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                             bool relu, const Conv2dShape& s);
void winograd_conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* relu_out, const float* inp, const float* weight,
                              const Conv2dShape& s);

}  // namespace gpulab::kernels::cpu::detail
