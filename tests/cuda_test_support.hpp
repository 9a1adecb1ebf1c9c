// Shared by the CUDA test suites: whether a GPU is there (and why not), moving vectors to and
// from the device, outputs filled with NaN before a kernel writes them, and the comparisons of a
// CUDA op with its CPU oracle: ggml's normalized error, of an update as well as its result.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

// A device buffer of n values, every byte 0xFF (NaN for float and double, -1 for int, 255 for
// uint8_t): an output that a kernel under test should write in full, so that one it leaves
// unwritten shows as NaN or as a value no kernel writes, not as a zero that may be right.
template <class T>
kernels::cuda::DeviceBuffer<T> nan_filled(size_t n, const char* what) {
  kernels::cuda::DeviceBuffer<T> device(n, what);
  if (n) GPULAB_CUDA_CHECK(cudaMemset(device.data(), 0xFF, n * sizeof(T)));
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  return device;
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

// What a step (or steps) changed, after - before: an optimizer's update, held to the CPU twin's
// on its own. Compared as parameters, an update wrong by a small part of itself passes: weight
// decay's lr * wd * p is ~1e-4 of a parameter, 1e-8 in normalized error, under kFp32Bound.
inline std::vector<float> update_of(const std::vector<float>& after,
                                    const std::vector<float>& before) {
  std::vector<float> update(after.size());
  for (size_t i = 0; i < after.size() && i < before.size(); ++i) update[i] = after[i] - before[i];
  return update;
}
inline double update_error(const std::vector<float>& gpu_after, const std::vector<float>& cpu_after,
                           const std::vector<float>& before) {
  return normalized_error(update_of(gpu_after, before), update_of(cpu_after, before));
}

// x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero as the tensor cores'
// cvt.rna does): the CPU's picture of an fp32 GEMM silently run as TF32.
inline float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

// x rounded to bfloat16 (7 mantissa bits, to nearest, ties to even, as __float2bfloat16_rn),
// back as a float: the CPU's picture of a bf16 GEMM operand.
inline float round_to_bf16(float x) {
  if (!std::isfinite(x)) return x;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
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
// fp32 GEMMs (linear, conv2d) against the CPU's double sums: fp32 sums in another order differ
// by ~K * 2^-48 at most (OpenBLAS: 1e-13 at K = 9216), while TF32's rounded inputs give 5e-8 to
// 1.2e-7 at any K, under kFp32Bound; this bound, 47x under TF32 on every shape of the suite, fails
// fp32 run as TF32 (CudaTestChecks.AnFp32GemmRunAsTf32FailsTheFp32GemmBound).
inline constexpr double kFp32GemmBound = 1e-9;
// A bf16 GEMM against the CPU's double sums of the same operands rounded to bf16 (round_to_bf16):
// a product of two bf16 values is exact in fp32, so only the fp32 sums differ, ~1e-9 at the
// suite's longest inner dimension (tensor cores truncating each of the K/16 accumulations
// coherently: (576 * 2^-24)^2 ~ 1e-9). Operands rounded to TF32 or truncated to bf16 instead are
// 4.6e-6 and 4e-5 from it on fc1's shape, fp32 sums of the right operands 3e-14 (CudaTestChecks.
// ABf16GemmRunAsTf32OrTruncatedFailsTheBf16Checks computes them).
inline constexpr double kBf16SumBound = 1e-7;
// Between TF32 and bf16 against the exact product. Rounding an operand uniform in [-1, 1] to p
// mantissa bits has a relative error uniform in +-2^-(p+1)/m for its significand m in [1, 2):
// E[delta^2] = 2^-2(p+1) / 3 * E[1/m^2] = 2^-2p / 24. Two rounded operands per product, products
// of random sign: the normalized error is twice that, 2^-2p / 12: 8e-8 for TF32 (p = 10),
// 5.1e-6 for bf16 (p = 7); on fc1's shape 7.1e-8 and 4.5e-6, 14x under this bound and 4.5x over.
inline constexpr double kTf32RoundingBound = 1e-6;

// The error bound of one bf16 GEMM output against the exact sum of products a_i b_i (plus an
// fp32 term such as a bias, among `terms`): rounding each operand to bf16 moves it by at most
// u = 2^-8 of itself, so each product by at most (2u + u^2) |a_i b_i|, and the products of bf16
// values are exact in fp32; adding `terms` values in fp32 in any order (and truncating, as tensor
// cores may) errs by at most terms * 2^-23 of the sum of their magnitudes, which are at most
// (1 + u)^2 |a_i b_i|. magnitude: sum |a_i b_i| (+ |bias|).
inline double bf16_output_bound(double magnitude, int terms) {
  const double u = std::ldexp(1.0, -8), fp32_sums = terms * std::ldexp(1.0, -23);
  return (2 * u + u * u + fp32_sums * (1 + u) * (1 + u)) * magnitude;
}

inline void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, double bound,
                         const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  EXPECT_TRUE(all_finite(gpu)) << what << ": the CUDA output has NaN or Inf";
  EXPECT_TRUE(all_finite(cpu)) << what << ": the CPU output has NaN or Inf";
  EXPECT_LE(normalized_error(gpu, cpu), bound) << what;
}

}  // namespace gpulab::test
