// Fast max pooling: OpenMP over the (N, C) planes, each thread owning whole planes so that the
// backward scatter needs no atomics. Same tie and NaN rule as the reference.
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/shape_check.hpp"

namespace gpulab::kernels::cpu {

void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s) {
  // out (N,C,Ho,Wo), argmax (N,C,Ho,Wo), inp (N,C,H,W)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_forward");
  const int Ho = s.out_height(), Wo = s.out_width();
  const int planes = s.batch * s.channels;
  const size_t plane_in = size_t(s.in_height) * s.in_width, plane_out = size_t(Ho) * Wo;
#pragma omp parallel for num_threads(detail::threads()) schedule(static)
  for (int plane = 0; plane < planes; ++plane) {
    const float* in_plane = inp + plane * plane_in;
    float* out_plane = out + plane * plane_out;
    int32_t* arg_plane = argmax + plane * plane_out;
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo) {
        int best = ho * s.stride * s.in_width + wo * s.stride;
        float m = in_plane[best];
        for (int r = 0; r < s.kernel; ++r)
          for (int q = 0; q < s.kernel; ++q) {
            const int at = (ho * s.stride + r) * s.in_width + wo * s.stride + q;
            const float v = in_plane[at];
            // !(v <= m) is "v > m or v is NaN"; m == m keeps the first NaN once one is held.
            if (!(v <= m) && m == m) {
              m = v;
              best = at;
            }
          }
        out_plane[ho * Wo + wo] = m;
        arg_plane[ho * Wo + wo] = best;
      }
  }
}

void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax,
                        const Pool2dShape& s) {
  // dinp (N,C,H,W), dout (N,C,Ho,Wo), argmax (N,C,Ho,Wo)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_backward");
  const int planes = s.batch * s.channels;
  const size_t plane_in = size_t(s.in_height) * s.in_width;
  const size_t plane_out = size_t(s.out_height()) * s.out_width();
#pragma omp parallel for num_threads(detail::threads()) schedule(static)
  for (int plane = 0; plane < planes; ++plane) {
    float* dinp_plane = dinp + plane * plane_in;
    const float* dout_plane = dout + plane * plane_out;
    const int32_t* arg_plane = argmax + plane * plane_out;
    for (size_t o = 0; o < plane_out; ++o) dinp_plane[arg_plane[o]] += dout_plane[o];
  }
}

}  // namespace gpulab::kernels::cpu
