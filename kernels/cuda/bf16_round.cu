// Rounding fp32 GEMM operands to bfloat16: one pass over the operand, reading 4 bytes and
// writing 2 per element. __float2bfloat16_rn rounds to nearest, ties to even, and keeps NaN and
// Inf, as PyTorch's .to(torch.bfloat16) does.
#include "kernels/cuda/bf16_round.cuh"
#include "kernels/cuda/launch.cuh"

namespace gpulab::kernels::cuda {
namespace {

// A matrix (or matrices) stored without gaps: the copy is one flat pass.
__global__ void round_flat_kernel(__nv_bfloat16* out, const float* in, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) out[i] = __float2bfloat16_rn(in[i]);
}

// Rows `ld` apart or matrices `stride` apart (a slice of a wider matrix, a batch of slices).
__global__ void round_strided_kernel(__nv_bfloat16* out, const float* in, int rows, int cols,
                                     int ld, long long stride, size_t n) {
  const size_t matrix = size_t(rows) * cols;
  GPULAB_GRID_STRIDE_LOOP(i, n) {
    const size_t m = i / matrix, rc = i - m * matrix;
    const size_t r = rc / size_t(cols), c = rc - r * size_t(cols);
    out[i] = __float2bfloat16_rn(in[m * size_t(stride) + r * size_t(ld) + c]);
  }
}

}  // namespace

void round_to_bf16(__nv_bfloat16* out, const float* in, int rows, int cols, int ld,
                   long long stride, int count, cudaStream_t stream) {
  // out (count, rows, cols), in (count, rows, ld) with matrices stride apart
  const size_t n = size_t(rows) * size_t(cols) * size_t(count);
  if (n == 0) return;
  const bool packed = ld == cols && (count == 1 || stride == (long long)rows * cols);
  if (packed) {
    round_flat_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(out, in, n);
    GPULAB_CUDA_CHECK_LAUNCH("round_flat_kernel");
  } else {
    round_strided_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(out, in, rows, cols,
                                                                             ld, stride, n);
    GPULAB_CUDA_CHECK_LAUNCH("round_strided_kernel");
  }
}

}  // namespace gpulab::kernels::cuda
