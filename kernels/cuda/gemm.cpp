// Row-major GEMM on cuBLAS (which is column-major): C^T = op(B)^T op(A)^T, so the operands swap.
// In bf16 both operands are first rounded into packed bf16 copies in the caller's scratch.
#include "kernels/cuda/gemm.cuh"

#include <stdexcept>
#include <string>

#include "kernels/cuda/bf16_round.cuh"
#include "kernels/cuda/check.hpp"

namespace gpulab::kernels::cuda {

void gemm_bind(cublasHandle_t handle, cudaStream_t stream, void* workspace, size_t bytes) {
  GPULAB_CUBLAS_CHECK(cublasSetStream(handle, stream));
  GPULAB_CUBLAS_CHECK(cublasSetWorkspace(handle, workspace, bytes));
}

cublasComputeType_t compute_type(Precision precision) {
  return precision == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cudaDataType_t operand_type(Precision precision) {
  return precision == Precision::Bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

namespace {

constexpr size_t kAlignElements = 8;  // 16 bytes of bf16: where the second operand starts

size_t aligned(size_t n) { return (n + kAlignElements - 1) / kAlignElements * kAlignElements; }

void bind_stream(const Gemm& g, cudaStream_t stream) {
  cudaStream_t bound = nullptr;
  GPULAB_CUBLAS_CHECK(cublasGetStream(g.handle, &bound));
  if (bound != stream) GPULAB_CUBLAS_CHECK(cublasSetStream(g.handle, stream));
}

cublasOperation_t op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

// One operand as cuBLAS reads it: where, its leading dimension and the stride between matrices.
struct Operand {
  const void* data;
  int ld;
  long long stride;
};

// An operand stored as (rows, cols), rows ld apart, `batch` matrices stride apart (0: shared).
struct Stored {
  const float* data;
  int rows, cols, ld;
  long long stride;
  size_t count(int batch) const { return size_t(rows) * size_t(cols) * (stride ? batch : 1); }
};

// The operands as given (fp32, tf32), or rounded to bf16 into g.bf16_operands, packed: rows
// `cols` apart, matrices rows * cols apart (still 0 where shared).
std::pair<Operand, Operand> operands(const Gemm& g, const Stored& a, const Stored& b, int batch,
                                     cudaStream_t stream) {
  if (g.precision != Precision::Bf16) return {{a.data, a.ld, a.stride}, {b.data, b.ld, b.stride}};
  const size_t a_count = a.count(batch), needed = aligned(a_count) + b.count(batch);
  if (g.bf16_operands == nullptr || g.bf16_elements < needed)
    throw std::invalid_argument("gemm: bf16 operands need " + std::to_string(needed) +
                                " elements of scratch, Gemm::bf16_operands holds " +
                                std::to_string(g.bf16_operands ? g.bf16_elements : 0));
  __nv_bfloat16* a16 = g.bf16_operands;
  __nv_bfloat16* b16 = a16 + aligned(a_count);
  const int a_batch = a.stride ? batch : 1, b_batch = b.stride ? batch : 1;
  round_to_bf16(a16, a.data, a.rows, a.cols, a.ld, a.stride, a_batch, stream);
  round_to_bf16(b16, b.data, b.rows, b.cols, b.ld, b.stride, b_batch, stream);
  // A leading dimension must be at least 1, also for an operand with no columns.
  return {{a16, a.cols > 0 ? a.cols : 1, a.stride ? (long long)a.rows * a.cols : 0},
          {b16, b.cols > 0 ? b.cols : 1, b.stride ? (long long)b.rows * b.cols : 0}};
}

// A is stored (M, K), or (K, M) when transposed; B (K, N), or (N, K).
Stored stored_a(bool transpose, int M, int K, const float* A, int lda, long long stride) {
  return {A, transpose ? K : M, transpose ? M : K, lda, stride};
}
Stored stored_b(bool transpose, int N, int K, const float* B, int ldb, long long stride) {
  return {B, transpose ? N : K, transpose ? K : N, ldb, stride};
}

}  // namespace

size_t gemm_bf16_elements(int M, int N, int K, int batch_a, int batch_b) {
  return aligned(size_t(M) * size_t(K) * size_t(batch_a)) + size_t(K) * size_t(N) * size_t(batch_b);
}

void gemm(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  const auto [a, b] = operands(g, stored_a(transpose_a, M, K, A, lda, 0),
                               stored_b(transpose_b, N, K, B, ldb, 0), 1, stream);
  bind_stream(g, stream);
  const cudaDataType_t type = operand_type(g.precision);
  GPULAB_CUBLAS_CHECK(cublasGemmEx(g.handle, op(transpose_b), op(transpose_a), N, M, K, &alpha,
                                   b.data, type, b.ld, a.data, type, a.ld, &beta, C, CUDA_R_32F,
                                   ldc, compute_type(g.precision), CUBLAS_GEMM_DEFAULT));
}

void gemm_strided_batched(const Gemm& g, bool transpose_a, bool transpose_b, int M, int N, int K,
                          float alpha, const float* A, int lda, long long stride_a, const float* B,
                          int ldb, long long stride_b, float beta, float* C, int ldc,
                          long long stride_c, int batch, cudaStream_t stream) {
  if (M == 0 || N == 0 || batch == 0) return;
  const auto [a, b] = operands(g, stored_a(transpose_a, M, K, A, lda, stride_a),
                               stored_b(transpose_b, N, K, B, ldb, stride_b), batch, stream);
  bind_stream(g, stream);
  const cudaDataType_t type = operand_type(g.precision);
  GPULAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      g.handle, op(transpose_b), op(transpose_a), N, M, K, &alpha, b.data, type, b.ld, b.stride,
      a.data, type, a.ld, a.stride, &beta, C, CUDA_R_32F, ldc, stride_c, batch,
      compute_type(g.precision), CUBLAS_GEMM_DEFAULT));
}

}  // namespace gpulab::kernels::cuda
