// The matrix-multiply benchmark on the CPU, and what both devices share: inputs, the naive
// check and the choice of device.
#include "engine/devices/matmul_bench.hpp"

#include <cblas.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>

#include "engine/backend/backend.hpp"
#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/flag_list.hpp"
#include "engine/base/size_list.hpp"
#include "engine/devices/devices.hpp"
#include "gpulab/build_config.hpp"

extern "C" {
void openblas_set_num_threads(int threads) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace gpulab {
namespace {

std::vector<float> pseudo_random(int n, unsigned seed) {
  std::vector<float> values(size_t(n) * n);
  unsigned state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = float(state >> 8) / float(1u << 24) - 0.5f;
  }
  return values;
}

// The training kernels keep the BLAS to one thread (they split work themselves); the benchmark
// gives it every core for as long as it runs, as a plain sgemm call would have.
class AllBlasThreads {
 public:
  AllBlasThreads() {
    if (openblas_get_num_threads && openblas_set_num_threads) {
      before_ = openblas_get_num_threads();
      openblas_set_num_threads(int(std::max(1u, std::thread::hardware_concurrency())));
    }
  }
  ~AllBlasThreads() {
    if (before_ > 0) openblas_set_num_threads(before_);
  }

 private:
  int before_ = 0;
};

void sgemm_cpu(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
               int n) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
}

}  // namespace

RepeatedTiming time_repeats(const std::function<double()>& once, int min_passes, int max_passes,
                            double budget_ms) {
  constexpr int kMaxWarmups = 5;
  double last = once();
  for (int warmups = 1; warmups < kMaxWarmups; ++warmups) {
    const double now = once();
    const bool settled = now <= 1.5 * last && last <= 1.5 * now;
    last = now;
    if (settled) break;
  }
  std::vector<double> times;
  double total = 0;
  while (int(times.size()) < min_passes || (total < budget_ms && int(times.size()) < max_passes)) {
    times.push_back(once());
    total += times.back();
  }
  std::nth_element(times.begin(), times.begin() + ptrdiff_t(times.size() / 2), times.end());
  return {times[times.size() / 2], int(times.size())};
}

double median_ms(const std::function<double()>& once) {
  return time_repeats(once, 3, 50, 250).median_ms;
}

void check_matmul_memory(int n) {
  // A, B and C of n x n floats, all in host memory (a GPU's copies come from them).
  const std::string shortfall = memory_shortfall(3 * uint64_t(n) * uint64_t(n) * sizeof(float));
  if (!shortfall.empty())
    throw ConfigError("--sizes " + std::to_string(n) + ": the product of two " + std::to_string(n) +
                      "x" + std::to_string(n) + " matrices " + shortfall + "; use smaller sizes");
}

std::vector<int> parse_matrix_sizes(const std::string& text) {
  auto one = [](const std::string& part) {
    int n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (ec != std::errc() || end != part.data() + part.size() || n < 1 || n > 65536)
      throw ConfigError("--sizes: \"" + part + "\" is not a matrix size from 1 to 65536");
    check_matmul_memory(n);
    return n;
  };
  return expand_size_list<int>(split_flag_list(text), one, "32,...,4096");
}

std::vector<MatmulTiming> bench_matmul(const std::string& device, const std::vector<int>& sizes) {
  for (int n : sizes) check_matmul_memory(n);  // before any size runs: the whole list fits
  const int gpu = cuda_device_index(device);
  if (gpu >= 0) {
    if (!GPULAB_CUDA_ENABLED)
      throw ConfigError("--device " + device + ": no GPU: this build has no CUDA backend");
    require_gpu(device);
    return bench_matmul_cuda(gpu, sizes);
  }
  AllBlasThreads threads;
  std::vector<MatmulTiming> timings;
  for (int n : sizes) {
    const auto a = pseudo_random(n, 1), b = pseudo_random(n, 2);
    std::vector<float> c(size_t(n) * n);
    const double ms = median_ms([&] {
      const auto start = Clock::now();
      sgemm_cpu(a, b, c, n);
      return ms_since(start);
    });
    timings.push_back({n, ms, ms});  // the data is already where the CPU works on it
  }
  return timings;
}

double matmul_error(const std::string& device, int n) {
  const auto a = pseudo_random(n, 1), b = pseudo_random(n, 2);
  std::vector<float> c(size_t(n) * n);
  const int gpu = cuda_device_index(device);
  if (gpu >= 0) {
    require_gpu(device);
    c = matmul_cuda(gpu, a, b, n);
  } else {
    AllBlasThreads threads;
    sgemm_cpu(a, b, c, n);
  }
  double largest = 0, error = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += double(a[size_t(i) * n + k]) * b[size_t(k) * n + j];
      largest = std::max(largest, std::abs(sum));
      error = std::max(error, std::abs(sum - c[size_t(i) * n + j]));
    }
  return largest > 0 ? error / largest : error;
}

#if !GPULAB_CUDA_ENABLED
std::vector<float> matmul_cuda(int, const std::vector<float>&, const std::vector<float>&, int) {
  throw ConfigError("no GPU: this build has no CUDA backend");
}
std::vector<MatmulTiming> bench_matmul_cuda(int, const std::vector<int>&) {
  throw ConfigError("no GPU: this build has no CUDA backend");
}
#endif

double matmul_gflops(int n, double ms) { return 2.0 * double(n) * n * n / (ms * 1e6); }

}  // namespace gpulab
