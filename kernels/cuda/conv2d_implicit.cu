// Convolution as implicit GEMM (kernels/cuda/implicit_gemm.cuh): three products whose operands are
// read from the NCHW tensors through the unfolding's indices, and whose results are stored
// straight into the NCHW layouts, so there is no im2col, no col2im and no permute. Forward:
// (K, N*P) = weight (K, CRS) x unfolded input (CRS, N*P), bias and ReLU in the store. Input
// gradient: (C, N*H*W) = weight^T (C, K*R*S) x dout gathered at each input position's taps. Weight
// gradient: (K, CRS) = dout (K, N*P) x unfolded input^T, its depth cut into slices whose partial
// sums are added in slice order. No atomics, so the same inputs give the same bits.
#include "kernels/cpu/shape_check.hpp"
#include "kernels/cuda/conv2d_implicit.cuh"
#include "kernels/cuda/conv2d_implicit_products.cuh"
#include "kernels/cuda/implicit_gemm.cuh"
#include "kernels/cuda/launch.cuh"

namespace gpulab::kernels::cuda {
namespace {

using detail::ForwardProduct;
using detail::Geometry;
using detail::InputGradProduct;
using detail::kTileM;
using detail::kTileN;
using detail::WeightGradProduct;

// out (n) += the sum of `slices` partial results (slices, n), in slice order.
__global__ void add_slices_kernel(float* out, const float* partial, int slices, int n) {
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += int(gridDim.x * blockDim.x)) {
    float sum = 0.0f;
    for (int t = 0; t < slices; ++t) sum += partial[size_t(t) * n + i];
    out[i] += sum;
  }
}

// dbias (K) += the sum over images and positions of dout (N,K,P), masked as dout_at: one block
// per channel, a fixed order.
__global__ void bias_grad_kernel(float* dbias, const float* dout, const float* relu_out, int images,
                                 Geometry g) {
  const int k = int(blockIdx.x);
  const int count = images * g.P;
  float sum = 0.0f;
  for (int t = int(threadIdx.x); t < count; t += detail::kBlock) {
    const int n = t / g.P;
    sum += g.dout_at(dout, relu_out, n, k, t - n * g.P);
  }
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) dbias[k] += sum;
}

// C (M, N) by the tiles of implicit_gemm_kernel in the given precision, the depth in `slices`
// slices of slice_depth (the last one shorter).
template <class Product>
void multiply(const Product& product, int M, int N, int depth, int slices, int slice_depth,
              Precision precision, cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  const dim3 grid(unsigned((N + kTileN - 1) / kTileN), unsigned((M + kTileM - 1) / kTileM),
                  unsigned(slices));
  switch (precision) {
    case Precision::Fp32:
      detail::implicit_gemm_kernel<Precision::Fp32>
          <<<grid, detail::kTileThreads, 0, stream>>>(product, M, N, depth, slice_depth);
      break;
    case Precision::Tf32:
      detail::implicit_gemm_kernel<Precision::Tf32>
          <<<grid, detail::kTileThreads, 0, stream>>>(product, M, N, depth, slice_depth);
      break;
    case Precision::Bf16:
      detail::implicit_gemm_kernel<Precision::Bf16>
          <<<grid, detail::kTileThreads, 0, stream>>>(product, M, N, depth, slice_depth);
      break;
  }
  GPULAB_CUDA_CHECK_LAUNCH("implicit_gemm_kernel");
}

}  // namespace

size_t conv2d_implicit_scratch_floats(const Conv2dShape& s) {
  const Geometry g = detail::geometry_of(s);
  const int images = s.batch > 0 ? detail::chunk_images(s, g) : 0;
  const int slices = detail::wanted_slices(g, images * g.P);
  return slices < 2 ? 0 : size_t(slices) * g.K * g.CRS;
}

void conv2d_implicit_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const Conv2dShape& s, bool relu, const Gemm& gemm,
                             cudaStream_t stream) {
  // out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  kernels::detail::check_conv2d_shape(s, "conv2d_implicit_forward");
  if (s.batch == 0) return;
  const Geometry g = detail::geometry_of(s);
  const int chunk = detail::chunk_images(s, g);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    const int images = s.batch - n0 < chunk ? s.batch - n0 : chunk;
    const ForwardProduct product{
        out + size_t(n0) * g.K * g.P, inp + size_t(n0) * g.C * g.HW, weight, bias, g, relu};
    multiply(product, g.K, images * g.P, g.CRS, 1, g.CRS, gemm.precision, stream);
  }
}

void conv2d_implicit_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* relu_out, const float* inp, const float* weight,
                              const Conv2dShape& s, const Gemm& gemm, cudaStream_t stream) {
  // dinp (N,C,H,W) or nullptr, dweight (K,C,R,S) or nullptr, dbias (K) or nullptr,
  // dout (N,K,Ho,Wo), relu_out (N,K,Ho,Wo) or nullptr, inp (N,C,H,W), weight (K,C,R,S)
  kernels::detail::check_conv2d_shape(s, "conv2d_implicit_backward");
  if (s.batch == 0) return;
  const Geometry g = detail::geometry_of(s);
  const int chunk = detail::chunk_images(s, g);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    const int images = s.batch - n0 < chunk ? s.batch - n0 : chunk;
    const float* dout_n = dout + size_t(n0) * g.K * g.P;
    const float* relu_n = relu_out != nullptr ? relu_out + size_t(n0) * g.K * g.P : nullptr;
    const float* inp_n = inp + size_t(n0) * g.C * g.HW;
    if (dbias != nullptr) {
      bias_grad_kernel<<<unsigned(g.K), detail::kBlock, 0, stream>>>(dbias, dout_n, relu_n, images,
                                                                     g);
      GPULAB_CUDA_CHECK_LAUNCH("bias_grad_kernel");
    }
    if (dweight != nullptr) {
      const int depth = images * g.P;
      const size_t result = size_t(g.K) * g.CRS;
      const detail::WeightGradSplit split =
          detail::split_weight_gradient(g, depth, gemm.scratch, gemm.scratch_floats);
      float* partial = split.slices > 1 ? gemm.scratch : nullptr;
      const WeightGradProduct product{dweight, partial, dout_n, relu_n, inp_n, g};
      multiply(product, g.K, g.CRS, depth, split.slices, split.slice_depth, gemm.precision, stream);
      if (partial != nullptr) {
        add_slices_kernel<<<detail::grid_for(result), detail::kBlock, 0, stream>>>(
            dweight, partial, split.slices, int(result));
        GPULAB_CUDA_CHECK_LAUNCH("add_slices_kernel");
      }
    }
    if (dinp != nullptr) {
      const InputGradProduct product{dinp + size_t(n0) * g.C * g.HW, dout_n, relu_n, weight, g};
      multiply(product, g.C, images * g.HW, g.K * g.RS, 1, g.K * g.RS, gemm.precision, stream);
    }
  }
}

}  // namespace gpulab::kernels::cuda
