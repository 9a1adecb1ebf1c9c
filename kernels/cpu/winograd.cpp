// Winograd F(2x2, 3x3) transforms of the filters and of the input tiles (winograd_output.cpp has
// the output tiles'). Each is one loop over all the tiles of a channel, written out with a tile's
// 16 values in registers so that `omp simd` vectorizes it over the tiles with baseline SSE2: 2-3x
// faster than the same maps as a chain of row-by-row passes. The matrices:
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   (input tiles: V = B^T d B)
//   A^T = [1 1 1 0; 0 1 -1 -1]                      (output tiles: y = A^T M A)
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] (filters: U = G g G^T)
#include "kernels/cpu/winograd.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace gpulab::kernels::cpu::detail {
namespace {

// u = G a for G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], entries `stride` apart.
inline void g(float* u, size_t stride, float a, float b, float c) {
  u[0] = a;
  u[stride] = 0.5f * (a + b + c);
  u[2 * stride] = 0.5f * (a - b + c);
  u[3 * stride] = c;
}

// a = G^T du: the adjoint of g.
inline void g_adjoint(float* a, size_t stride, float d0, float d1, float d2, float d3) {
  a[0] = d0 + 0.5f * (d1 + d2);
  a[stride] = 0.5f * (d1 - d2);
  a[2 * stride] = 0.5f * (d1 + d2) + d3;
}

// to (W, C) = image row `from` of each of C channels channel_floats apart, transposed: 4x4
// blocks in SSE registers (x86-64's baseline), the rest one float at a time. An image of the
// pytorch-example's second layer took 8 us one float at a time.
void transpose_row(float* __restrict to, const float* from, size_t channel_floats, int W, int C) {
  int w = 0;
#if defined(__SSE2__)
  for (; w + 4 <= W; w += 4) {
    int c = 0;
    for (; c + 4 <= C; c += 4) {
      const float* f = from + c * channel_floats + w;
      __m128 r0 = _mm_loadu_ps(f), r1 = _mm_loadu_ps(f + channel_floats);
      __m128 r2 = _mm_loadu_ps(f + 2 * channel_floats), r3 = _mm_loadu_ps(f + 3 * channel_floats);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      float* o = to + size_t(w) * C + c;
      _mm_storeu_ps(o, r0);
      _mm_storeu_ps(o + C, r1);
      _mm_storeu_ps(o + 2 * C, r2);
      _mm_storeu_ps(o + 3 * C, r3);
    }
    for (; c < C; ++c)
      for (int j = 0; j < 4; ++j) to[size_t(w + j) * C + c] = from[c * channel_floats + w + j];
  }
#endif
  for (; w < W; ++w)
    for (int c = 0; c < C; ++c) to[size_t(w) * C + c] = from[c * channel_floats + w];
}

// The row of the even-row or the odd-row plane that holds padded row `row`.
inline float* plane_row(float* plane, const WinogradTiles& t, int row) {
  return plane + (row & 1) * t.parity_plane_floats() + size_t(row / 2) * 2 * t.half;
}

}  // namespace

bool winograd_applies(const Conv2dShape& s) {
  // The channel counts are the GEMMs' inner dimensions. Forward + backward at batch 64 on 28x28
  // inputs, 2 threads, against im2col: C = 1 -> 32 channels 1.2 against 0.5 ms, 4 -> 32 1.5
  // against 1.3, 8 -> 8 0.8 against 1.3, 8 -> 32 2.0 against 3.3, 16 -> 16 2.0 against 4.4.
  return s.kernel_h == 3 && s.kernel_w == 3 && s.stride == 1 && s.in_channels >= 8 &&
         s.out_channels >= 8;
}

WinogradTiles::WinogradTiles(const Conv2dShape& s)
    : out_h(s.out_height()),
      out_w(s.out_width()),
      tiles_h((out_h + 1) / 2),
      tiles_w((out_w + 1) / 2),
      half(tiles_w + 1),
      tiles(tiles_h * half),
      padding(s.padding),
      in_h(s.in_height),
      in_w(s.in_width) {}

