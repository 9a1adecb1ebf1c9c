// Reference max pooling without padding. Ties go to the first maximum in row-major window order
// and the first NaN wins (NaN propagates, as in PyTorch), so that argmax agrees between backends.
#include <cmath>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/shape_check.hpp"

namespace gpulab::kernels::ref {

void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s) {
  // out (N,C,Ho,Wo), argmax (N,C,Ho,Wo), inp (N,C,H,W)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_forward");
  const int Ho = s.out_height(), Wo = s.out_width();
  for (int plane = 0; plane < s.batch * s.channels; ++plane) {
    const float* in_plane = inp + size_t(plane) * s.in_height * s.in_width;
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo) {
        int best = (ho * s.stride) * s.in_width + wo * s.stride;
        for (int r = 0; r < s.kernel; ++r)
          for (int q = 0; q < s.kernel; ++q) {
            const int at = (ho * s.stride + r) * s.in_width + wo * s.stride + q;
            const float v = in_plane[at], m = in_plane[best];
            if (!std::isnan(m) && (v > m || std::isnan(v))) best = at;
          }
        const size_t o = (size_t(plane) * Ho + ho) * Wo + wo;
        out[o] = in_plane[best];
        argmax[o] = best;
      }
  }
}

void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax,
                        const Pool2dShape& s) {
  // dinp (N,C,H,W), dout (N,C,Ho,Wo), argmax (N,C,Ho,Wo)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_backward");
  const size_t plane_out = size_t(s.out_height()) * s.out_width();
  const size_t plane_in = size_t(s.in_height) * s.in_width;
  for (size_t plane = 0; plane < size_t(s.batch) * s.channels; ++plane)
    for (size_t o = 0; o < plane_out; ++o)
      dinp[plane * plane_in + argmax[plane * plane_out + o]] += dout[plane * plane_out + o];
}

}  // namespace gpulab::kernels::ref
