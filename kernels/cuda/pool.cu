// Max pooling: one thread per output for the forward pass. The backward pass of windows that do
// not overlap (kernel <= stride, as every preset's 2x2 pooling) is one thread per output adding
// its gradient at its argmax, the one input it reaches. Overlapping windows gather instead of
// scattering: one thread per input pixel adds the gradients of the windows whose argmax it is,
// in window order, so they need no atomics and the sum order is fixed.
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

// Windows that do not overlap: each input pixel is in one window at most, so this adds exactly
// what the gather would, with a thread per output instead of per input and no division.
// blockIdx.y walks the planes (an image's channel), x the outputs of a plane.
__global__ void maxpool2d_backward_disjoint_kernel(float* dinp, const float* dout,
                                                   const int32_t* argmax, int planes, int plane_in,
                                                   int plane_out) {
  const int o = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (o >= plane_out) return;
  for (int plane = int(blockIdx.y); plane < planes; plane += int(gridDim.y)) {
    const size_t at = size_t(plane) * plane_out + o;
    dinp[size_t(plane) * plane_in + argmax[at]] += dout[at];
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
  const int plane_out = s.out_height() * s.out_width();
  if (s.kernel <= s.stride && plane_out > 0) {
    const int planes = s.batch * s.channels;
    const int threads = plane_out >= detail::kBlock ? detail::kBlock : (plane_out + 31) / 32 * 32;
    const dim3 grid(unsigned((plane_out + threads - 1) / threads),
                    unsigned(planes < 65535 ? planes : 65535));
    maxpool2d_backward_disjoint_kernel<<<grid, threads, 0, stream>>>(
        dinp, dout, argmax, planes, s.in_height * s.in_width, plane_out);
    GPULAB_CUDA_CHECK_LAUNCH("maxpool2d_backward_disjoint_kernel");
    return;
  }
  maxpool2d_backward_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(
      dinp, dout, argmax, s, s.out_height(), s.out_width());
  GPULAB_CUDA_CHECK_LAUNCH("maxpool2d_backward_kernel");
}

}  // namespace gpulab::kernels::cuda