void winograd_weights(float* U, const float* weight, int K, int C, int kc_begin, int kc_end) {
  // U (16, K, C), weight (K, C, 3, 3)
  const size_t KC = size_t(K) * C;
  for (int kc = kc_begin; kc < kc_end; ++kc) {
    const float* w = weight + size_t(kc) * 9;
    float rows[4][3];  // G g
    for (int q = 0; q < 3; ++q) g(&rows[0][q], 3, w[q], w[3 + q], w[6 + q]);
    for (int i = 0; i < 4; ++i) g(U + 4 * i * KC + kc, KC, rows[i][0], rows[i][1], rows[i][2]);
  }
}

void winograd_weights_adjoint(float* dweight, const float* dU, size_t stride) {
  // dweight (3, 3) += G^T dU G
  float rows[4][3];  // dU G
  for (int i = 0; i < 4; ++i)
    g_adjoint(rows[i], 1, dU[4 * i * stride], dU[(4 * i + 1) * stride], dU[(4 * i + 2) * stride],
              dU[(4 * i + 3) * stride]);
  float dw[3][3];
  for (int q = 0; q < 3; ++q)
    g_adjoint(&dw[0][q], 3, rows[0][q], rows[1][q], rows[2][q], rows[3][q]);
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) dweight[3 * r + q] += dw[r][q];
}

void winograd_input(float* V, const float* image, int C, const WinogradTiles& t, float* plane,
                    float*) {
  // V (16, C, T), image (C, H, W)
  const int T = t.tiles, row_floats = 2 * t.half;
  const size_t xi_stride = size_t(C) * T;
  const float* even = plane;  // rows 2ty at 2t, rows 2ty + 2 at 2t + row_floats
  const float* odd = plane + t.parity_plane_floats();
  for (int c = 0; c < C; ++c) {
    const float* channel = image + size_t(c) * t.in_h * t.in_w;
    std::fill(plane, plane + t.plane_floats(), 0.0f);
    for (int h = 0; h < t.in_h; ++h)
      std::memcpy(plane_row(plane, t, h + t.padding) + t.padding, channel + size_t(h) * t.in_w,
                  sizeof(float) * t.in_w);
    float* __restrict v = V + size_t(c) * T;
#pragma omp simd
    for (int x = 0; x < T; ++x) {
      const float* r0 = even + 2 * x;
      const float* r1 = odd + 2 * x;
      const float* r2 = r0 + row_floats;
      const float* r3 = r1 + row_floats;
      // B^T d down each column q, giving row i of the column as d<i><q>...
      const float d00 = r0[0] - r2[0], d10 = r1[0] + r2[0], d20 = r2[0] - r1[0],
                  d30 = r1[0] - r3[0];
      const float d01 = r0[1] - r2[1], d11 = r1[1] + r2[1], d21 = r2[1] - r1[1],
                  d31 = r1[1] - r3[1];
      const float d02 = r0[2] - r2[2], d12 = r1[2] + r2[2], d22 = r2[2] - r1[2],
                  d32 = r1[2] - r3[2];
      const float d03 = r0[3] - r2[3], d13 = r1[3] + r2[3], d23 = r2[3] - r1[3],
                  d33 = r1[3] - r3[3];
      // ...then across each row i: V[4i + j].
      v[0 * xi_stride + x] = d00 - d02;
      v[1 * xi_stride + x] = d01 + d02;
      v[2 * xi_stride + x] = d02 - d01;
      v[3 * xi_stride + x] = d01 - d03;
      v[4 * xi_stride + x] = d10 - d12;
      v[5 * xi_stride + x] = d11 + d12;
      v[6 * xi_stride + x] = d12 - d11;
      v[7 * xi_stride + x] = d11 - d13;
      v[8 * xi_stride + x] = d20 - d22;
      v[9 * xi_stride + x] = d21 + d22;
      v[10 * xi_stride + x] = d22 - d21;
      v[11 * xi_stride + x] = d21 - d23;
      v[12 * xi_stride + x] = d30 - d32;
      v[13 * xi_stride + x] = d31 + d32;
      v[14 * xi_stride + x] = d32 - d31;
      v[15 * xi_stride + x] = d31 - d33;
    }
  }
}

