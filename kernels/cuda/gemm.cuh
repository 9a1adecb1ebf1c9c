// Matrix products through cuBLAS with the precision of the run, and the context every GEMM op
// (conv2d, linear) takes: the handle, the precision and scratch buffers.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels::cuda {

// fp32: plain float math. tf32: fp32 operands with CUBLAS_COMPUTE_32F_FAST_TF32, the tensor
// cores rounding them to TF32 (10 mantissa bits). bf16: both operands of every product rounded to
// bfloat16 (7 mantissa bits, to nearest even) into Gemm::bf16_operands, then multiplied as bf16
// with fp32 accumulation and an fp32 result (CUBLAS_COMPUTE_32F). Every buffer (weights,
// activations, gradients) stays fp32, so the master weights are fp32. bf16 is not asked for as
// CUBLAS_COMPUTE_32F_FAST_16BF on fp32 operands: that only allows bf16, and cuBLAS chose TF32
// kernels, so "bf16" ran bit for bit as tf32.
enum class Precision { Fp32, Tf32, Bf16 };

struct Gemm {
  cublasHandle_t handle = nullptr;
  Precision precision = Precision::Fp32;
  float* scratch = nullptr;  // for im2col and transposes; see conv2d_scratch_floats
  size_t scratch_floats = 0;
  // bf16 only: room for a product's two operands rounded to bfloat16 (gemm_bf16_elements,
  // conv2d_bf16_elements, linear_bf16_elements). The owner allocates it before any CUDA graph
  // capture; gemm() never allocates, and throws when it is too small.
  __nv_bfloat16* bf16_operands = nullptr;
  size_t bf16_elements = 0;
};

// The cuBLAS compute type of a precision: fp32 must be CUBLAS_COMPUTE_32F, which never rounds
// the inputs to TF32; tf32 is CUBLAS_COMPUTE_32F_FAST_TF32; bf16 is CUBLAS_COMPUTE_32F on bf16
// operands (operand_type), fp32 accumulation.
cublasComputeType_t compute_type(Precision precision);
// The type of the A and B operands cuBLAS reads: CUDA_R_16BF for bf16, else CUDA_R_32F. C is
// always CUDA_R_32F.
cudaDataType_t operand_type(Precision precision);

// Elements of Gemm::bf16_operands a bf16 gemm() (batch 1) or gemm_strided_batched() needs: op(A)
// (M,K) and op(B) (K,N) packed, `batch` copies of an operand whose stride is not 0, the second
// one starting on a 16-byte boundary.
size_t gemm_bf16_elements(int M, int N, int K, int batch_a = 1, int batch_b = 1);

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
