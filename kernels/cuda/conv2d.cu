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

// A launch over rows x columns: blockIdx.y walks the rows (a grid-stride loop past 65535) and
// the x blocks the columns, at most 2^20 blocks in all.
dim3 grid_2d(int rows, int cols) {
  const unsigned y = unsigned(rows < 65535 ? (rows > 0 ? rows : 1) : 65535);
  const size_t x_cap = (size_t(1) << 20) / y;
  const size_t x = (size_t(cols) + kBlock - 1) / kBlock;
  return dim3(unsigned(x < 1 ? 1 : (x < x_cap ? x : (x_cap > 0 ? x_cap : 1))), y);
}

#define GPULAB_ROWS(row, rows) for (int row = int(blockIdx.y); row < (rows); row += int(gridDim.y))
#define GPULAB_COLS(col, cols)                                                   \
  for (int col = int(blockIdx.x * blockDim.x + threadIdx.x); col < (cols); \
       col += int(gridDim.x * blockDim.x))

// col (CRS, Nc*P) from inp (Nc, C, H, W); zero where a tap falls on the padding. One row of col
// (a channel and tap) per blockIdx.y.
__global__ void im2col_kernel(float* col, const float* inp, Conv2dShape s, int images, Dims d) {
  const int NP = images * d.P;
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  GPULAB_ROWS(crs, d.CRS) {
    const int c = crs / (s.kernel_h * s.kernel_w);
    const int r = (crs / s.kernel_w) % s.kernel_h, q = crs % s.kernel_w;
    const float* plane = inp + size_t(c) * s.in_height * s.in_width;
    float* row = col + size_t(crs) * NP;
    GPULAB_COLS(j, NP) {
      const int n = j / d.P, p = j - n * d.P;
      const int ho = p / d.Wo, wo = p - ho * d.Wo;
      const int hi = ho * s.stride - s.padding + r, wi = wo * s.stride - s.padding + q;
      const bool inside = hi >= 0 && hi < s.in_height && wi >= 0 && wi < s.in_width;
      row[j] = inside ? plane[n * in_image + size_t(hi) * s.in_width + wi] : 0.0f;
    }
  }
}

// dinp (Nc, C, H, W) += the column gradients dcol (CRS, Nc*P) gathered back where im2col read,
// taps in (r, q) order as the reference. One channel of one image per blockIdx.y.
__global__ void col2im_add_kernel(float* dinp, const float* dcol, Conv2dShape s, int images,
                                  Dims d) {
  const int NP = images * d.P;
  const int Ho = d.P / d.Wo, HW = s.in_height * s.in_width;
  GPULAB_ROWS(nc, images * s.in_channels) {
    const int n = nc / s.in_channels, c = nc - n * s.in_channels;
    GPULAB_COLS(hw, HW) {
      const int h = hw / s.in_width, w = hw - h * s.in_width;
      float sum = 0.0f;
      for (int r = 0; r < s.kernel_h; ++r)
        for (int q = 0; q < s.kernel_w; ++q) {
          const int th = h + s.padding - r, tw = w + s.padding - q;
          if (th < 0 || tw < 0 || th % s.stride != 0 || tw % s.stride != 0) continue;
          const int ho = th / s.stride, wo = tw / s.stride;
          if (ho >= Ho || wo >= d.Wo) continue;
          const int crs = (c * s.kernel_h + r) * s.kernel_w + q;
          sum += dcol[size_t(crs) * NP + n * d.P + ho * d.Wo + wo];
        }
      dinp[size_t(nc) * HW + hw] += sum;
    }
  }
}

// out (Nc, K, P) = tmp (K, Nc*P) + bias: the GEMM result moved into the activation layout. One
// output channel per blockIdx.y.
__global__ void nkp_from_knp_kernel(float* out, const float* tmp, const float* bias, int images,
                                    Dims d) {
  const int NP = images * d.P;
  GPULAB_ROWS(k, d.K) {
    const float b = bias != nullptr ? bias[k] : 0.0f;
    const float* row = tmp + size_t(k) * NP;
    GPULAB_COLS(j, NP) {
      const int n = j / d.P, p = j - n * d.P;
      out[(size_t(n) * d.K + k) * d.P + p] = row[j] + b;
    }
  }
}

// tmp (K, Nc*P) from dout (Nc, K, P).
__global__ void knp_from_nkp_kernel(float* tmp, const float* dout, int images, Dims d) {
  const int NP = images * d.P;
  GPULAB_ROWS(k, d.K) {
    float* row = tmp + size_t(k) * NP;
    GPULAB_COLS(j, NP) {
      const int n = j / d.P, p = j - n * d.P;
      row[j] = dout[(size_t(n) * d.K + k) * d.P + p];
    }
  }
}

// out (n) += the sum of `slices` partial results (slices, n), in slice order.
__global__ void sum_slices_add_kernel(float* out, const float* partial, int slices, int n) {
  GPULAB_COLS(i, n) {
    float sum = 0.0f;
    for (int t = 0; t < slices; ++t) sum += partial[size_t(t) * n + i];
    out[i] += sum;
  }
}

#undef GPULAB_ROWS
#undef GPULAB_COLS

