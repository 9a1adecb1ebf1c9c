// Fast 2-D convolution: im2col + one single-threaded SGEMM per image, with OpenMP spreading the
// images over the threads (on 2 cores, 33 ms per MNIST-net step against 57 ms with the BLAS
// threading each image's GEMM instead).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "kernels/cpu/conv2d_parts.hpp"
#include "kernels/cpu/im2col.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/shape_check.hpp"
#include "kernels/cpu/winograd.hpp"

namespace gpulab::kernels::cpu {

using detail::Slot;

namespace {

// conv2d_forward, and the fused forwards with the epilogue e.
void forward(float* out, const float* inp, const float* weight, const float* bias,
             const Conv2dShape& s, const detail::ConvEpilogue& e) {
  // out (N,K,Ho,Wo), or the pooling's output; inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  if (detail::winograd_applies(s))
    return detail::winograd_conv2d_forward(out, inp, weight, bias, s, e);
  const int K = s.out_channels, P = s.out_height() * s.out_width();
  const int CRS = s.in_channels * s.kernel_h * s.kernel_w;
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  const bool identity = detail::im2col_is_identity(s);
  std::atomic<bool> out_of_memory{false};
  detail::prepare_blas();
#pragma omp parallel num_threads(detail::threads())
  {
    float* col = identity ? nullptr : detail::thread_workspace(Slot::kColumns, size_t(CRS) * P);
    float* conv = e.pool ? detail::thread_workspace(Slot::kConvImage, size_t(K) * P) : nullptr;
    const bool ok = (identity || col != nullptr) && (!e.pool || conv != nullptr);
    if (!ok) out_of_memory = true;
#pragma omp for schedule(static)
    for (int n = 0; n < s.batch; ++n) {
      if (!ok) continue;
      const float* image = inp + n * in_image;
      float* out_n = e.pool ? conv : out + size_t(n) * K * P;  // (K, Ho*Wo)
      if (!identity) detail::im2col(col, image, s);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, P, CRS, 1.0f, weight, CRS,
                  identity ? image : col, P, 0.0f, out_n, P);
      if (bias != nullptr || e.relu)  // while the image's output is still in cache
        for (int k = 0; k < K; ++k) {
          float* row = out_n + size_t(k) * P;
          const float b = bias != nullptr ? bias[k] : 0.0f;
          for (int p = 0; p < P; ++p) {
            const float v = row[p] + b;
            row[p] = !e.relu || v > 0.0f ? v : 0.0f;
          }
        }
      detail::pool_after_conv(out, out_n, n, e);
    }
  }
  if (out_of_memory) throw std::bad_alloc();
}

// conv2d_backward, and the fused backwards with the gradient source g.
void backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
              const float* weight, const Conv2dShape& s, const detail::ConvGradientSource& g) {
  // dinp (N,C,H,W) or nullptr, dweight (K,C,R,S) or nullptr, dbias (K) or nullptr,
  // dout (N,K,Ho,Wo) or as g says, inp (N,C,H,W), weight (K,C,R,S)
  if (dinp == nullptr && dweight == nullptr && dbias == nullptr) return;
  if (detail::winograd_applies(s))
    return detail::winograd_conv2d_backward(dinp, dweight, dbias, dout, inp, weight, s, g);
  const bool fused = g.relu_out != nullptr || g.pool != nullptr;
  const int K = s.out_channels, P = s.out_height() * s.out_width();
  const int CRS = s.in_channels * s.kernel_h * s.kernel_w;
  const size_t in_image = size_t(s.in_channels) * s.in_height * s.in_width;
  const bool identity = detail::im2col_is_identity(s);
  // Each thread sums the weight and bias gradients of its images into a private (K*CRS + K)
  // buffer; the buffers are then added in thread order, so a given thread count always gives
  // the same bits.
  const size_t partial_size =
      (dweight != nullptr ? size_t(K) * CRS : 0) + (dbias != nullptr ? K : 0);
  constexpr int kMaxThreads = 256;
  float* partials[kMaxThreads] = {};
  std::atomic<bool> out_of_memory{false};
  detail::prepare_blas();
#pragma omp parallel num_threads(std::min(detail::threads(), kMaxThreads))
  {
    const int t = omp_get_thread_num();
    const bool need_col = dweight != nullptr && !identity;
    const bool need_dcol = dinp != nullptr && !identity;
    float* col = need_col ? detail::thread_workspace(Slot::kColumns, size_t(CRS) * P) : nullptr;
    float* dcol =
        need_dcol ? detail::thread_workspace(Slot::kGradColumns, size_t(CRS) * P) : nullptr;
    float* partial =
        partial_size ? detail::thread_workspace(Slot::kPartialGrad, partial_size) : nullptr;
    float* grad = fused ? detail::thread_workspace(Slot::kConvImage, size_t(K) * P) : nullptr;
    if ((need_col && !col) || (need_dcol && !dcol) || (partial_size && !partial) ||
        (fused && !grad)) {
      out_of_memory = true;
    }
    // Every thread must take the same branch around the worksharing loops below.
#pragma omp barrier
    const bool ok = !out_of_memory.load();
    if (ok && partial != nullptr) std::fill(partial, partial + partial_size, 0.0f);
    partials[t] = partial;
    float* partial_dweight = dweight != nullptr ? partial : nullptr;                 // (K, CRS)
    float* partial_dbias = dbias != nullptr ? partial + partial_size - K : nullptr;  // (K)
#pragma omp for schedule(static)
    for (int n = 0; n < s.batch; ++n) {
      if (!ok) continue;
      const float* dout_n = detail::conv_output_gradient(grad, dout, n, size_t(K) * P, g);
      const float* image = inp + n * in_image;  // (C, H, W)
      if (partial_dbias != nullptr) detail::add_channel_sums(partial_dbias, dout_n, K, P);
      if (partial_dweight != nullptr) {
        if (!identity) detail::im2col(col, image, s);
        // dweight (K, CRS) += dout_n (K, P) x col^T (P, CRS)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K, CRS, P, 1.0f, dout_n, P,
                    identity ? image : col, P, 1.0f, partial_dweight, CRS);
      }
      if (dinp != nullptr) {
        float* dinp_n = dinp + n * in_image;
        // dcol (CRS, P) = weight^T (CRS, K) x dout_n (K, P); a 1x1 convolution adds it in place.
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CRS, P, K, 1.0f, weight, CRS, dout_n,
                    P, identity ? 1.0f : 0.0f, identity ? dinp_n : dcol, P);
        if (!identity) detail::col2im_add(dinp_n, dcol, s);
      }
    }
    // The implicit barrier above makes every partial complete before the sum.
    if (partial_size != 0 && ok) {
      const int team = omp_get_num_threads();
#pragma omp for schedule(static)
      for (size_t j = 0; j < partial_size; ++j) {
        float sum = 0.0f;
        for (int u = 0; u < team; ++u) sum += partials[u][j];
        if (dweight != nullptr && j < size_t(K) * CRS)
          dweight[j] += sum;
        else
          dbias[j - (partial_size - K)] += sum;
      }
    }
  }
  if (out_of_memory) throw std::bad_alloc();
}

}  // namespace

