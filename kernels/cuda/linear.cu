// Fully connected layer: each product one cuBLAS GEMM, the bias broadcast before the forward
// GEMM (which then accumulates onto it, as the fast CPU kernel does) and summed for its gradient.
#include <algorithm>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/linear.cuh"
#include "kernels/cuda/reduce.cuh"

namespace gpulab::kernels::cuda {
namespace {

// out (N, OC) = bias broadcast over the rows
__global__ void broadcast_rows_kernel(float* out, const float* bias, size_t rows, int cols) {
  GPULAB_GRID_STRIDE_LOOP(i, rows * cols) out[i] = bias[i % cols];
}

}  // namespace

size_t linear_bf16_elements(int batch, int in_features, int out_features) {
  const size_t forward = gemm_bf16_elements(batch, out_features, in_features);
  const size_t input_grad = gemm_bf16_elements(batch, in_features, out_features);
  const size_t weight_grad = gemm_bf16_elements(out_features, in_features, batch);
  return std::max({forward, input_grad, weight_grad});
}

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int batch,
                    int in_features, int out_features, const Gemm& gemm, cudaStream_t stream) {
  // out (N,OC), inp (N,IC), weight (OC,IC), bias (OC) or nullptr
  if (batch == 0) return;
  if (bias != nullptr) {
    const size_t n = size_t(batch) * out_features;
    broadcast_rows_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(out, bias, batch,
                                                                              out_features);
    GPULAB_CUDA_CHECK_LAUNCH("broadcast_rows_kernel");
  }
  // out (N, OC) = inp (N, IC) x weight^T (IC, OC) [+ out, which holds the bias]
  cuda::gemm(gemm, false, true, batch, out_features, in_features, 1.0f, inp, in_features, weight,
             in_features, bias != nullptr ? 1.0f : 0.0f, out, out_features, stream);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int batch, int in_features, int out_features,
                     const Gemm& gemm, cudaStream_t stream) {
  // dinp (N,IC) or nullptr, dweight (OC,IC) or nullptr, dbias (OC) or nullptr,
  // dout (N,OC), inp (N,IC), weight (OC,IC)
  if (batch == 0) return;
  if (dinp != nullptr)  // dinp (N, IC) += dout (N, OC) x weight (OC, IC)
    cuda::gemm(gemm, false, false, batch, in_features, out_features, 1.0f, dout, out_features,
               weight, in_features, 1.0f, dinp, in_features, stream);
  if (dweight != nullptr)  // dweight (OC, IC) += dout^T (OC, N) x inp (N, IC)
    cuda::gemm(gemm, true, false, out_features, in_features, batch, 1.0f, dout, out_features, inp,
               in_features, 1.0f, dweight, in_features, stream);
  if (dbias != nullptr) column_sums_add(dbias, dout, batch, out_features, stream);
}

}  // namespace gpulab::kernels::cuda
