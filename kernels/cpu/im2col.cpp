// im2col and col2im for the fast CPU convolution. Each column-matrix row is built from whole
// input rows, so the stride-1 case is a memcpy (or a contiguous add) between two zero borders.
#include "kernels/cpu/im2col.hpp"

#include <algorithm>
#include <cstring>

namespace gpulab::kernels::cpu::detail {
namespace {

// Output columns wo in [begin, end) read an input column wi = wo*stride - padding + q inside
// [0, W); the rest read the padding.
struct ValidRange {
  int begin, end;
};

ValidRange valid_outputs(int q, int in_size, int out_size, int stride, int padding) {
  // Smallest wo with wo*stride >= padding - q, largest with wo*stride <= in_size-1+padding-q.
  const int lo = padding - q;
  int begin = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int hi = in_size - 1 + padding - q;
  int end = hi < 0 ? 0 : hi / stride + 1;
  begin = std::min(begin, out_size);
  end = std::clamp(end, begin, out_size);
  return {begin, end};
}

}  // namespace

void im2col(float* col, const float* inp, const Conv2dShape& s) {
  // col (C*R*S, Ho*Wo), inp (C,H,W)
  const int Ho = s.out_height(), Wo = s.out_width();
  for (int c = 0; c < s.in_channels; ++c) {
    const float* plane = inp + size_t(c) * s.in_height * s.in_width;
    for (int r = 0; r < s.kernel_h; ++r) {
      const ValidRange rows = valid_outputs(r, s.in_height, Ho, s.stride, s.padding);
      for (int q = 0; q < s.kernel_w; ++q) {
        const ValidRange cols = valid_outputs(q, s.in_width, Wo, s.stride, s.padding);
        float* dst = col + ((size_t(c) * s.kernel_h + r) * s.kernel_w + q) * Ho * Wo;
        std::fill(dst, dst + size_t(rows.begin) * Wo, 0.0f);
        for (int ho = rows.begin; ho < rows.end; ++ho) {
          float* out_row = dst + size_t(ho) * Wo;
          const float* in_row = plane + size_t(ho * s.stride - s.padding + r) * s.in_width;
          const int wi0 = cols.begin * s.stride - s.padding + q;
          std::fill(out_row, out_row + cols.begin, 0.0f);
          if (s.stride == 1) {
            std::memcpy(out_row + cols.begin, in_row + wi0,
                        sizeof(float) * (cols.end - cols.begin));
          } else {
            for (int wo = cols.begin; wo < cols.end; ++wo)
              out_row[wo] = in_row[wi0 + (wo - cols.begin) * s.stride];
          }
          std::fill(out_row + cols.end, out_row + Wo, 0.0f);
        }
        std::fill(dst + size_t(rows.end) * Wo, dst + size_t(Ho) * Wo, 0.0f);
      }
    }
  }
}

void col2im_add(float* dinp, const float* dcol, const Conv2dShape& s) {
  // dinp (C,H,W), dcol (C*R*S, Ho*Wo)
  const int Ho = s.out_height(), Wo = s.out_width();
  for (int c = 0; c < s.in_channels; ++c) {
    float* plane = dinp + size_t(c) * s.in_height * s.in_width;
    for (int r = 0; r < s.kernel_h; ++r) {
      const ValidRange rows = valid_outputs(r, s.in_height, Ho, s.stride, s.padding);
      for (int q = 0; q < s.kernel_w; ++q) {
        const ValidRange cols = valid_outputs(q, s.in_width, Wo, s.stride, s.padding);
        const float* src = dcol + ((size_t(c) * s.kernel_h + r) * s.kernel_w + q) * Ho * Wo;
        for (int ho = rows.begin; ho < rows.end; ++ho) {
          const float* grad_row = src + size_t(ho) * Wo;
          float* in_row = plane + size_t(ho * s.stride - s.padding + r) * s.in_width;
          const int wi0 = cols.begin * s.stride - s.padding + q;
          if (s.stride == 1) {
            float* __restrict__ to = in_row + wi0;
            const float* __restrict__ from = grad_row + cols.begin;
            for (int j = 0; j < cols.end - cols.begin; ++j) to[j] += from[j];
          } else {
            for (int wo = cols.begin; wo < cols.end; ++wo)
              in_row[wi0 + (wo - cols.begin) * s.stride] += grad_row[wo];
          }
        }
      }
    }
  }
}

}  // namespace gpulab::kernels::cpu::detail
