// Convolution as GEMM. A chunk of Nc images is unfolded into col (C*R*S, Nc*Ho*Wo), so each
// product is one large GEMM rather than Nc small ones; the GEMM's (K, Nc*P) result is then
// permuted into the (N, K, P) activation layout. This choice (against strided-batched GEMM per
// image or an implicit-GEMM kernel) is unmeasured: time it on the GPU before tuning.
// No atomics anywhere: col2im gathers, and bias gradients are fixed-order block sums, so the
// same inputs give the same bits.
#include <stdexcept>
#include <string>

#include "kernels/cpu/shape_check.hpp"
#include "kernels/cuda/conv2d.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"

namespace gpulab::kernels::cuda {
namespace {

using detail::grid_for;
using detail::kBlock;

struct Dims {  // sizes of one chunk
  int K, CRS, P, Wo;
};

// col (CRS, Nc*P) from inp (Nc, C, H, W); zero where a tap falls on the padding.
__global__ void im2col_kernel(float* col, const float* inp, Conv2dShape s, int images, Dims d) {
  const size_t NP = size_t(images) * d.P;
  GPULAB_GRID_STRIDE_LOOP(i, size_t(d.CRS) * NP) {
    const int crs = int(i / NP);
    const size_t j = i % NP;
    const int n = int(j / d.P), p = int(j % d.P);
    const int ho = p / d.Wo, wo = p % d.Wo;
    const int c = crs / (s.kernel_h * s.kernel_w);
    const int r = (crs / s.kernel_w) % s.kernel_h, q = crs % s.kernel_w;
    const int hi = ho * s.stride - s.padding + r, wi = wo * s.stride - s.padding + q;
    const bool inside = hi >= 0 && hi < s.in_height && wi >= 0 && wi < s.in_width;
    col[i] =
        inside ? inp[((size_t(n) * s.in_channels + c) * s.in_height + hi) * s.in_width + wi] : 0.0f;
  }
}

// dinp (Nc, C, H, W) += the column gradients dcol (CRS, Nc*P) gathered back where im2col read,
// taps in (r, q) order as the reference.
__global__ void col2im_add_kernel(float* dinp, const float* dcol, Conv2dShape s, int images,
                                  Dims d) {
  const size_t NP = size_t(images) * d.P;
  const int Ho = d.P / d.Wo;
  const size_t total = size_t(images) * s.in_channels * s.in_height * s.in_width;
  GPULAB_GRID_STRIDE_LOOP(i, total) {
    const int w = int(i % s.in_width), h = int((i / s.in_width) % s.in_height);
    const int c = int((i / (size_t(s.in_width) * s.in_height)) % s.in_channels);
    const int n = int(i / (size_t(s.in_width) * s.in_height * s.in_channels));
    float sum = 0.0f;
    for (int r = 0; r < s.kernel_h; ++r)
      for (int q = 0; q < s.kernel_w; ++q) {
        const int th = h + s.padding - r, tw = w + s.padding - q;
        if (th < 0 || tw < 0 || th % s.stride != 0 || tw % s.stride != 0) continue;
        const int ho = th / s.stride, wo = tw / s.stride;
        if (ho >= Ho || wo >= d.Wo) continue;
        const int crs = (c * s.kernel_h + r) * s.kernel_w + q;
        sum += dcol[size_t(crs) * NP + size_t(n) * d.P + ho * d.Wo + wo];
      }
    dinp[i] += sum;
  }
}

// out (Nc, K, P) = tmp (K, Nc*P) + bias: the GEMM result moved into the activation layout.
__global__ void nkp_from_knp_kernel(float* out, const float* tmp, const float* bias, int images,
                                    Dims d) {
  const size_t NP = size_t(images) * d.P;
  GPULAB_GRID_STRIDE_LOOP(i, size_t(d.K) * NP) {
    const int p = int(i % d.P), k = int((i / d.P) % d.K);
    const size_t n = i / (size_t(d.P) * d.K);
    out[i] = tmp[size_t(k) * NP + n * d.P + p] + (bias != nullptr ? bias[k] : 0.0f);
  }
}

// tmp (K, Nc*P) from dout (Nc, K, P).
__global__ void knp_from_nkp_kernel(float* tmp, const float* dout, int images, Dims d) {
  const size_t NP = size_t(images) * d.P;
  GPULAB_GRID_STRIDE_LOOP(i, size_t(d.K) * NP) {
    const int p = int(i % d.P), k = int((i / d.P) % d.K);
    const size_t n = i / (size_t(d.P) * d.K);
    tmp[size_t(k) * NP + n * d.P + p] = dout[i];
  }
}

Dims dims_of(const Conv2dShape& s) {
  return {s.out_channels, s.in_channels * s.kernel_h * s.kernel_w, s.out_height() * s.out_width(),
          s.out_width()};
}

// Images per chunk that the scratch holds; throws when not even one does.
int chunk_images(const Conv2dShape& s, const Gemm& gemm, const char* op) {
  const size_t per_image = conv2d_scratch_floats(s, 1);
  const size_t fit = per_image ? gemm.scratch_floats / per_image : 0;
  if (fit == 0 || gemm.scratch == nullptr)
    throw std::invalid_argument(std::string(op) + ": the scratch buffer holds " +
                                std::to_string(gemm.scratch_floats) + " floats, " +
                                std::to_string(per_image) + " needed per image");
  return int(fit < size_t(s.batch) ? fit : size_t(s.batch));
}

}  // namespace

size_t conv2d_scratch_floats(const Conv2dShape& s, int images) {
  const Dims d = dims_of(s);
  // Forward: col (CRS, Nc*P) + GEMM result (K, Nc*P). Backward: dout permuted (K, Nc*P) + col,
  // which the column gradients reuse once the weight-gradient GEMM has read it.
  return size_t(d.K + d.CRS) * size_t(images) * d.P;
}

void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const Conv2dShape& s, const Gemm& gemm, cudaStream_t stream) {
  // out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  kernels::detail::check_conv2d_shape(s, "conv2d_forward");
  if (s.batch == 0) return;
  const Dims d = dims_of(s);
  const int chunk = chunk_images(s, gemm, "conv2d_forward");
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    const int images = s.batch - n0 < chunk ? s.batch - n0 : chunk;
    const size_t NP = size_t(images) * d.P;
    float* col = gemm.scratch;              // (CRS, Nc*P)
    float* tmp = col + size_t(d.CRS) * NP;  // (K, Nc*P)
    im2col_kernel<<<grid_for(d.CRS * NP), kBlock, 0, stream>>>(col, inp + n0 * in_image, s, images,
                                                               d);
    GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
    // tmp (K, Nc*P) = weight (K, CRS) x col (CRS, Nc*P)
    cuda::gemm(gemm, false, false, d.K, int(NP), d.CRS, 1.0f, weight, d.CRS, col, int(NP), 0.0f,
               tmp, int(NP), stream);
    nkp_from_knp_kernel<<<grid_for(d.K * NP), kBlock, 0, stream>>>(out + size_t(n0) * d.K * d.P,
                                                                   tmp, bias, images, d);
    GPULAB_CUDA_CHECK_LAUNCH("nkp_from_knp_kernel");
  }
}

