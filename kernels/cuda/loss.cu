// Softmax cross-entropy in one block: each warp takes rows in turn (one row per warp at a time,
// the classes spread over its lanes) and keeps its running loss and hit count; the warps' totals
// are then added in warp order. One block keeps the sum order fixed without atomics or scratch;
// it is ample for MNIST's ten classes, the batches here are at most 65536 rows.
#include <cmath>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/loss.cuh"

namespace gpulab::kernels::cuda {
namespace {

constexpr int kWarps = 32;

// Larger value wins; on a tie, the smaller index (the first maximum, as std::max_element).
__device__ void take_best(float& value, int& index, float other_value, int other_index) {
  if (other_value > value || (other_value == value && other_index < index)) {
    value = other_value;
    index = other_index;
  }
}

__global__ void softmax_cross_entropy_kernel(float* dlogits, double* loss_sum, int* correct,
                                             const float* logits, const uint8_t* labels, int batch,
                                             int classes, int normalizer) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float inv_batch = 1.0f / float(normalizer > 0 ? normalizer : batch);
  double warp_loss = 0;
  int warp_hits = 0;
  for (int n = warp; n < batch; n += kWarps) {
    const float* row = logits + size_t(n) * classes;
    const int label = labels[n];
    float best_value = -INFINITY;
    int best = classes;
    for (int c = lane; c < classes; c += 32) take_best(best_value, best, row[c], c);
    for (int offset = 16; offset > 0; offset /= 2)
      take_best(best_value, best, __shfl_xor_sync(0xffffffffu, best_value, offset),
                __shfl_xor_sync(0xffffffffu, best, offset));
    if (best >= classes) best = 0;  // every logit NaN: the loss is NaN anyway
    const float shift = row[best];
    // The label's term is kept out of the sum, as on the CPU: its gradient is then
    // -(others / sum), free of the cancellation in p - 1 when p is close to 1.
    float others = 0.0f;
    for (int c = lane; c < classes; c += 32)
      if (c != label) others += expf(row[c] - shift);
    for (int offset = 16; offset > 0; offset /= 2)
      others += __shfl_xor_sync(0xffffffffu, others, offset);
    if (label >= classes) {
      if (lane == 0) warp_loss = NAN;
      continue;
    }
    const float label_exp = expf(row[label] - shift);
    const float sum_exp = others + label_exp;
    if (lane == 0) {
      warp_loss += double(logf(sum_exp)) - (row[label] - shift);
      warp_hits += best == label;
    }
    if (dlogits != nullptr) {
      float* drow = dlogits + size_t(n) * classes;
      const float scale = inv_batch / sum_exp;
      for (int c = lane; c < classes; c += 32)
        drow[c] = c == label ? -others * scale : expf(row[c] - shift) * scale;
    }
  }
  __shared__ double losses[kWarps];
  __shared__ int hits[kWarps];
  if (lane == 0) {
    losses[warp] = warp_loss;
    hits[warp] = warp_hits;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    int total_hits = 0;
    for (int w = 0; w < kWarps; ++w) {
      total += losses[w];
      total_hits += hits[w];
    }
    *loss_sum = total;
    *correct = total_hits;
  }
}

}  // namespace

void softmax_cross_entropy(float* dlogits, double* loss_sum, int* correct, const float* logits,
                           const uint8_t* labels, int batch, int classes, int normalizer,
                           cudaStream_t stream) {
  // dlogits (N,C) or nullptr, loss_sum (1), correct (1), logits (N,C), labels (N)
  softmax_cross_entropy_kernel<<<1, kWarps * 32, 0, stream>>>(dlogits, loss_sum, correct, logits,
                                                              labels, batch, classes, normalizer);
  GPULAB_CUDA_CHECK_LAUNCH("softmax_cross_entropy_kernel");
}

}  // namespace gpulab::kernels::cuda