void winograd_input_tiles_first(float* Vt, const float* image, int C, const WinogradTiles& t,
                                float* plane) {
  // Vt (16, T, C), image (C, H, W); plane (2 * tiles_h + 2, 2 * half, C)
  const int plane_h = 2 * t.tiles_h + 2, plane_w = 2 * t.half;
  if (t.padding > 0 || plane_h != t.in_h || plane_w != t.in_w)
    std::fill(plane, plane + t.channels_last_floats(C), 0.0f);
  for (int h = 0; h < t.in_h; ++h)
    transpose_row(plane + (size_t(h + t.padding) * plane_w + t.padding) * C,
                  image + size_t(h) * t.in_w, size_t(t.in_h) * t.in_w, t.in_w, C);
  const size_t xi_stride = size_t(t.tiles) * C, row = size_t(plane_w) * C;
  for (int ty = 0; ty < t.tiles_h; ++ty)
    for (int tx = 0; tx < t.half; ++tx) {
      float* __restrict v = Vt + (size_t(ty) * t.half + tx) * C;
      if (tx == t.tiles_w) {  // the dummy tile: zero, as its output gradient
        for (int xi = 0; xi < kWinogradPoints; ++xi) std::fill_n(v + xi * xi_stride, C, 0.0f);
        continue;
      }
      const float* r0 = plane + 2 * ty * row + 2 * tx * size_t(C);
      const float* r1 = r0 + row;
      const float* r2 = r1 + row;
      const float* r3 = r2 + row;
#pragma omp simd
      for (int c = 0; c < C; ++c) {
        // As winograd_input, with column q of the tile at q * C.
        const float d00 = r0[c] - r2[c], d10 = r1[c] + r2[c], d20 = r2[c] - r1[c],
                    d30 = r1[c] - r3[c];
        const int c1 = C + c, c2 = 2 * C + c, c3 = 3 * C + c;
        const float d01 = r0[c1] - r2[c1], d11 = r1[c1] + r2[c1], d21 = r2[c1] - r1[c1],
                    d31 = r1[c1] - r3[c1];
        const float d02 = r0[c2] - r2[c2], d12 = r1[c2] + r2[c2], d22 = r2[c2] - r1[c2],
                    d32 = r1[c2] - r3[c2];
        const float d03 = r0[c3] - r2[c3], d13 = r1[c3] + r2[c3], d23 = r2[c3] - r1[c3],
                    d33 = r1[c3] - r3[c3];
        v[0 * xi_stride + c] = d00 - d02;
        v[1 * xi_stride + c] = d01 + d02;
        v[2 * xi_stride + c] = d02 - d01;
        v[3 * xi_stride + c] = d01 - d03;
        v[4 * xi_stride + c] = d10 - d12;
        v[5 * xi_stride + c] = d11 + d12;
        v[6 * xi_stride + c] = d12 - d11;
        v[7 * xi_stride + c] = d11 - d13;
        v[8 * xi_stride + c] = d20 - d22;
        v[9 * xi_stride + c] = d21 + d22;
        v[10 * xi_stride + c] = d22 - d21;
        v[11 * xi_stride + c] = d21 - d23;
        v[12 * xi_stride + c] = d30 - d32;
        v[13 * xi_stride + c] = d31 + d32;
        v[14 * xi_stride + c] = d32 - d31;
        v[15 * xi_stride + c] = d31 - d33;
      }
    }
}

