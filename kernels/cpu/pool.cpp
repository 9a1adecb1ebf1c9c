// Fast max pooling: OpenMP over the (N, C) planes, each thread owning whole planes so that the
// backward scatter needs no atomics. Same tie and NaN rule as the reference.
#include "kernels/cpu/conv2d_parts.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/shape_check.hpp"

namespace gpulab::kernels::cpu {
namespace {

// "v > m, or v is NaN while m is not": the reference's rule for taking a later element.
inline bool takes_over(float v, float m) { return !(v <= m) && m == m; }

// The usual 2x2, stride-2 window in one pass over two input rows (the general loop below makes
// four passes over the output row).
void pool_row_2x2(float* __restrict__ m, int32_t* __restrict__ best, const float* in_plane, int top,
                  int in_width, int Wo) {
  const float* __restrict__ row0 = in_plane + size_t(top) * in_width;
  const float* __restrict__ row1 = row0 + in_width;
  for (int wo = 0; wo < Wo; ++wo) {
    const int at = top * in_width + 2 * wo;
    float v = row0[2 * wo];
    int i = at;
    const float b = row0[2 * wo + 1], c = row1[2 * wo], d = row1[2 * wo + 1];
    const bool tb = takes_over(b, v);
    v = tb ? b : v;
    i = tb ? at + 1 : i;
    const bool tc = takes_over(c, v);
    v = tc ? c : v;
    i = tc ? at + in_width : i;
    const bool td = takes_over(d, v);
    v = td ? d : v;
    i = td ? at + in_width + 1 : i;
    m[wo] = v;
    best[wo] = i;
  }
}

// One (H, W) plane: out_plane (Ho, Wo), arg_plane (Ho, Wo), in_plane (H, W).
void pool_plane(float* out_plane, int32_t* arg_plane, const float* in_plane, const Pool2dShape& s) {
  const int Ho = s.out_height(), Wo = s.out_width();
  for (int ho = 0; ho < Ho; ++ho) {
    // One output row at a time, tap by tap in the reference's (r, q) order, with selects
    // instead of branches: the loop over wo then vectorizes and random data costs no
    // mispredictions.
    float* __restrict m = out_plane + size_t(ho) * Wo;
    int32_t* __restrict best = arg_plane + size_t(ho) * Wo;
    if (s.kernel == 2 && s.stride == 2) {
      pool_row_2x2(m, best, in_plane, 2 * ho, s.in_width, Wo);
      continue;
    }
    for (int r = 0; r < s.kernel; ++r)
      for (int q = 0; q < s.kernel; ++q) {
        const int row_start = (ho * s.stride + r) * s.in_width + q;
        const float* __restrict in_row = in_plane + row_start;
        const int step = s.stride;
        if (r == 0 && q == 0) {
          for (int wo = 0; wo < Wo; ++wo) {
            m[wo] = in_row[wo * step];
            best[wo] = row_start + wo * step;
          }
          continue;
        }
        for (int wo = 0; wo < Wo; ++wo) {
          const float v = in_row[wo * step];
          const bool take = takes_over(v, m[wo]);
          m[wo] = take ? v : m[wo];
          best[wo] = take ? row_start + wo * step : best[wo];
        }
      }
  }
}

}  // namespace

void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s) {
  // out (N,C,Ho,Wo), argmax (N,C,Ho,Wo), inp (N,C,H,W)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_forward");
  const int planes = s.batch * s.channels;
  const size_t plane_in = size_t(s.in_height) * s.in_width;
  const size_t plane_out = size_t(s.out_height()) * s.out_width();
#pragma omp parallel for num_threads(detail::threads()) schedule(static)
  for (int plane = 0; plane < planes; ++plane)
    pool_plane(out + plane * plane_out, argmax + plane * plane_out, inp + plane * plane_in, s);
}

namespace detail {

void maxpool_image(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s) {
  const size_t plane_in = size_t(s.in_height) * s.in_width;
  const size_t plane_out = size_t(s.out_height()) * s.out_width();
  for (int c = 0; c < s.channels; ++c)
    pool_plane(out + c * plane_out, argmax + c * plane_out, inp + c * plane_in, s);
}

}  // namespace detail

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
