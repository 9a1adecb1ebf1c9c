// Fast dropout (multiply by the mask) and dropout_mask, which draws the mask from the Philox
// counter-based generator shared with the CUDA kernels.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/counter_rng.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

namespace gpulab::kernels {
namespace {

// Fills blocks [begin, end) of four elements each (one Philox call yields four uniforms). The
// rounds run on kLanes counters side by side so that they vectorize; baseline SSE2 has too
// narrow a 32x32->64 multiply for that to pay, so AVX2 and AVX-512 clones are picked at load
// time where the CPU has them (GCC's target_clones: an ifunc resolver, safe on any x86-64).
#if defined(__x86_64__) && defined(__GNUC__)
#define GPULAB_X86_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPULAB_X86_CLONES
#endif

GPULAB_X86_CLONES void fill_mask_blocks(float* mask, size_t begin, size_t end, float p, float scale,
                                        uint64_t seed, uint64_t counter) {
  constexpr int kLanes = 16;
  const uint32_t key0 = uint32_t(seed), key1 = uint32_t(seed >> 32);
  size_t first = begin;
  for (; first + kLanes <= end; first += kLanes) {
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      c0[l] = uint32_t(first + l);
      c1[l] = uint32_t((first + l) >> 32);
      c2[l] = uint32_t(counter);
      c3[l] = uint32_t(counter >> 32);
    }
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) rng::philox_round(c0[l], c1[l], c2[l], c3[l], k0, k1);
      k0 += rng::kPhiloxW0;
      k1 += rng::kPhiloxW1;
    }
    float* out = mask + first * 4;  // (kLanes, 4)
    for (int l = 0; l < kLanes; ++l) {
      const uint32_t words[4] = {c0[l], c1[l], c2[l], c3[l]};
      for (int j = 0; j < 4; ++j)
        out[l * 4 + j] = rng::uniform_from_bits(words[j]) >= p ? scale : 0.0f;
    }
  }
  for (; first < end; ++first) {
    float u[4];
    rng::uniform4(u, seed, counter, first);
    for (int j = 0; j < 4; ++j) mask[first * 4 + j] = u[j] >= p ? scale : 0.0f;
  }
}

}  // namespace

void dropout_mask(float* mask, size_t n, float p, uint64_t seed, uint64_t counter) {
  // mask (n): 0 or 1/(1-p)
  if (!(p >= 0.0f && p < 1.0f))
    throw std::invalid_argument("dropout_mask: p = " + std::to_string(p) + " is outside [0, 1)");
  // Computed in float so that the CUDA kernel, which does the same, writes the same value.
  const float scale = 1.0f / (1.0f - p);
  const size_t full_blocks = n / 4;
  constexpr size_t kChunk = 1024;  // blocks per task: 4096 floats
  const size_t chunks = (full_blocks + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(cpu::detail::threads()) if (chunks > 4) schedule(static)
  for (size_t chunk = 0; chunk < chunks; ++chunk)
    fill_mask_blocks(mask, chunk * kChunk, std::min(full_blocks, (chunk + 1) * kChunk), p, scale,
                     seed, counter);
  for (size_t i = full_blocks * 4; i < n; ++i)
    mask[i] = rng::uniform_at(seed, counter, i) >= p ? scale : 0.0f;
}

namespace cpu {

void dropout_forward(float* out, const float* inp, const float* mask, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] * mask[i];
}

void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n) {
#pragma omp parallel for simd num_threads(detail::threads()) if (n >= detail::kMinParallelElements)
  for (size_t i = 0; i < n; ++i) dinp[i] += dout[i] * mask[i];
}

}  // namespace cpu
}  // namespace gpulab::kernels
