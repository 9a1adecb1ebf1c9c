// Max pooling: one thread per output for the forward pass. The backward pass gathers instead of
// scattering: one thread per input pixel adds the gradients of the windows whose argmax it is,
// in window order, so overlapping windows need no atomics and the sum order is fixed.
#include "kernels/cpu/shape_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pool.cuh"

namespace gpulab::kernels::cuda {
namespace {

__global__ void maxpool2d_forward_kernel(float* out, int32_t* argmax, const float* inp,
                                         Pool2dShape s, int Ho, int Wo) {
  const size_t plane_out = size_t(Ho) * Wo;
  GPULAB_GRID_STRIDE_LOOP(o, size_t(s.batch) * s.channels * plane_out) {
    const size_t plane = o / plane_out;
    const int ho = int((o % plane_out) / Wo), wo = int(o % Wo);
    const float* in_plane = inp + plane * s.in_height * s.in_width;
    int best = (ho * s.stride) * s.in_width + wo * s.stride;
    for (int r = 0; r < s.kernel; ++r)
      for (int q = 0; q < s.kernel; ++q) {
        const int at = (ho * s.stride + r) * s.in_width + wo * s.stride + q;
        const float v = in_plane[at], m = in_plane[best];
        if (!isnan(m) && (v > m || isnan(v))) best = at;
      }
    out[o] = in_plane[best];
    argmax[o] = best;
  }
}

__global__ void maxpool2d_backward_kernel(float* dinp, const float* dout, const int32_t* argmax,
                                          Pool2dShape s, int Ho, int Wo) {
  const size_t plane_in = size_t(s.in_height) * s.in_width, plane_out = size_t(Ho) * Wo;
  GPULAB_GRID_STRIDE_LOOP(i, size_t(s.batch) * s.channels * plane_in) {
    const size_t plane = i / plane_in;
    const int at = int(i % plane_in);
    const int h = at / s.in_width, w = at % s.in_width;
    // Windows (ho, wo) that contain (h, w): ho*stride <= h < ho*stride + kernel.
    const int ho_begin = h < s.kernel ? 0 : (h - s.kernel) / s.stride + 1;
    const int wo_begin = w < s.kernel ? 0 : (w - s.kernel) / s.stride + 1;
    const int ho_end = min(h / s.stride + 1, Ho), wo_end = min(w / s.stride + 1, Wo);
    float sum = dinp[i];  // added in the reference's order: its scatter visits outputs ascending
    for (int ho = ho_begin; ho < ho_end; ++ho)
      for (int wo = wo_begin; wo < wo_end; ++wo) {
        const size_t o = plane * plane_out + size_t(ho) * Wo + wo;
        if (argmax[o] == at) sum += dout[o];
      }
    dinp[i] = sum;
  }
}

}  // namespace

void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s,
                       cudaStream_t stream) {
  // out (N,C,Ho,Wo), argmax (N,C,Ho,Wo), inp (N,C,H,W)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_forward");
  const size_t n = size_t(s.batch) * s.channels * s.out_height() * s.out_width();
  if (n == 0) return;
  maxpool2d_forward_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(
      out, argmax, inp, s, s.out_height(), s.out_width());
  GPULAB_CUDA_CHECK_LAUNCH("maxpool2d_forward_kernel");
}

void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax, const Pool2dShape& s,
                        cudaStream_t stream) {
  // dinp (N,C,H,W), dout (N,C,Ho,Wo), argmax (N,C,Ho,Wo)
  kernels::detail::check_pool2d_shape(s, "maxpool2d_backward");
  const size_t n = size_t(s.batch) * s.channels * s.in_height * s.in_width;
  if (n == 0) return;
  maxpool2d_backward_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(
      dinp, dout, argmax, s, s.out_height(), s.out_width());
  GPULAB_CUDA_CHECK_LAUNCH("maxpool2d_backward_kernel");
}

}  // namespace gpulab::kernels::cuda
