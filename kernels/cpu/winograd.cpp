// Winograd F(2x2, 3x3) transforms. Each works on whole rows of tiles, so that every inner loop
// runs over contiguous floats and the baseline SSE2 vectorizer handles it.
#include "kernels/cpu/winograd.hpp"

#include <algorithm>
#include <cstring>

namespace gpulab::kernels::cpu::detail {
namespace {

// v = B^T a over four rows (or columns) a0..a3 of 4x4 tiles, n tiles side by side, with
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
inline void bt(float* __restrict v0, float* __restrict v1, float* __restrict v2,
               float* __restrict v3, const float* a0, const float* a1, const float* a2,
               const float* a3, int n) {
  for (int x = 0; x < n; ++x) {
    const float p = a0[x], q = a1[x], r = a2[x], s = a3[x];
    v0[x] = p - r;
    v1[x] = q + r;
    v2[x] = r - q;
    v3[x] = q - s;
  }
}

// a += B dv: the adjoint of bt.
inline void bt_adjoint_add(float* __restrict a0, float* __restrict a1, float* __restrict a2,
                           float* __restrict a3, const float* dv0, const float* dv1,
                           const float* dv2, const float* dv3, int n) {
  for (int x = 0; x < n; ++x) {
    const float p = dv0[x], q = dv1[x], r = dv2[x], s = dv3[x];
    a0[x] += p;
    a1[x] += q - r + s;
    a2[x] += q + r - p;
    a3[x] -= s;
  }
}

// y = A^T m over four rows (or columns), with A^T = [1 1 1 0; 0 1 -1 -1].
inline void at(float* __restrict y0, float* __restrict y1, const float* m0, const float* m1,
               const float* m2, const float* m3, int n) {
  for (int x = 0; x < n; ++x) {
    y0[x] = m0[x] + m1[x] + m2[x];
    y1[x] = m1[x] - m2[x] - m3[x];
  }
}

// dm = A dy: the adjoint of at.
inline void at_adjoint(float* __restrict m0, float* __restrict m1, float* __restrict m2,
                       float* __restrict m3, const float* dy0, const float* dy1, int n) {
  for (int x = 0; x < n; ++x) {
    m0[x] = dy0[x];
    m1[x] = dy0[x] + dy1[x];
    m2[x] = dy0[x] - dy1[x];
    m3[x] = -dy1[x];
  }
}

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

// Image column w sits at padded column w + padding, in the even or the odd columns. With an
// even padding, image columns 2x and 2x+1 go to even[padding/2 + x] and odd[padding/2 + x];
// with an odd one, to odd[padding/2 + x] and even[padding/2 + 1 + x].
struct RowSplit {
  float* first;   // where image column 2x goes, at x
  float* second;  // where image column 2x + 1 goes, at x
};
inline RowSplit split_at(float* even, float* odd, int padding) {
  if (padding % 2 == 0) return {even + padding / 2, odd + padding / 2};
  return {odd + padding / 2, even + padding / 2 + 1};
}

void load_row(float* even, float* odd, const float* row, int width, int padding) {
  const RowSplit to = split_at(even, odd, padding);
  float* __restrict first = to.first;
  float* __restrict second = to.second;
  for (int x = 0; x < width / 2; ++x) {
    first[x] = row[2 * x];
    second[x] = row[2 * x + 1];
  }
  if (width % 2 != 0) first[width / 2] = row[width - 1];
}

void store_row_add(float* __restrict row, float* even, float* odd, int width, int padding) {
  const RowSplit from = split_at(even, odd, padding);
  const float* first = from.first;
  const float* second = from.second;
  for (int x = 0; x < width / 2; ++x) {
    row[2 * x] += first[x];
    row[2 * x + 1] += second[x];
  }
  if (width % 2 != 0) row[width - 1] += first[width / 2];
}

// The sub-plane of padded rows with parity row_odd and columns with parity col_odd.
inline float* sub_plane(float* plane, const WinogradTiles& t, int row_odd, int col_odd) {
  return plane + (2 * row_odd + col_odd) * t.sub_plane_floats();
}

}  // namespace

bool winograd_applies(const Conv2dShape& s) {
  // The channel counts are the GEMMs' inner dimensions. Measured at batch 64 on 28x28 inputs, 2
  // threads, forward + backward against im2col: C = 4 -> 32 channels 2.4 against 1.4 ms, C = 8
  // -> 8 even (1.37 against 1.40 ms), C = 8 -> 32 3.3 against 3.7, C = 16 -> 16 3.4 against 5.1.
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
                    float* temp) {
  // V (16, C, T), image (C, H, W)
  const int T = t.tiles, half = t.half;
  const size_t xi_stride = size_t(C) * T, stride = t.temp_stride();
  float* down[4][2];  // B^T d down the columns: row i, even and odd columns, T + 1 tiles each
  for (int i = 0; i < 4; ++i)
    for (int col_odd = 0; col_odd < 2; ++col_odd)
      down[i][col_odd] = temp + (2 * i + col_odd) * stride;
  for (int c = 0; c < C; ++c) {
    const float* channel = image + size_t(c) * t.in_h * t.in_w;
    std::fill(plane, plane + t.plane_floats(), 0.0f);
    for (int h = 0; h < t.in_h; ++h) {
      const int row = h + t.padding;
      const size_t at = size_t(row / 2) * half;
      load_row(sub_plane(plane, t, row & 1, 0) + at, sub_plane(plane, t, row & 1, 1) + at,
               channel + size_t(h) * t.in_w, t.in_w, t.padding);
    }
    // Down: tile row ty's rows 2ty .. 2ty+3 are even-row and odd-row sub-plane rows ty, ty + 1.
    for (int col_odd = 0; col_odd < 2; ++col_odd) {
      const float* even_rows = sub_plane(plane, t, 0, col_odd);
      const float* odd_rows = sub_plane(plane, t, 1, col_odd);
      bt(down[0][col_odd], down[1][col_odd], down[2][col_odd], down[3][col_odd], even_rows,
         odd_rows, even_rows + half, odd_rows + half, T + 1);
    }
    // Across: tile t's columns 2tx .. 2tx+3 are even[t], odd[t], even[t+1], odd[t+1].
    for (int i = 0; i < 4; ++i) {
      float* v = V + size_t(4 * i) * xi_stride + size_t(c) * T;
      bt(v, v + xi_stride, v + 2 * xi_stride, v + 3 * xi_stride, down[i][0], down[i][1],
         down[i][0] + 1, down[i][1] + 1, T);
    }
  }
}

void winograd_input_adjoint(float* dimage, const float* dV, int C, const WinogradTiles& t,
                            float* plane, float* temp) {
  // dimage (C, H, W) +=, dV (16, C, T)
  const int T = t.tiles, half = t.half;
  const size_t xi_stride = size_t(C) * T, stride = t.temp_stride();
  float* down[4][2];  // as in winograd_input, T + 1 tiles each
  for (int i = 0; i < 4; ++i)
    for (int col_odd = 0; col_odd < 2; ++col_odd)
      down[i][col_odd] = temp + (2 * i + col_odd) * stride;
  float* part = temp + 8 * stride;  // four more temporaries
  for (int c = 0; c < C; ++c) {
    // Across, adjoint: tile t adds to even[t], odd[t], even[t+1] and odd[t+1].
    for (int i = 0; i < 4; ++i) {
      const float* dv = dV + size_t(4 * i) * xi_stride + size_t(c) * T;
      std::fill(part, part + 4 * stride, 0.0f);
      bt_adjoint_add(part, part + stride, part + 2 * stride, part + 3 * stride, dv, dv + xi_stride,
                     dv + 2 * xi_stride, dv + 3 * xi_stride, T);
      float* even = down[i][0];
      float* odd = down[i][1];
      even[0] = part[0];
      odd[0] = part[stride];
      for (int x = 1; x < T; ++x) {
        even[x] = part[x] + part[2 * stride + x - 1];
        odd[x] = part[stride + x] + part[3 * stride + x - 1];
      }
      even[T] = part[2 * stride + T - 1];
      odd[T] = part[3 * stride + T - 1];
    }
    // Down, adjoint: into sub-plane rows ty and ty + 1.
    std::fill(plane, plane + t.plane_floats(), 0.0f);
    for (int col_odd = 0; col_odd < 2; ++col_odd) {
      float* even_rows = sub_plane(plane, t, 0, col_odd);
      float* odd_rows = sub_plane(plane, t, 1, col_odd);
      std::fill(part, part + 4 * stride, 0.0f);
      bt_adjoint_add(part, part + stride, part + 2 * stride, part + 3 * stride, down[0][col_odd],
                     down[1][col_odd], down[2][col_odd], down[3][col_odd], T + 1);
      for (int x = 0; x <= T; ++x) {
        even_rows[x] += part[x];
        odd_rows[x] += part[stride + x];
      }
      for (int x = 0; x <= T; ++x) {
        even_rows[half + x] += part[2 * stride + x];
        odd_rows[half + x] += part[3 * stride + x];
      }
    }
    float* channel = dimage + size_t(c) * t.in_h * t.in_w;
    for (int h = 0; h < t.in_h; ++h) {
      const int row = h + t.padding;
      const size_t at = size_t(row / 2) * half;
      store_row_add(channel + size_t(h) * t.in_w, sub_plane(plane, t, row & 1, 0) + at,
                    sub_plane(plane, t, row & 1, 1) + at, t.in_w, t.padding);
    }
  }
}

void winograd_output(float* out, const float* M, const float* bias, int K, const WinogradTiles& t,
                     float* temp) {
  // out (K, Ho, Wo), M (16, K, T)
  const int T = t.tiles, half = t.half, Wo = t.out_w;
  const size_t xi_stride = size_t(K) * T, stride = t.temp_stride();
  float* down = temp;            // A^T m down column j: rows r = 0, 1 at (4 r + j) * stride
  float* y = temp + 8 * stride;  // output (2ty + r, 2tx + parity) at (2 r + parity) * stride
  for (int k = 0; k < K; ++k) {
    const float* m = M + size_t(k) * T;
    for (int j = 0; j < 4; ++j)
      at(down + j * stride, down + (4 + j) * stride, m + j * xi_stride, m + (4 + j) * xi_stride,
         m + (8 + j) * xi_stride, m + (12 + j) * xi_stride, T);
    for (int r = 0; r < 2; ++r) {
      const float* d = down + 4 * r * stride;
      at(y + 2 * r * stride, y + (2 * r + 1) * stride, d, d + stride, d + 2 * stride,
         d + 3 * stride, T);
    }
    const float b = bias != nullptr ? bias[k] : 0.0f;
    for (int ho = 0; ho < t.out_h; ++ho) {
      const float* even = y + 2 * (ho & 1) * stride + size_t(ho / 2) * half;
      const float* odd = even + stride;
      float* __restrict row = out + (size_t(k) * t.out_h + ho) * Wo;
      for (int x = 0; x < Wo / 2; ++x) {
        row[2 * x] = even[x] + b;
        row[2 * x + 1] = odd[x] + b;
      }
      if (Wo & 1) row[Wo - 1] = even[Wo / 2] + b;
    }
  }
}

void winograd_output_adjoint(float* dM, const float* dout, int K, const WinogradTiles& t,
                             float* temp) {
  // dM (16, K, T), dout (K, Ho, Wo)
  const int T = t.tiles, half = t.half, Wo = t.out_w;
  const size_t xi_stride = size_t(K) * T, stride = t.temp_stride();
  float* dy = temp;                 // as winograd_output's y
  float* down = temp + 4 * stride;  // A dy down the columns: row i, parity p at (2 i + p) * stride
  for (int k = 0; k < K; ++k) {
    // Dummy tiles and the half tiles past an odd edge get zero gradients.
    std::fill(dy, dy + 4 * stride, 0.0f);
    for (int ho = 0; ho < t.out_h; ++ho) {
      float* __restrict even = dy + 2 * (ho & 1) * stride + size_t(ho / 2) * half;
      float* __restrict odd = even + stride;
      const float* row = dout + (size_t(k) * t.out_h + ho) * Wo;
      for (int x = 0; x < Wo / 2; ++x) {
        even[x] = row[2 * x];
        odd[x] = row[2 * x + 1];
      }
      if (Wo & 1) even[Wo / 2] = row[Wo - 1];
    }
    for (int parity = 0; parity < 2; ++parity)
      at_adjoint(down + parity * stride, down + (2 + parity) * stride, down + (4 + parity) * stride,
                 down + (6 + parity) * stride, dy + parity * stride, dy + (2 + parity) * stride, T);
    float* m = dM + size_t(k) * T;
    for (int i = 0; i < 4; ++i)
      at_adjoint(m + 4 * i * xi_stride, m + (4 * i + 1) * xi_stride, m + (4 * i + 2) * xi_stride,
                 m + (4 * i + 3) * xi_stride, down + 2 * i * stride, down + (2 * i + 1) * stride,
                 T);
  }
}

}  // namespace gpulab::kernels::cpu::detail
