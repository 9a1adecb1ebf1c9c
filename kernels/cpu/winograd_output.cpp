// Winograd F(2x2, 3x3) transforms of the output tiles, y = A^T M A with A^T = [1 1 1 0;
// 0 1 -1 -1], and their adjoint for the backward pass; written as winograd.cpp's transforms are.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/winograd.hpp"

namespace gpulab::kernels::cpu::detail {
namespace {

// y, or relu(y) as relu_forward computes it (NaN gives 0). A template parameter, not a run-time
// flag, so that the loop below stays vectorized (with the flag it ran 10% slower than without
// the ReLU at all).
template <bool kRelu>
inline float activate(float y) {
  return !kRelu || y > 0.0f ? y : 0.0f;
}

// One output channel of winograd_output: A^T M A + b for each tile t, rows 2ty and 2ty + 1 at
// floats 2t, 2t + 1 of top and bottom.
template <bool kRelu>
void output_tiles(float* __restrict top, float* __restrict bottom, const float* m, size_t xi_stride,
                  int T, float b) {
#pragma omp simd
  for (int x = 0; x < T; ++x) {
    // A^T across each row i: (m0 + m1 + m2, m1 - m2 - m3) as l<i> and r<i>...
    const float* mx = m + x;
    const float m1 = mx[xi_stride], m2 = mx[2 * xi_stride];
    const float l0 = mx[0] + m1 + m2, r0 = m1 - m2 - mx[3 * xi_stride];
    const float m5 = mx[5 * xi_stride], m6 = mx[6 * xi_stride];
    const float l1 = mx[4 * xi_stride] + m5 + m6, r1 = m5 - m6 - mx[7 * xi_stride];
    const float m9 = mx[9 * xi_stride], m10 = mx[10 * xi_stride];
    const float l2 = mx[8 * xi_stride] + m9 + m10, r2 = m9 - m10 - mx[11 * xi_stride];
    const float m13 = mx[13 * xi_stride], m14 = mx[14 * xi_stride];
    const float l3 = mx[12 * xi_stride] + m13 + m14, r3 = m13 - m14 - mx[15 * xi_stride];
    // ...then down the left and right columns.
    top[2 * x] = activate<kRelu>(l0 + l1 + l2 + b);
    top[2 * x + 1] = activate<kRelu>(r0 + r1 + r2 + b);
    bottom[2 * x] = activate<kRelu>(l1 - l2 - l3 + b);
    bottom[2 * x + 1] = activate<kRelu>(r1 - r2 - r3 + b);
  }
}

}  // namespace

void winograd_output(float* out, const float* M, const float* bias, bool relu, int K,
                     const WinogradTiles& t, float* temp) {
  // out (K, Ho, Wo), M (16, K, T)
  const int T = t.tiles, row_floats = 2 * t.half;
  const size_t xi_stride = size_t(K) * T;
  float* top = temp;  // output rows 2ty and 2ty + 1, columns 2tx and 2tx + 1 at floats 2t, 2t + 1
  float* bottom = temp + 2 * size_t(T);
  for (int k = 0; k < K; ++k) {
    const float* m = M + size_t(k) * T;
    const float b = bias != nullptr ? bias[k] : 0.0f;
    (relu ? output_tiles<true> : output_tiles<false>)(top, bottom, m, xi_stride, T, b);
    for (int ho = 0; ho < t.out_h; ++ho)
      std::memcpy(out + (size_t(k) * t.out_h + ho) * t.out_w,
                  (ho & 1 ? bottom : top) + size_t(ho / 2) * row_floats, sizeof(float) * t.out_w);
  }
}

void winograd_output_adjoint(float* dM, const float* dout, int K, const WinogradTiles& t,
                             float* temp) {
  // dM (16, K, T), dout (K, Ho, Wo)
  const int T = t.tiles, row_floats = 2 * t.half;
  const size_t xi_stride = size_t(K) * T;
  float* top = temp;  // as in winograd_output
  float* bottom = temp + 2 * size_t(T);
  for (int k = 0; k < K; ++k) {
    // Dummy tiles and the half tiles past an odd edge get zero gradients.
    std::fill(top, top + 4 * size_t(T), 0.0f);
    for (int ho = 0; ho < t.out_h; ++ho)
      std::memcpy((ho & 1 ? bottom : top) + size_t(ho / 2) * row_floats,
                  dout + (size_t(k) * t.out_h + ho) * t.out_w, sizeof(float) * t.out_w);
    float* __restrict m = dM + size_t(k) * T;
#pragma omp simd
    for (int x = 0; x < T; ++x) {
      // A: (dy0, dy1) -> (dy0, dy0 + dy1, dy0 - dy1, -dy1). Down the left and right columns...
      const float t0 = top[2 * x], t1 = top[2 * x + 1], b0 = bottom[2 * x], b1 = bottom[2 * x + 1];
      const float l0 = t0, l1 = t0 + b0, l2 = t0 - b0, l3 = -b0;
      const float r0 = t1, r1 = t1 + b1, r2 = t1 - b1, r3 = -b1;
      // ...then across each row i.
      float* mx = m + x;
      mx[0] = l0, mx[xi_stride] = l0 + r0, mx[2 * xi_stride] = l0 - r0, mx[3 * xi_stride] = -r0;
      mx[4 * xi_stride] = l1, mx[5 * xi_stride] = l1 + r1, mx[6 * xi_stride] = l1 - r1;
      mx[7 * xi_stride] = -r1;
      mx[8 * xi_stride] = l2, mx[9 * xi_stride] = l2 + r2, mx[10 * xi_stride] = l2 - r2;
      mx[11 * xi_stride] = -r2;
      mx[12 * xi_stride] = l3, mx[13 * xi_stride] = l3 + r3, mx[14 * xi_stride] = l3 - r3;
      mx[15 * xi_stride] = -r3;
    }
  }
}

}  // namespace gpulab::kernels::cpu::detail
