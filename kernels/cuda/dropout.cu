// Dropout: one thread per Philox block of four mask elements, and the elementwise products.
#include <stdexcept>
#include <string>

#include "kernels/counter_rng.hpp"
#include "kernels/cuda/dropout.cuh"
#include "kernels/cuda/launch.cuh"

namespace gpulab::kernels::cuda {
namespace {

// One thread per Philox block of the stream that [first, first + n) touches; a shard that starts
// or ends inside a block writes only its own elements of it.
__global__ void dropout_mask_kernel(float* mask, size_t n, float p, float scale, uint64_t seed,
                                    const uint64_t* step, uint64_t layer, uint64_t first) {
  const uint64_t counter = rng::dropout_counter(*step, layer);
  const uint64_t first_block = first / 4, blocks = (first + n + 3) / 4 - first_block;
  GPULAB_GRID_STRIDE_LOOP(b, blocks) {
    const uint64_t block = first_block + b;
    float u[4];
    rng::uniform4(u, seed, counter, block);
    for (int j = 0; j < 4; ++j) {
      const uint64_t element = block * 4 + j;  // in the whole batch's stream
      if (element >= first && element < first + n) mask[element - first] = u[j] >= p ? scale : 0.0f;
    }
  }
}

__global__ void dropout_forward_kernel(float* out, const float* inp, const float* mask, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) out[i] = inp[i] * mask[i];
}

__global__ void dropout_backward_kernel(float* dinp, const float* dout, const float* mask,
                                        size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) dinp[i] += dout[i] * mask[i];
}

}  // namespace

void dropout_mask(float* mask, size_t n, float p, uint64_t seed, const uint64_t* step,
                  uint64_t layer, uint64_t first, cudaStream_t stream) {
  // mask (n)
  if (!(p >= 0.0f && p < 1.0f))
    throw std::invalid_argument("dropout_mask: p = " + std::to_string(p) + " is outside [0, 1)");
  if (n == 0) return;
  // Computed on the host in float, as the CPU's dropout_mask does, so the kept value is the same.
  const float scale = 1.0f / (1.0f - p);
  const size_t blocks = (first + n + 3) / 4 - first / 4;
  dropout_mask_kernel<<<detail::grid_for(blocks), detail::kBlock, 0, stream>>>(
      mask, n, p, scale, seed, step, layer, first);
  GPULAB_CUDA_CHECK_LAUNCH("dropout_mask_kernel");
}

void dropout_forward(float* out, const float* inp, const float* mask, size_t n,
                     cudaStream_t stream) {
  if (n == 0) return;
  dropout_forward_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(out, inp, mask, n);
  GPULAB_CUDA_CHECK_LAUNCH("dropout_forward_kernel");
}

void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n,
                      cudaStream_t stream) {
  if (n == 0) return;
  dropout_backward_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(dinp, dout, mask, n);
  GPULAB_CUDA_CHECK_LAUNCH("dropout_backward_kernel");
}

}  // namespace gpulab::kernels::cuda
