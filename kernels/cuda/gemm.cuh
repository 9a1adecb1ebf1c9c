// Matrix products through cuBLAS with the precision of the run, and the context every GEMM op
// (conv2d, linear) takes: the handle, the precision and a scratch buffer.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels::cuda {

// fp32: plain float math. tf32 and bf16: the tensor cores multiply inputs rounded to TF32 or
// bfloat16 and accumulate in fp32; every buffer (weights, activations, gradients) stays fp32,
// so the master weights are fp32 (cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16BF).
enum class Precision { Fp32, Tf32, Bf16 };

struct Gemm {
  cublasHandle_t handle = nullptr;
  Precision precision = Precision::Fp32;
  float* scratch = nullptr;  // for im2col and transposes; see conv2d_scratch_floats
  size_t scratch_floats = 0;
};

// The cuBLAS compute type of a precision: fp32 must be CUBLAS_COMPUTE_32F, which never rounds
// the inputs to TF32, and tf32 and bf16 must reach cuBLAS as theirs.
cublasComputeType_t compute_type(Precision precision);

// Binds a handle to its stream and a workspace the caller owns. cublasSetStream resets the
// workspace to cuBLAS's own pool, which allocates during CUDA graph capture; so the stream is set
// first, then the workspace, and gemm() leaves the stream alone when it already matches.
void gemm_bind(cublasHandle_t handle, cudaStream_t stream, void* workspace, size_t bytes);

// Row-major C (M,N) = alpha op(A) op(B) + beta C, as cblas_sgemm(CblasRowMajor, ...), on stream.
void gemm(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          cudaStream_t stream);

// `batch` products as gemm() in one cuBLAS call: product i reads A + i * stride_a and
// B + i * stride_b and writes C + i * stride_c (a stride of 0 shares the operand).
void gemm_strided_batched(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K,
                          float alpha, const float* A, int lda, long long stride_a, const float* B,
                          int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
