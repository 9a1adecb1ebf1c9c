// The matrix-multiply benchmark of `gpulab-cli bench matmul` and the matrix-multiply lab:
// single-precision products of square matrices on the CPU (the BLAS) and on a GPU (cuBLAS),
// timed alone and with the copies to the device and back.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gpulab {

// One size; the times are medians of several repeats, in milliseconds.
struct MatmulTiming {
  int size = 0;
  double ms = 0;              // the product alone
  double ms_with_copies = 0;  // with the copies of A and B to the device and C back (CPU: = ms)
};

// "32,64,128", or "32,...,4096" for every doubling from 32 to 4096; spaces allowed. Each from 1 to
// 65536, and each one's three matrices within the memory free now (check_matmul_memory). Throws
// ConfigError naming --sizes. (Not bench allreduce's byte sizes: no units, and a matrix size need
// not be a whole number of floats.)
std::vector<int> parse_matrix_sizes(const std::string& text);

// Throws ConfigError naming --sizes N, the memory the product's three N x N matrices need and the
// memory free now, unless they fit: checked before anything is allocated.
void check_matmul_memory(int n);

// Times C = A B for each size on `device` ("cpu", or "cuda:N"). The CPU uses every core through
// the BLAS. Throws ConfigError for a device this machine lacks, naming it, and for a size whose
// matrices do not fit the memory free now (check_matmul_memory), before any size runs.
std::vector<MatmulTiming> bench_matmul(const std::string& device, const std::vector<int>& sizes);

// The GFLOP/s of an n x n product that took `ms`: its 2n³ operations over the time. bench
// matmul's columns, a lab's table and the matrix-multiply chart all read this.
double matmul_gflops(int n, double ms);

// The largest difference between the device's product of two n x n matrices of fixed pseudo-
// random values and a plain triple loop, relative to the largest entry: the check that the
// benchmark multiplies what it says.
double matmul_error(const std::string& device, int n);

// The product of row-major n x n matrices on the GPU through cuBLAS (CUDA builds only).
std::vector<float> matmul_cuda(int gpu, const std::vector<float>& a, const std::vector<float>& b,
                               int n);
std::vector<MatmulTiming> bench_matmul_cuda(int gpu, const std::vector<int>& sizes);

// The median of repeated timings, and how many there were (never fewer than the minimum asked).
struct RepeatedTiming {
  double median_ms = 0;
  int passes = 0;
};

// Warms up with `once` (it returns milliseconds) until two passes in a row agree within a factor
// of 1.5 (a cold first pass pays for caches, page faults and sleeping threads; at most 5 warm-up
// passes), then repeats it at least `min_passes` times and on while `budget_ms` has not gone, at
// most `max_passes`; the median of the timed passes.
RepeatedTiming time_repeats(const std::function<double()>& once, int min_passes, int max_passes,
                            double budget_ms);

// time_repeats(once, 3, 50, 250): at least 3 and at most 50 passes in about a quarter second; the
// median. Both devices time this way.
double median_ms(const std::function<double()>& once);

}  // namespace gpulab