void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s, const Gemm& gemm,
                     cudaStream_t stream) {
  // dinp (N,C,H,W) or nullptr, dweight (K,C,R,S) or nullptr, dbias (K) or nullptr,
  // dout (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S)
  kernels::detail::check_conv2d_shape(s, "conv2d_backward");
  if (s.batch == 0 || (dinp == nullptr && dweight == nullptr && dbias == nullptr)) return;
  const Dims d = dims_of(s);
  const int chunk = chunk_images(s, gemm, "conv2d_backward");
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    const int images = s.batch - n0 < chunk ? s.batch - n0 : chunk;
    const size_t NP = size_t(images) * d.P;
    float* dout_t = gemm.scratch;            // (K, Nc*P)
    float* col = dout_t + size_t(d.K) * NP;  // (CRS, Nc*P), later the column gradients
    knp_from_nkp_kernel<<<grid_for(d.K * NP), kBlock, 0, stream>>>(
        dout_t, dout + size_t(n0) * d.K * d.P, images, d);
    GPULAB_CUDA_CHECK_LAUNCH("knp_from_nkp_kernel");
    if (dbias != nullptr) row_sums_add(dbias, dout_t, d.K, NP, stream);
    if (dweight != nullptr) {
      im2col_kernel<<<grid_for(d.CRS * NP), kBlock, 0, stream>>>(col, inp + n0 * in_image, s,
                                                                 images, d);
      GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
      // dweight (K, CRS) += dout_t (K, Nc*P) x col^T (Nc*P, CRS)
      cuda::gemm(gemm, false, true, d.K, d.CRS, int(NP), 1.0f, dout_t, int(NP), col, int(NP), 1.0f,
                 dweight, d.CRS, stream);
    }
    if (dinp != nullptr) {
      // dcol (CRS, Nc*P) = weight^T (CRS, K) x dout_t (K, Nc*P)
      cuda::gemm(gemm, true, false, d.CRS, int(NP), d.K, 1.0f, weight, d.CRS, dout_t, int(NP), 0.0f,
                 col, int(NP), stream);
      const size_t in_chunk = size_t(images) * in_image;
      col2im_add_kernel<<<grid_for(in_chunk), kBlock, 0, stream>>>(dinp + n0 * in_image, col, s,
                                                                   images, d);
      GPULAB_CUDA_CHECK_LAUNCH("col2im_add_kernel");
    }
  }
}

}  // namespace gpulab::kernels::cuda
