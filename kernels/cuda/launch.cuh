// Launch helpers shared by the kernel files (device code: included by .cu files only): the
// block size, grids for grid-stride loops, and a deterministic block-wide sum.
#pragma once

#include <cstddef>

#include "kernels/cuda/check.hpp"

namespace gpulab::kernels::cuda::detail {

constexpr int kBlock = 256;

// Blocks for a grid-stride loop over n elements: one per kBlock elements, capped so that a huge
// tensor reuses threads instead of asking for more blocks than a launch may have.
inline unsigned grid_for(size_t n, int block = kBlock) {
  const size_t blocks = (n + block - 1) / block;
  constexpr size_t kMaxBlocks = size_t(1) << 20;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks < kMaxBlocks ? blocks : kMaxBlocks));
}

// The sum of v over the block, in the same order on every run (a fixed tree in shared memory,
// no atomics), returned to thread 0. blockDim.x must be kBlock.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T partial[kBlock];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int width = kBlock / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  return partial[0];
}

}  // namespace gpulab::kernels::cuda::detail

// i runs over [0, n) across the whole grid.
#define GPULAB_GRID_STRIDE_LOOP(i, n)                                     \
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += size_t(gridDim.x) * blockDim.x)
