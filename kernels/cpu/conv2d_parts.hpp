// What the fast convolutions share: conv2d.cpp (im2col + one GEMM per image) hands 3x3,
// stride-1 shapes to conv2d_winograd.cpp, and both run the fused ops (conv2d_relu_*,
// conv2d_relu_maxpool_*) image by image. Internal to the fast kernels.
#pragma once

#include <algorithm>

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

// maxpool2d_forward on one image (s.channels planes), on the calling thread (pool.cpp).
void maxpool_image(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s);

// What follows the convolution inside a fused op: a ReLU, and maybe a max pooling after it,
// whose output and argmax the op then writes instead of the convolution's output.
struct ConvEpilogue {
  bool relu = false;
  const Pool2dShape* pool = nullptr;
  int32_t* argmax = nullptr;
};

// Where a fused op's backward finds the convolution's output gradient: dout itself; or dout at
// a ReLU's output relu_out; or dout at a max pooling's output pool_out (with its argmax) that
// follows the ReLU.
struct ConvGradientSource {
  const float* relu_out = nullptr;
  const Pool2dShape* pool = nullptr;
  const float* pool_out = nullptr;
  const int32_t* argmax = nullptr;
};

// The gradient at a ReLU's input, masked (n) = out > 0 ? dout : 0 as relu_backward adds it.
inline void relu_gradient(float* __restrict masked, const float* dout, const float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dout[i];  // loaded unconditionally, so that the select vectorizes
    masked[i] = out[i] > 0.0f ? g : 0.0f;
  }
}

// The convolution's output gradient for image n, (K, Ho, Wo): dout's image n as it is, or
// computed into `buffer`. Through a max pooling, only the pooled positions get a gradient, and
// the ReLU's derivative there is (pooled output > 0), since the pooled value is the ReLU output
// at that position: the ReLU's output itself is not needed.
inline const float* conv_output_gradient(float* buffer, const float* dout, int n, size_t out_image,
                                         const ConvGradientSource& g) {
  if (g.pool != nullptr) {
    const Pool2dShape& s = *g.pool;
    const size_t plane_in = size_t(s.in_height) * s.in_width;
    const size_t plane_out = size_t(s.out_height()) * s.out_width();
    const size_t pooled_image = plane_out * s.channels;
    const float* d = dout + n * pooled_image;
    const float* out = g.pool_out + n * pooled_image;
    const int32_t* at = g.argmax + n * pooled_image;
    std::fill(buffer, buffer + out_image, 0.0f);
    for (int c = 0; c < s.channels; ++c)  // a select, not a branch: ReLU signs are random
      for (size_t o = c * plane_out; o < (c + 1) * plane_out; ++o)
        buffer[c * plane_in + at[o]] += out[o] > 0.0f ? d[o] : 0.0f;
    return buffer;
  }
  const float* dout_n = dout + n * out_image;
  if (g.relu_out == nullptr) return dout_n;
  relu_gradient(buffer, dout_n, g.relu_out + n * out_image, out_image);
  return buffer;
}

// The fused epilogue's last step for image n: pools conv_image (K, Ho, Wo) into out and argmax
// when a pooling follows. Does nothing otherwise (conv_image was out's image n already).
inline void pool_after_conv(float* out, const float* conv_image, int n, const ConvEpilogue& e) {
  if (e.pool == nullptr) return;
  const size_t pooled_image = size_t(e.pool->channels) * e.pool->out_height() * e.pool->out_width();
  maxpool_image(out + n * pooled_image, e.argmax + n * pooled_image, conv_image, *e.pool);
}

// conv2d_forward (and the fused forwards, with an epilogue) and conv2d_backward (and the fused
// backwards, with a gradient source) through Winograd F(2x2, 3x3), for shapes where
// winograd_applies (kernels/cpu/winograd.hpp).
void winograd_conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const Conv2dShape& s, const ConvEpilogue& e);
void winograd_conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* inp, const float* weight, const Conv2dShape& s,
                              const ConvGradientSource& g);

}  // namespace gpulab::kernels::cpu::detail
