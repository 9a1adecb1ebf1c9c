// Row-major GEMM on cuBLAS (which is column-major): C^T = op(B)^T op(A)^T, so the operands swap.
#include "kernels/cuda/gemm.cuh"

#include "kernels/cuda/check.hpp"

namespace gpulab::kernels::cuda {

void gemm_bind(cublasHandle_t handle, cudaStream_t stream, void* workspace, size_t bytes) {
  GPULAB_CUBLAS_CHECK(cublasSetStream(handle, stream));
  GPULAB_CUBLAS_CHECK(cublasSetWorkspace(handle, workspace, bytes));
}

cublasComputeType_t compute_type(Precision precision) {
  switch (precision) {
    case Precision::Tf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::Bf16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case Precision::Fp32:
      break;
  }
  return CUBLAS_COMPUTE_32F;
}

namespace {

void bind_stream(const Gemm& g, cudaStream_t stream) {
  cudaStream_t bound = nullptr;
  GPULAB_CUBLAS_CHECK(cublasGetStream(g.handle, &bound));
  if (bound != stream) GPULAB_CUBLAS_CHECK(cublasSetStream(g.handle, stream));
}

}  // namespace

void gemm(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  bind_stream(g, stream);
  GPULAB_CUBLAS_CHECK(cublasGemmEx(g.handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B,
                                   CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc,
                                   compute_type(g.precision), CUBLAS_GEMM_DEFAULT));
}

void gemm_strided_batched(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K,
                          float alpha, const float* A, int lda, long long stride_a, const float* B,
                          int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch, cudaStream_t stream) {
  if (M == 0 || N == 0 || batch == 0) return;
  bind_stream(g, stream);
  GPULAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      g.handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N,
      M, K, &alpha, B, CUDA_R_32F, ldb, stride_b, A, CUDA_R_32F, lda, stride_a, &beta, C,
      CUDA_R_32F, ldc, stride_c, batch, compute_type(g.precision), CUBLAS_GEMM_DEFAULT));
}

}  // namespace gpulab::kernels::cuda
