// Internal helpers of the fast CPU kernels: the thread count they use, BLAS thread control and
// grow-only thread-local workspaces (no heap allocation per call once warmed up).
#pragma once

#include <cstddef>

namespace gpulab::kernels::cpu::detail {

// The thread count set by cpu::set_num_threads, read by every OpenMP region (num_threads
// clause), so it holds whichever thread calls the kernels.
int threads();

// Elementwise loops shorter than this run on the calling thread: waking the team costs a few
// microseconds, about what one core needs for this many floats.
constexpr size_t kMinParallelElements = size_t(1) << 15;

// OpenBLAS threads (where the BLAS can be told; other BLAS libraries ignore these).
void set_blas_threads(int threads);
int blas_threads();

// Runs the BLAS single-threaded while alive, for GEMMs issued from inside an OpenMP region:
// the pthread OpenBLAS would otherwise fan every call out to its own pool, and the two pools
// fight over the cores.
class SerialBlasScope {
 public:
  SerialBlasScope();
  ~SerialBlasScope();
  SerialBlasScope(const SerialBlasScope&) = delete;
  SerialBlasScope& operator=(const SerialBlasScope&) = delete;

 private:
  int saved_ = 1;
};

// Row-major C (M,N) = alpha op(A) op(B) + beta C, as cblas_sgemm, with the larger of M and N
// split over the OpenMP threads and a single-threaded BLAS call per part. Small products run
// on the calling thread alone.
void parallel_sgemm(bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
                    const float* A, int lda, const float* B, int ldb, float beta, float* C,
                    int ldc);

// A grow-only, 64-byte aligned float buffer owned by the calling thread. `slot` tells apart the
// buffers one kernel needs at once. Contents are unspecified on return. Returns nullptr when
// out of memory (never throws: it is called inside OpenMP regions, which must not throw).
enum class Slot { kColumns, kGradColumns, kPartialGrad, kCount };
float* thread_workspace(Slot slot, size_t floats);

}  // namespace gpulab::kernels::cpu::detail
