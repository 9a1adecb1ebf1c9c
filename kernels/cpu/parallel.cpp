// Thread count of the fast CPU kernels (OpenMP and OpenBLAS) and their thread-local workspaces.
#include "kernels/cpu/parallel.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include "kernels/cpu/ops.hpp"

// OpenBLAS's thread control is not in every cblas.h, and a generic BLAS lacks it: weak
// declarations link everywhere and are null where the BLAS does not provide them.
extern "C" {
void openblas_set_num_threads(int threads) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace gpulab::kernels::cpu {
extern int conv_scheme;
namespace detail { extern int linear_scheme; }
namespace {

std::atomic<int>& thread_count() {
  static std::atomic<int> count{std::max(1, omp_get_max_threads())};
  return count;
}

}  // namespace

void set_num_threads(int threads) {
  if (threads <= 0) threads = std::max(1, omp_get_num_procs());
  thread_count().store(threads);
  omp_set_num_threads(threads);  // for the caller's own OpenMP code; the kernels use threads()
  // TEMPORARY experiment switches
  const char* blas = std::getenv("GPULAB_BLAS_THREADS");
  detail::set_blas_threads(blas ? std::atoi(blas) : threads);
  if (const char* cs = std::getenv("GPULAB_CONV_SCHEME")) conv_scheme = std::atoi(cs);
  if (const char* ls = std::getenv("GPULAB_LINEAR_SCHEME")) detail::linear_scheme = std::atoi(ls);
}

int num_threads() { return thread_count().load(); }

namespace detail {

int threads() { return thread_count().load(std::memory_order_relaxed); }

void set_blas_threads(int threads) {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(threads);
}

int blas_threads() {
  return openblas_get_num_threads != nullptr ? openblas_get_num_threads() : 1;
}

SerialBlasScope::SerialBlasScope() : saved_(blas_threads()) {
  if (saved_ > 1) set_blas_threads(1);
}

SerialBlasScope::~SerialBlasScope() {
  if (saved_ > 1) set_blas_threads(saved_);
}

int linear_scheme = 0;  // TEMPORARY: 0 = OpenMP split, 1 = threaded BLAS

void parallel_sgemm(bool transpose_a, bool transpose_b, int M, int N, int K, float alpha,
                    const float* A, int lda, const float* B, int ldb, float beta, float* C,
                    int ldc) {
  const CBLAS_TRANSPOSE ta = transpose_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transpose_b ? CblasTrans : CblasNoTrans;
  // Below about a million multiply-adds the fork costs more than it saves.
  constexpr double kMinParallelWork = 1 << 20;
  const int team = linear_scheme == 1 ? 1 : threads();
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
    if (split_columns) {
      // Columns [begin, begin+size) of op(B) and of C.
      const float* B_part = transpose_b ? B + size_t(begin) * ldb : B + begin;
      cblas_sgemm(CblasRowMajor, ta, tb, M, size, K, alpha, A, lda, B_part, ldb, beta,
                  C + begin, ldc);
    } else {
      // Rows [begin, begin+size) of op(A) and of C.
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
    // Round up to whole cache lines, as aligned_alloc requires a multiple of the alignment.
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
