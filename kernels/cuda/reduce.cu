// Row and column sums: one block per output element, each thread a strided partial sum, then a
// fixed tree over the block.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"

namespace gpulab::kernels::cuda {
namespace {

using detail::kBlock;

__global__ void row_sums_add_kernel(float* out, const float* in, size_t cols) {
  const float* row = in + size_t(blockIdx.x) * cols;
  float sum = 0.0f;
  for (size_t c = threadIdx.x; c < cols; c += kBlock) sum += row[c];
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) out[blockIdx.x] += sum;
}

__global__ void column_sums_add_kernel(float* out, const float* in, int rows, int cols) {
  float sum = 0.0f;
  for (int r = threadIdx.x; r < rows; r += kBlock) sum += in[size_t(r) * cols + blockIdx.x];
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) out[blockIdx.x] += sum;
}

}  // namespace

void row_sums_add(float* out, const float* in, int rows, size_t cols, cudaStream_t stream) {
  // out (rows), in (rows, cols)
  if (rows == 0) return;
  row_sums_add_kernel<<<rows, kBlock, 0, stream>>>(out, in, cols);
  GPULAB_CUDA_CHECK_LAUNCH("row_sums_add_kernel");
}

void column_sums_add(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  // out (cols), in (rows, cols)
  if (cols == 0) return;
  column_sums_add_kernel<<<cols, kBlock, 0, stream>>>(out, in, rows, cols);
  GPULAB_CUDA_CHECK_LAUNCH("column_sums_add_kernel");
}

}  // namespace gpulab::kernels::cuda
