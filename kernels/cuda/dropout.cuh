// Dropout on the GPU: the mask drawn from the same counter-based Philox stream as the CPU's
// kernels::dropout_mask (the same bits for the same seed, step and layer), then multiplied in.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpulab::kernels::cuda {

// mask (n): 0 or 1/(1-p), element i kept when
// uniform_at(seed, dropout_counter(*step, layer), first + i) >= p: a replica holding a shard of a
// batch passes its first element's position in the whole batch and draws the very bits the whole
// batch draws there. The step is read from device memory when the kernel runs, so a captured CUDA
// graph draws a new mask on every replay. Throws std::invalid_argument unless 0 <= p < 1.
void dropout_mask(float* mask, size_t n, float p, uint64_t seed, const uint64_t* step,
                  uint64_t layer, uint64_t first, cudaStream_t stream);
// out = inp * mask; dinp += dout * mask
void dropout_forward(float* out, const float* inp, const float* mask, size_t n,
                     cudaStream_t stream);
void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n,
                      cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
