// Shared by the CUDA test suites: whether a GPU is there (and why not), moving vectors to and
// from the device, and ggml's normalized error for comparing a CUDA op with the CPU oracle.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/memory.hpp"

namespace gpulab::test {

// Empty when a CUDA device can be used, else why not ("no GPU: ...").
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    // Without a driver the runtime calls it "insufficient": say what is really missing.
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
      dlclose(driver);
    else
      return "no GPU: no NVIDIA driver (libcuda.so.1 is not installed)";
    return std::string("no GPU: ") + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  }
  if (count == 0) return "no GPU: no CUDA device";
  return {};
}

inline bool gpu_available() { return gpu_unavailable_reason().empty(); }

// Skips the test, saying why, where there is no GPU: the suites pass on machines without one.
#define GPULAB_REQUIRE_GPU()                                                     \
  do {                                                                           \
    const std::string gpulab_reason_ = ::gpulab::test::gpu_unavailable_reason(); \
    if (!gpulab_reason_.empty()) GTEST_SKIP() << gpulab_reason_;                 \
  } while (0)

template <class T>
kernels::cuda::DeviceBuffer<T> upload(const std::vector<T>& host) {
  kernels::cuda::DeviceBuffer<T> device(host.size(), "test data");
  if (!host.empty())
    GPULAB_CUDA_CHECK(
        cudaMemcpy(device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  // A copy from pageable memory may still be in flight when cudaMemcpy returns, and the ops run
  // on a non-blocking stream that does not wait for the legacy one.
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  return device;
}

template <class T>
std::vector<T> download(const kernels::cuda::DeviceBuffer<T>& device) {
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());  // surfaces a kernel fault here, in the test
  std::vector<T> host(device.size());
  if (!host.empty())
    GPULAB_CUDA_CHECK(
        cudaMemcpy(host.data(), device.data(), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// mse(a, b) / mse(b, 0), ggml's test-backend-ops measure; plain mse when b is all zeros.
inline double normalized_error(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm > 0 ? err / norm : err;
}

inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Bounds on normalized_error against the CPU reference, by the GEMM precision: fp32 is plain
// float math; TF32 keeps 10 mantissa bits (rounding error ~2^-11, squared ~2.4e-7), bfloat16
// 7 bits (~2^-8, squared ~1.5e-5); the bounds leave a margin over those for sums of products.
inline constexpr double kFp32Bound = 1e-7, kTf32Bound = 1e-5, kBf16Bound = 2e-4;

inline void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, double bound,
                         const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  EXPECT_TRUE(all_finite(gpu)) << what << ": the CUDA output has NaN or Inf";
  EXPECT_TRUE(all_finite(cpu)) << what << ": the CPU output has NaN or Inf";
  EXPECT_LE(normalized_error(gpu, cpu), bound) << what;
}

}  // namespace gpulab::test
