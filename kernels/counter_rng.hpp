// Counter-based random numbers (Philox-4x32-10, as cuRAND and PyTorch use) shared by the CPU
// and CUDA kernels, so that the same (seed, counter, index) gives the same value everywhere.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPULAB_HD __host__ __device__ __forceinline__
#else
#define GPULAB_HD inline
#endif

namespace gpulab::kernels::rng {

struct Philox4x32 {
  uint32_t v[4];
};

GPULAB_HD uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  return static_cast<uint32_t>(product);
}

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;  // key schedule

// One Philox-4x32 round on the counter words, in place. Separate from the loop over rounds so
// that the CPU can run it on many counters side by side (SIMD lanes).
GPULAB_HD void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                            uint32_t k1) {
  uint32_t hi0, hi1;
  const uint32_t lo0 = mulhilo(kPhiloxM0, c0, &hi0);
  const uint32_t lo1 = mulhilo(kPhiloxM1, c2, &hi1);
  const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
  c0 = n0;
  c1 = lo1;
  c2 = n2;
  c3 = lo0;
}

// Ten rounds of Philox-4x32 (Salmon et al., SC'11) on a 128-bit counter with a 64-bit key.
GPULAB_HD Philox4x32 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                   uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return Philox4x32{{c0, c1, c2, c3}};
}

// Uniform floats in [0, 1) with 24 random bits: every value is exactly representable, so
// comparisons against p agree bit for bit between host and device.
GPULAB_HD float uniform_from_bits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// The four uniforms of block `block` (elements 4*block .. 4*block+3) of stream (seed, counter).
GPULAB_HD void uniform4(float out[4], uint64_t seed, uint64_t counter, uint64_t block) {
  const Philox4x32 r =
      philox4x32_10(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                    static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32),
                    static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  for (int j = 0; j < 4; ++j) out[j] = uniform_from_bits(r.v[j]);
}

// The counter of dropout layer `layer` at optimizer step `step`: each (step, layer) pair draws
// its own mask (models have fewer than 64 layers). Shared so that every backend draws the same.
GPULAB_HD uint64_t dropout_counter(uint64_t step, uint64_t layer) { return step * 64 + layer; }

// Element i of stream (seed, counter): the (i % 4)-th word of block i / 4.
GPULAB_HD float uniform_at(uint64_t seed, uint64_t counter, uint64_t i) {
  float u[4];
  uniform4(u, seed, counter, i / 4);
  return u[i % 4];
}

}  // namespace gpulab::kernels::rng
