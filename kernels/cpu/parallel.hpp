// Internal helpers of the fast CPU kernels: their thread count, the BLAS set-up, GEMMs split
// over the OpenMP threads, and grow-only thread-local workspaces (no allocation per call once
// warmed up).
#pragma once

#include <cstddef>

namespace gpulab::kernels::cpu::detail {

// The calling thread's count (cpu::num_threads). Every OpenMP region names it (num_threads
// clause): omp_set_num_threads would hold for one thread only and for every backend on it.
int threads();

// Elementwise loops shorter than this run on the calling thread: waking the team costs a few
// microseconds, about what one core needs for this many floats.
constexpr size_t kMinParallelElements = size_t(1) << 15;

// Call before BLAS calls: keeps the BLAS single-threaded, since every GEMM here is issued from
// OpenMP threads that have split the work already.
void prepare_blas();

// Row-major C (M,N) = alpha op(A) op(B) + beta C, as cblas_sgemm, with the larger of M and N
// split over the OpenMP threads and one single-threaded BLAS call per part. Small products run
// on the calling thread alone.
void parallel_sgemm(bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
                    const float* A, int lda, const float* B, int ldb, float beta, float* C,
                    int ldc);

// A grow-only, 64-byte aligned float buffer owned by the calling thread; `slot` tells apart the
// buffers one kernel needs at once. Contents are unspecified on return. Returns nullptr when
// out of memory (never throws: it is called inside OpenMP regions, which must not throw).
enum class Slot {
  kColumns,
  kGradColumns,
  kPartialGrad,
  kWinogradWeights,
  kTileScratch,
  kConvImage,  // one image's convolution output or output gradient, in a fused op
  kCount
};
float* thread_workspace(Slot slot, size_t floats);

}  // namespace gpulab::kernels::cpu::detail
