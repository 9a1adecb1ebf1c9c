// Unfolding one image into the column matrix that turns a convolution into a GEMM (im2col), and
// folding column gradients back onto the image (col2im). Internal to the fast CPU kernels.
#pragma once

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::cpu::detail {

// col (C*R*S, Ho*Wo): row (c, r, q) holds the input pixels that tap (r, q) of channel c sees at
// every output position, zero where the tap falls on the padding. inp (C, H, W): one image.
void im2col(float* col, const float* inp, const Conv2dShape& s);

// dinp (C, H, W) += the column gradients dcol (C*R*S, Ho*Wo) scattered back where im2col read.
void col2im_add(float* dinp, const float* dcol, const Conv2dShape& s);

// A 1x1 convolution with stride 1 and no padding needs no unfolding: the image is its own
// column matrix.
inline bool im2col_is_identity(const Conv2dShape& s) {
  return s.kernel_h == 1 && s.kernel_w == 1 && s.stride == 1 && s.padding == 0;
}

}  // namespace gpulab::kernels::cpu::detail