Dims dims_of(const Conv2dShape& s) {
  return {s.out_channels, s.in_channels * s.kernel_h * s.kernel_w, s.out_height() * s.out_width(),
          s.out_width()};
}

// The weight gradient's split: slices of at least kMinSliceColumns columns of the inner
// dimension, at most kMaxSlices of them, their partial results at most kMaxPartialFloats.
constexpr int kMaxSlices = 64;
constexpr int kMinSliceColumns = 512;
constexpr size_t kMaxPartialFloats = size_t(8) << 20;  // 32 MiB

// The slices the scratch makes room for: 0 when the weight gradient is too large to split.
int max_slices(const Dims& d) {
  const size_t result = size_t(d.K) * d.CRS;
  const size_t fit = result ? kMaxPartialFloats / result : 0;
  return fit < 2 ? 0 : int(fit < size_t(kMaxSlices) ? fit : size_t(kMaxSlices));
}

// Scratch floats per image of a chunk: forward, col (CRS, Nc*P) + GEMM result (K, Nc*P);
// backward, dout permuted (K, Nc*P) + col, which the column gradients reuse once the
// weight-gradient GEMM has read it.
size_t per_image_floats(const Dims& d) { return size_t(d.K + d.CRS) * d.P; }

// Scratch floats for the weight gradient's partial results, after the chunk's part.
size_t partial_floats(const Dims& d) { return size_t(max_slices(d)) * d.K * d.CRS; }

// Images per chunk that the scratch holds, so that every index within the chunk's buffers fits
// an int; throws when not even one image fits.
int chunk_images(const Conv2dShape& s, const Gemm& gemm, const char* op) {
  const Dims d = dims_of(s);
  const size_t per_image = per_image_floats(d), fixed = partial_floats(d);
  size_t fit = per_image && gemm.scratch_floats > fixed
                   ? (gemm.scratch_floats - fixed) / per_image
                   : 0;
  if (per_image && fit > size_t(INT_MAX) / per_image) fit = size_t(INT_MAX) / per_image;
  if (fit == 0 || gemm.scratch == nullptr)
    throw std::invalid_argument(std::string(op) + ": the scratch buffer holds " +
                                std::to_string(gemm.scratch_floats) + " floats, " +
                                std::to_string(fixed + per_image) + " needed for one image");
  return int(fit < size_t(s.batch) ? fit : size_t(s.batch));
}

// dweight (K, CRS) += dout_t (K, NP) x col^T (NP, CRS), the inner dimension NP cut into slices
// whose partial products land in `partial` and are then added in slice order.
void weight_gradient(float* dweight, const float* dout_t, const float* col, int NP, const Dims& d,
                     float* partial, const Gemm& gemm, cudaStream_t stream) {
  const int most = max_slices(d);
  const int slices = most > 0 ? (NP / kMinSliceColumns < most ? NP / kMinSliceColumns : most) : 0;
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

}  // namespace

size_t conv2d_scratch_floats(const Conv2dShape& s, int images) {
  const Dims d = dims_of(s);
  return per_image_floats(d) * size_t(images) + partial_floats(d);
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
    im2col_kernel<<<grid_2d(d.CRS, NP), kBlock, 0, stream>>>(col, inp + n0 * in_image, s, images,
                                                             d);
    GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
    // tmp (K, Nc*P) = weight (K, CRS) x col (CRS, Nc*P)
    cuda::gemm(gemm, false, false, d.K, NP, d.CRS, 1.0f, weight, d.CRS, col, NP, 0.0f, tmp, NP,
               stream);
    nkp_from_knp_kernel<<<grid_2d(d.K, NP), kBlock, 0, stream>>>(out + size_t(n0) * d.K * d.P,
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
    knp_from_nkp_kernel<<<grid_2d(d.K, NP), kBlock, 0, stream>>>(
        dout_t, dout + size_t(n0) * d.K * d.P, images, d);
    GPULAB_CUDA_CHECK_LAUNCH("knp_from_nkp_kernel");
    if (dbias != nullptr) row_sums_add(dbias, dout_t, d.K, size_t(NP), stream);
    if (dweight != nullptr) {
      im2col_kernel<<<grid_2d(d.CRS, NP), kBlock, 0, stream>>>(col, inp + n0 * in_image, s,
                                                               images, d);
      GPULAB_CUDA_CHECK_LAUNCH("im2col_kernel");
      weight_gradient(dweight, dout_t, col, NP, d, partial, gemm, stream);
    }
    if (dinp != nullptr) {
      // dcol (CRS, Nc*P) = weight^T (CRS, K) x dout_t (K, Nc*P)
      cuda::gemm(gemm, true, false, d.CRS, NP, d.K, 1.0f, weight, d.CRS, dout_t, NP, 0.0f, col,
                 NP, stream);
      col2im_add_kernel<<<grid_2d(images * s.in_channels, s.in_height * s.in_width), kBlock, 0,
                          stream>>>(dinp + n0 * in_image, col, s, images, d);
      GPULAB_CUDA_CHECK_LAUNCH("col2im_add_kernel");
    }
  }
}

}  // namespace gpulab::kernels::cuda
