// Convolution as GEMM. A chunk of Nc images is unfolded into col (C*R*S, Nc*Ho*Wo), so each
// product is one large GEMM rather than Nc small ones; the GEMM's (K, Nc*P) result is then
// permuted into the (N, K, P) activation layout. The weight gradient's GEMM has a long inner
// dimension (Nc*P, 147456 for pytorch-example's conv2 at batch 512) and a small result (K, CRS):
// left to one GEMM, its result's few tiles keep few multiprocessors busy, so it is split along
// the inner dimension into slices whose partial products (one strided-batched GEMM) are summed
// in a fixed order. Indices within a chunk fit an int (chunk_images keeps them so), and the
// kernels walk 2-D grids (a row of col, a channel of an image) so that no thread divides a
// 64-bit index.
// No atomics anywhere: col2im gathers, bias gradients are fixed-order block sums and the slices
// are summed in order, so the same inputs give the same bits.
#include <algorithm>
#include <climits>
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

// A launch over (position in a plane, row, image): x covers the `plane` positions (blocks of
// up to kBlock threads, a multiple of 32 for small planes), y walks the rows (a grid-stride loop
// past 65535), z groups of images, each thread walking kImagesPerThread or more of them so that
// the index arithmetic of a position and row is done once for all of them.
struct Launch {
  dim3 grid, block;
};
constexpr int kImagesPerThread = 8;
Launch launch_3d(int plane, int rows, int images) {
  const int threads = plane >= kBlock ? kBlock : ((plane + 31) / 32) * 32;
  const int x = (plane + threads - 1) / threads;
  const int y = rows < 65535 ? (rows > 0 ? rows : 1) : 65535;
  const int groups = (images + kImagesPerThread - 1) / kImagesPerThread;
  const int z = groups < 1 ? 1 : (groups < 65535 ? groups : 65535);
  return {dim3(unsigned(x > 0 ? x : 1), unsigned(y), unsigned(z)),
          dim3(unsigned(threads > 0 ? threads : 32))};
}

#define GPULAB_ROWS(row, rows) for (int row = int(blockIdx.y); row < (rows); row += int(gridDim.y))
#define GPULAB_IMAGES(n, images) \
  _Pragma("unroll 4") for (int n = int(blockIdx.z); n < (images); n += int(gridDim.z))

// col (CRS, Nc*P) from inp (Nc, C, H, W); zero where a tap falls on the padding. A thread holds
// one output position p and, per row of col (a channel and tap), copies it for its images.
__global__ void im2col_kernel(float* col, const float* inp, Conv2dShape s, int images, Dims d) {
  const int p = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (p >= d.P) return;
  const int NP = images * d.P, HW = s.in_height * s.in_width, RS = s.kernel_h * s.kernel_w;
  const size_t in_image = size_t(s.in_channels) * HW;
  const int ho = p / d.Wo, wo = p - ho * d.Wo;
  GPULAB_ROWS(crs, d.CRS) {
    const int c = crs / RS, r = (crs - c * RS) / s.kernel_w, q = crs - c * RS - r * s.kernel_w;
    const int hi = ho * s.stride - s.padding + r, wi = wo * s.stride - s.padding + q;
    float* dst = col + size_t(crs) * NP + p;
    if (hi >= 0 && hi < s.in_height && wi >= 0 && wi < s.in_width) {
      const float* src = inp + size_t(c) * HW + hi * s.in_width + wi;
      GPULAB_IMAGES(n, images) dst[size_t(n) * d.P] = src[n * in_image];
    } else {
      GPULAB_IMAGES(n, images) dst[size_t(n) * d.P] = 0.0f;
    }
  }
}

