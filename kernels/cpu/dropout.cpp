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

// Writes blocks [first_block, first_block + blocks) of stream (seed, counter) into out (blocks, 4).
GPULAB_X86_CLONES void fill_mask_blocks(float* out, uint64_t first_block, size_t blocks, float p,
                                        float scale, uint64_t seed, uint64_t counter) {
  constexpr int kLanes = 16;
  const uint32_t key0 = uint32_t(seed), key1 = uint32_t(seed >> 32);
  size_t b = 0;
  for (; b + kLanes <= blocks; b += kLanes) {
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const uint64_t block = first_block + b + l;
      c0[l] = uint32_t(block);
      c1[l] = uint32_t(block >> 32);
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
    float* block_out = out + b * 4;  // (kLanes, 4)
    for (int l = 0; l < kLanes; ++l) {
      const uint32_t words[4] = {c0[l], c1[l], c2[l], c3[l]};
      for (int j = 0; j < 4; ++j)
        block_out[l * 4 + j] = rng::uniform_from_bits(words[j]) >= p ? scale : 0.0f;
    }
  }
  for (; b < blocks; ++b) {
    float u[4];
    rng::uniform4(u, seed, counter, first_block + b);
    for (int j = 0; j < 4; ++j) out[b * 4 + j] = u[j] >= p ? scale : 0.0f;
  }
}

}  // namespace

void dropout_mask(float* mask, size_t n, float p, uint64_t seed, uint64_t counter, uint64_t first) {
  // mask (n): 0 or 1/(1-p), element i from the stream's element first + i
  if (!(p >= 0.0f && p < 1.0f))
    throw std::invalid_argument("dropout_mask: p = " + std::to_string(p) + " is outside [0, 1)");
  // Computed in float so that the CUDA kernel, which does the same, writes the same value.
  const float scale = 1.0f / (1.0f - p);
  // Elements before the first whole block of four (a shard that starts inside a block), then
  // whole blocks, then the tail.
  size_t head = std::min<size_t>(n, (4 - first % 4) % 4);
  for (size_t i = 0; i < head; ++i)
    mask[i] = rng::uniform_at(seed, counter, first + i) >= p ? scale : 0.0f;
  const uint64_t first_block = (first + head) / 4;
  const size_t full_blocks = (n - head) / 4;
  float* blocks_out = mask + head;
  constexpr size_t kChunk = 1024;  // blocks per task: 4096 floats
  const size_t chunks = (full_blocks + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(cpu::detail::threads()) if (chunks > 4) schedule(static)
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    const size_t begin = chunk * kChunk, end = std::min(full_blocks, (chunk + 1) * kChunk);
    fill_mask_blocks(blocks_out + begin * 4, first_block + begin, end - begin, p, scale, seed,
                     counter);
  }
  for (size_t i = head + full_blocks * 4; i < n; ++i)
    mask[i] = rng::uniform_at(seed, counter, first + i) >= p ? scale : 0.0f;
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
