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

// conv2d_forward and conv2d_backward through Winograd F(2x2, 3x3), for shapes where
// winograd_applies (kernels/cpu/winograd.hpp).
void winograd_conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const Conv2dShape& s);
void winograd_conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* inp, const float* weight, const Conv2dShape& s);

}  // namespace gpulab::kernels::cpu::detail