// dinp (Nc, C, H, W) += the column gradients dcol (CRS, Nc*P) gathered back where im2col read,
// taps in (r, q) order as the reference. A thread holds one input position and, per channel,
// sums its taps for each of its images.
__global__ void col2im_add_kernel(float* dinp, const float* dcol, Conv2dShape s, int images,
                                  Dims d) {
  const int hw = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int HW = s.in_height * s.in_width;
  if (hw >= HW) return;
  const int NP = images * d.P, Ho = d.P / d.Wo;
  const int h = hw / s.in_width, w = hw - h * s.in_width;
  GPULAB_ROWS(c, s.in_channels) {
    GPULAB_IMAGES(n, images) {
      const float* image = dcol + size_t(n) * d.P;
      float sum = 0.0f;
      for (int r = 0; r < s.kernel_h; ++r) {
        int ho = h + s.padding - r;
        if (ho < 0) continue;
        if (s.stride != 1) {
          if (ho % s.stride != 0) continue;
          ho /= s.stride;
        }
        if (ho >= Ho) continue;
        for (int q = 0; q < s.kernel_w; ++q) {
          int wo = w + s.padding - q;
          if (wo < 0) continue;
          if (s.stride != 1) {
            if (wo % s.stride != 0) continue;
            wo /= s.stride;
          }
          if (wo >= d.Wo) continue;
          const int crs = (c * s.kernel_h + r) * s.kernel_w + q;
          sum += image[size_t(crs) * NP + ho * d.Wo + wo];
        }
      }
      dinp[(size_t(n) * s.in_channels + c) * HW + hw] += sum;
    }
  }
}

// out (Nc, K, P) = tmp (K, Nc*P) + bias: the GEMM result moved into the activation layout.
__global__ void nkp_from_knp_kernel(float* out, const float* tmp, const float* bias, int images,
                                    Dims d) {
  const int p = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (p >= d.P) return;
  const int NP = images * d.P;
  const size_t out_image = size_t(d.K) * d.P;
  GPULAB_ROWS(k, d.K) {
    const float b = bias != nullptr ? bias[k] : 0.0f;
    const float* src = tmp + size_t(k) * NP + p;
    float* dst = out + size_t(k) * d.P + p;
    GPULAB_IMAGES(n, images) dst[n * out_image] = src[size_t(n) * d.P] + b;
  }
}

// tmp (K, Nc*P) from dout (Nc, K, P).
__global__ void knp_from_nkp_kernel(float* tmp, const float* dout, int images, Dims d) {
  const int p = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (p >= d.P) return;
  const int NP = images * d.P;
  const size_t out_image = size_t(d.K) * d.P;
  GPULAB_ROWS(k, d.K) {
    float* dst = tmp + size_t(k) * NP + p;
    const float* src = dout + size_t(k) * d.P + p;
    GPULAB_IMAGES(n, images) dst[size_t(n) * d.P] = src[n * out_image];
  }
}

// partial (segments, rows): the sum of each segment of `segment` columns of each row of in
// (rows, cols), blockIdx.x the segment and blockIdx.y the row, in a fixed order.
__global__ void row_segment_sums_kernel(float* partial, const float* in, int cols, int segment) {
  const int begin = int(blockIdx.x) * segment;
  const int end = cols - begin < segment ? cols : begin + segment;
  const float* row = in + size_t(blockIdx.y) * cols;
  float sum = 0.0f;
  for (int c = begin + int(threadIdx.x); c < end; c += kBlock) sum += row[c];
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) partial[size_t(blockIdx.x) * gridDim.y + blockIdx.y] = sum;
}

// out (n) += the sum of `slices` partial results (slices, n), in slice order.
__global__ void sum_slices_add_kernel(float* out, const float* partial, int slices, int n) {
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += int(gridDim.x * blockDim.x)) {
    float sum = 0.0f;
    for (int t = 0; t < slices; ++t) sum += partial[size_t(t) * n + i];
    out[i] += sum;
  }
}

#undef GPULAB_ROWS
#undef GPULAB_IMAGES

Dims dims_of(const Conv2dShape& s) {
  return {s.out_channels, s.in_channels * s.kernel_h * s.kernel_w, s.out_height() * s.out_width(),
          s.out_width()};
}

// The weight gradient's split: enough slices of the inner dimension for about kTargetBlocks
// blocks of cuBLAS's 64x64 tiles (a 32x9 result, one tile, gets hundreds of slices; a 64x288 one,
// five tiles, about a hundred), each slice at least kMinSliceColumns columns long, their
// partial results at most kMaxPartialFloats.
constexpr int kTargetBlocks = 528;  // 4 per multiprocessor of an H100
constexpr int kMinSliceColumns = 512;
constexpr size_t kMaxPartialFloats = size_t(8) << 20;  // 32 MiB

// The slices the scratch makes room for: 0 when the weight gradient is too large to split.
int max_slices(const Dims& d) {
  const size_t result = size_t(d.K) * d.CRS;
  const size_t fit = result ? kMaxPartialFloats / result : 0;
  const size_t tiles = size_t((d.K + 63) / 64) * size_t((d.CRS + 63) / 64);
  const size_t wanted = tiles ? (kTargetBlocks + tiles - 1) / tiles : 0;
  const size_t most = fit < wanted ? fit : wanted;
  return most < 2 ? 0 : int(most);
}