void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const Conv2dShape& s) {
  kernels::detail::check_conv2d_shape(s, "conv2d_forward");
  forward(out, inp, weight, bias, s, {});
}

void conv2d_relu_forward(float* out, const float* inp, const float* weight, const float* bias,
                         const Conv2dShape& s) {
  kernels::detail::check_conv2d_shape(s, "conv2d_relu_forward");
  forward(out, inp, weight, bias, s, {.relu = true});
}

void conv2d_relu_maxpool_forward(float* out, int32_t* argmax, const float* inp, const float* weight,
                                 const float* bias, const Conv2dShape& s, const Pool2dShape& pool) {
  kernels::detail::check_conv2d_pool_shapes(s, pool, "conv2d_relu_maxpool_forward");
  forward(out, inp, weight, bias, s, {.relu = true, .pool = &pool, .argmax = argmax});
}

void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s) {
  kernels::detail::check_conv2d_shape(s, "conv2d_backward");
  backward(dinp, dweight, dbias, dout, inp, weight, s, {});
}

void conv2d_relu_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                          const float* out, const float* inp, const float* weight,
                          const Conv2dShape& s) {
  kernels::detail::check_conv2d_shape(s, "conv2d_relu_backward");
  backward(dinp, dweight, dbias, dout, inp, weight, s, {.relu_out = out});
}

void conv2d_relu_maxpool_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                                  const float* out, const int32_t* argmax, const float* inp,
                                  const float* weight, const Conv2dShape& s,
                                  const Pool2dShape& pool) {
  kernels::detail::check_conv2d_pool_shapes(s, pool, "conv2d_relu_maxpool_backward");
  backward(dinp, dweight, dbias, dout, inp, weight, s,
           {.pool = &pool, .pool_out = out, .argmax = argmax});
}

}  // namespace gpulab::kernels::cpu
