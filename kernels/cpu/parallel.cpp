// Thread count of the fast CPU kernels, GEMMs split over OpenMP threads, and the thread-local
// workspaces.
#include "kernels/cpu/parallel.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::cpu {
namespace {

std::atomic<int>& default_thread_count() {
  static std::atomic<int> count{std::max(1, omp_get_max_threads())};  // honours OMP_NUM_THREADS
  return count;
}

// The calling thread's own count (a ThreadCountScope); 0: the process default.
thread_local int scoped_thread_count = 0;

}  // namespace

int resolve_num_threads(int threads) {
  return threads > 0 ? threads : std::max(1, omp_get_num_procs());
}

void set_num_threads(int threads) {
  default_thread_count().store(resolve_num_threads(threads));
  // The BLAS stays at one thread: the kernels split each GEMM over their OpenMP threads.
  detail::prepare_blas();
}

int num_threads() { return detail::threads(); }

ThreadCountScope::ThreadCountScope(int threads) : saved_(scoped_thread_count) {
  scoped_thread_count = resolve_num_threads(threads);
  detail::prepare_blas();
}

ThreadCountScope::~ThreadCountScope() { scoped_thread_count = saved_; }

void zero(float* x, size_t n) {
  // One core's stores do not saturate the memory bandwidth; the team's do better, and the
  // other threads would otherwise wait for this serial part of the step.
  const int team = n >= 4 * detail::kMinParallelElements ? detail::threads() : 1;
#pragma omp parallel num_threads(team)
  {
    const size_t part = (n + omp_get_num_threads() - 1) / omp_get_num_threads();
    const size_t begin = std::min(n, part * omp_get_thread_num());
    std::fill(x + begin, x + std::min(n, begin + part), 0.0f);
  }
}

namespace detail {

int threads() {
  return scoped_thread_count > 0 ? scoped_thread_count
                                 : default_thread_count().load(std::memory_order_relaxed);
}

void parallel_sgemm(bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
                    const float* A, int lda, const float* B, int ldb, float beta, float* C,
                    int ldc) {
  prepare_blas();
  const CBLAS_TRANSPOSE ta = transpose_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transpose_b ? CblasTrans : CblasNoTrans;
  // Below about a million multiply-adds the fork costs more than it saves.
  constexpr double kMinParallelWork = 1 << 20;
  const int team = threads();
  if (team == 1 || double(M) * N * K < kMinParallelWork) {
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const bool split_columns = N >= M;
  const int extent = split_columns ? N : M;
  // Parts are multiples of 16 rows or columns so that each call keeps whole SIMD panels.
  const int part = ((extent + team - 1) / team + 15) / 16 * 16;
#pragma omp parallel for num_threads(team) schedule(static, 1)
  for (int begin = 0; begin < extent; begin += part) {
    const int size = std::min(part, extent - begin);
    if (split_columns) {  // columns [begin, begin+size) of op(B) and of C
      const float* B_part = transpose_b ? B + size_t(begin) * ldb : B + begin;
      cblas_sgemm(CblasRowMajor, ta, tb, M, size, K, alpha, A, lda, B_part, ldb, beta, C + begin,
                  ldc);
    } else {  // rows [begin, begin+size) of op(A) and of C
      const float* A_part = transpose_a ? A + begin : A + size_t(begin) * lda;
      cblas_sgemm(CblasRowMajor, ta, tb, size, N, K, alpha, A_part, lda, B, ldb, beta,
                  C + size_t(begin) * ldc, ldc);
    }
  }
}

namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

struct Workspace {
  std::unique_ptr<float, FreeDeleter> data;
  size_t capacity = 0;
};

}  // namespace

float* thread_workspace(Slot slot, size_t floats) {
  thread_local Workspace spaces[static_cast<int>(Slot::kCount)];
  Workspace& w = spaces[static_cast<int>(slot)];
  if (floats > w.capacity) {
    // Whole cache lines, as aligned_alloc wants a multiple of the alignment.
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) return nullptr;
    w.data.reset(p);
    w.capacity = bytes / sizeof(float);
  }
  return w.data.get();
}

}  // namespace detail
}  // namespace gpulab::kernels::cpu