// Scratch floats per image of a chunk: forward, col (CRS, Nc*P) + GEMM result (K, Nc*P);
// backward, dout permuted (K, Nc*P) + col, which the column gradients reuse once the
// weight-gradient GEMM has read it.
size_t per_image_floats(const Dims& d) { return size_t(d.K + d.CRS) * d.P; }

// Scratch floats for the weight gradient's partial results, after the chunk's part.
size_t partial_floats(const Dims& d) { return size_t(max_slices(d)) * d.K * d.CRS; }

// Images per chunk that a scratch of scratch_floats holds, so that every index within the
// chunk's buffers fits an int; 0 when not even one image fits.
int fitting_images(const Conv2dShape& s, size_t scratch_floats) {
  const Dims d = dims_of(s);
  const size_t per_image = per_image_floats(d), fixed = partial_floats(d);
  size_t fit = per_image && scratch_floats > fixed ? (scratch_floats - fixed) / per_image : 0;
  if (per_image && fit > size_t(INT_MAX) / per_image) fit = size_t(INT_MAX) / per_image;
  return int(fit < size_t(s.batch) ? fit : size_t(s.batch));
}

// fitting_images for the scratch of gemm; throws when not even one image fits.
int chunk_images(const Conv2dShape& s, const Gemm& gemm, const char* op) {
  const int fit = fitting_images(s, gemm.scratch_floats);
  if (fit == 0 || gemm.scratch == nullptr) {
    const Dims d = dims_of(s);
    throw std::invalid_argument(std::string(op) + ": the scratch buffer holds " +
                                std::to_string(gemm.scratch_floats) + " floats, " +
                                std::to_string(partial_floats(d) + per_image_floats(d)) +
                                " needed for one image");
  }
  return fit;
}

// dweight (K, CRS) += dout_t (K, NP) x col^T (NP, CRS), the inner dimension NP cut into slices
// whose partial products land in `partial` and are then added in slice order.
void weight_gradient(float* dweight, const float* dout_t, const float* col, int NP, const Dims& d,
                     float* partial, const Gemm& gemm, cudaStream_t stream) {
  const int most = max_slices(d);
  const int slices = NP / kMinSliceColumns < most ? NP / kMinSliceColumns : most;
  if (slices < 2) {
    cuda::gemm(gemm, false, true, d.K, d.CRS, NP, 1.0f, dout_t, NP, col, NP, 1.0f, dweight, d.CRS,
               stream);
    return;
  }
  const int width = ((NP + slices - 1) / slices + 3) / 4 * 4;  // columns per slice, 16-byte steps
  const int whole = NP / width, rest = NP - whole * width;
  const long long result = (long long)d.K * d.CRS;
  cuda::gemm_strided_batched(gemm, false, true, d.K, d.CRS, width, 1.0f, dout_t, NP, width, col,
                             NP, width, 0.0f, partial, d.CRS, result, whole, stream);
  if (rest > 0)
    cuda::gemm(gemm, false, true, d.K, d.CRS, rest, 1.0f, dout_t + size_t(whole) * width, NP,
               col + size_t(whole) * width, NP, 0.0f, partial + whole * result, d.CRS, stream);
  sum_slices_add_kernel<<<grid_for(size_t(result)), kBlock, 0, stream>>>(
      dweight, partial, whole + (rest > 0 ? 1 : 0), int(result));
  GPULAB_CUDA_CHECK_LAUNCH("sum_slices_add_kernel");
}

// dbias (K) += the row sums of dout_t (K, NP): rows cut into segments summed by blocks of their
// own, then the segments added in order (one block per row of 147456 columns kept 64 of 132
// multiprocessors busy for 84 us at batch 512).
void bias_gradient(float* dbias, const float* dout_t, int NP, const Dims& d, float* partial,
                   size_t partial_room, cudaStream_t stream) {
  constexpr int kSegmentColumns = 4096;
  const int segments = (NP + kSegmentColumns - 1) / kSegmentColumns;
  if (segments < 2 || size_t(segments) * d.K > partial_room || d.K > 65535) {
    row_sums_add(dbias, dout_t, d.K, size_t(NP), stream);
    return;
  }
  const int segment = (NP + segments - 1) / segments;
  row_segment_sums_kernel<<<dim3(unsigned(segments), unsigned(d.K)), kBlock, 0, stream>>>(
      partial, dout_t, NP, segment);
  GPULAB_CUDA_CHECK_LAUNCH("row_segment_sums_kernel");
  sum_slices_add_kernel<<<grid_for(size_t(d.K)), kBlock, 0, stream>>>(dbias, partial, segments,
                                                                      d.K);
  GPULAB_CUDA_CHECK_LAUNCH("sum_slices_add_kernel");
}

}  // namespace