void winograd_input_adjoint(float* dimage, const float* dV, int C, const WinogradTiles& t,
                            float* plane, float* temp) {
  // dimage (C, H, W) +=, dV (16, C, T)
  const int T = t.tiles, half = t.half;
  const size_t xi_stride = size_t(C) * T, stride = t.temp_stride();
  // q[4 a + b] holds B dV B^T at (a, b) per tile, after half + 1 zeros and before as many, so
  // that the overlapping tiles are summed below without bounds checks.
  float* q[16];
  for (int ab = 0; ab < 16; ++ab) {
    q[ab] = temp + ab * stride + half + 1;
    std::fill(q[ab] - half - 1, q[ab], 0.0f);
    std::fill(q[ab] + T, q[ab] + T + half + 1, 0.0f);
  }
  float* even = plane;
  float* odd = plane + t.parity_plane_floats();
  const int plane_tiles = (t.tiles_h + 1) * half;  // the planes' pairs of floats
  for (int c = 0; c < C; ++c) {
    const float* dv = dV + size_t(c) * T;
#pragma omp simd
    for (int x = 0; x < T; ++x) {
      // B's rows: (d0, d1, d2, d3) -> (d0, d1 - d2 + d3, d1 + d2 - d0, -d3). Across each row i
      // first, giving e<i><b> at column b...
      const float* d = dv + x;
      const float v0 = d[0], v1 = d[xi_stride], v2 = d[2 * xi_stride], v3 = d[3 * xi_stride];
      const float e00 = v0, e01 = v1 - v2 + v3, e02 = v1 + v2 - v0, e03 = -v3;
      const float v4 = d[4 * xi_stride], v5 = d[5 * xi_stride], v6 = d[6 * xi_stride],
                  v7 = d[7 * xi_stride];
      const float e10 = v4, e11 = v5 - v6 + v7, e12 = v5 + v6 - v4, e13 = -v7;
      const float v8 = d[8 * xi_stride], v9 = d[9 * xi_stride], v10 = d[10 * xi_stride],
                  v11 = d[11 * xi_stride];
      const float e20 = v8, e21 = v9 - v10 + v11, e22 = v9 + v10 - v8, e23 = -v11;
      const float v12 = d[12 * xi_stride], v13 = d[13 * xi_stride], v14 = d[14 * xi_stride],
                  v15 = d[15 * xi_stride];
      const float e30 = v12, e31 = v13 - v14 + v15, e32 = v13 + v14 - v12, e33 = -v15;
      // ...then down each column b: input tile row a gets q[4a + b].
      q[0][x] = e00, q[4][x] = e10 - e20 + e30, q[8][x] = e10 + e20 - e00, q[12][x] = -e30;
      q[1][x] = e01, q[5][x] = e11 - e21 + e31, q[9][x] = e11 + e21 - e01, q[13][x] = -e31;
      q[2][x] = e02, q[6][x] = e12 - e22 + e32, q[10][x] = e12 + e22 - e02, q[14][x] = -e32;
      q[3][x] = e03, q[7][x] = e13 - e23 + e33, q[11][x] = e13 + e23 - e03, q[15][x] = -e33;
    }
    // Plane float 2u + p of row parity r collects tile u's (r, p), tile u - 1's (r, p + 2),
    // and from the tile row above, tile u - half's (r + 2, p) and u - half - 1's (r + 2, p + 2).
    for (int r = 0; r < 2; ++r) {
      float* __restrict rows = r == 0 ? even : odd;
      const float *p0 = q[4 * r], *p1 = q[4 * r + 1], *p2 = q[4 * r + 2] - 1,
                  *p3 = q[4 * r + 3] - 1;
      const float *p8 = q[4 * r + 8] - half, *p9 = q[4 * r + 9] - half;
      const float *p10 = q[4 * r + 10] - half - 1, *p11 = q[4 * r + 11] - half - 1;
#pragma omp simd
      for (int u = 0; u < plane_tiles; ++u) {
        rows[2 * u] = p0[u] + p2[u] + p8[u] + p10[u];
        rows[2 * u + 1] = p1[u] + p3[u] + p9[u] + p11[u];
      }
    }
    float* channel = dimage + size_t(c) * t.in_h * t.in_w;
    for (int h = 0; h < t.in_h; ++h) {
      const float* from = plane_row(plane, t, h + t.padding) + t.padding;
      float* __restrict to = channel + size_t(h) * t.in_w;
      for (int w = 0; w < t.in_w; ++w) to[w] += from[w];
    }
  }
}

}  // namespace gpulab::kernels::cpu::detail