size_t conv2d_scratch_floats(const Conv2dShape& s, int images) {
  const Dims d = dims_of(s);
  return per_image_floats(d) * size_t(images) + partial_floats(d);
}

size_t conv2d_bf16_elements(const Conv2dShape& s, size_t scratch_floats) {
  const Dims d = dims_of(s);
  const int images = fitting_images(s, scratch_floats);
  const int NP = images * d.P;  // a whole chunk; the last one, smaller, needs less
  // forward weight x col; weight gradient dout_t x col^T, whole or in slices that together
  // cover at most NP columns of each; column gradients weight^T x dout_t.
  const size_t forward = gemm_bf16_elements(d.K, NP, d.CRS);
  const size_t weight_grad = gemm_bf16_elements(d.K, d.CRS, NP);
  const size_t column_grad = gemm_bf16_elements(d.CRS, NP, d.K);
  return std::max({forward, weight_grad, column_grad});
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
    const int NP = images * d.P;
    float* col = gemm.scratch;              // (CRS, Nc*P)
    float* tmp = col + size_t(d.CRS) * NP;  // (K, Nc*P)
    const Launch over_p = launch_3d(d.P, d.CRS, images);
    im2col_kernel<<<over_p.grid, over_p.block, 0, stream>>>(col, inp + n0 * in_image, s, images,
                                                            d);
    GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
    // tmp (K, Nc*P) = weight (K, CRS) x col (CRS, Nc*P)
    cuda::gemm(gemm, false, false, d.K, NP, d.CRS, 1.0f, weight, d.CRS, col, NP, 0.0f, tmp, NP,
               stream);
    const Launch over_k = launch_3d(d.P, d.K, images);
    nkp_from_knp_kernel<<<over_k.grid, over_k.block, 0, stream>>>(out + size_t(n0) * d.K * d.P,
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
  float* partial = gemm.scratch + size_t(chunk) * per_image_floats(d);  // after the chunk's part
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    const int images = s.batch - n0 < chunk ? s.batch - n0 : chunk;
    const int NP = images * d.P;
    float* dout_t = gemm.scratch;            // (K, Nc*P)
    float* col = dout_t + size_t(d.K) * NP;  // (CRS, Nc*P), later the column gradients
    const Launch over_k = launch_3d(d.P, d.K, images);
    knp_from_nkp_kernel<<<over_k.grid, over_k.block, 0, stream>>>(
        dout_t, dout + size_t(n0) * d.K * d.P, images, d);
    GPULAB_CUDA_CHECK_LAUNCH("knp_from_nkp_kernel");
    if (dbias != nullptr) bias_gradient(dbias, dout_t, NP, d, partial, partial_floats(d), stream);
    if (dweight != nullptr) {
      const Launch over_p = launch_3d(d.P, d.CRS, images);
      im2col_kernel<<<over_p.grid, over_p.block, 0, stream>>>(col, inp + n0 * in_image, s, images,
                                                              d);
      GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
      weight_gradient(dweight, dout_t, col, NP, d, partial, gemm, stream);
    }
    if (dinp != nullptr) {
      // dcol (CRS, Nc*P) = weight^T (CRS, K) x dout_t (K, Nc*P)
      cuda::gemm(gemm, true, false, d.CRS, NP, d.K, 1.0f, weight, d.CRS, dout_t, NP, 0.0f, col,
                 NP, stream);
      const Launch over_hw = launch_3d(s.in_height * s.in_width, s.in_channels, images);
      col2im_add_kernel<<<over_hw.grid, over_hw.block, 0, stream>>>(dinp + n0 * in_image, col, s,
                                                                    images, d);
      GPULAB_CUDA_CHECK_LAUNCH("col2im_add_kernel");
    }
  }
}

}  // namespace gpulab::kernels::cuda
