// Batch gathering: one thread per output pixel. The normalization uses the IEEE-rounded
// intrinsics so nvcc cannot fuse or reorder it: the floats equal the CPU's exactly.
#include "kernels/cuda/gather.cuh"
#include "kernels/cuda/launch.cuh"

namespace gpulab::kernels::cuda {
namespace {

__global__ void gather_batch_kernel(float* images_out, uint8_t* labels_out, const uint8_t* pixels,
                                    const uint8_t* labels, const int32_t* indices, int n,
                                    int image_size, float mean, float std) {
  GPULAB_GRID_STRIDE_LOOP(i, size_t(n) * image_size) {
    const size_t k = i / image_size, j = i % image_size;
    const size_t index = size_t(indices[k]);
    const float pixel = static_cast<float>(pixels[index * image_size + j]);
    images_out[i] = __fdiv_rn(__fsub_rn(__fdiv_rn(pixel, 255.0f), mean), std);
    if (j == 0) labels_out[k] = labels[index];
  }
}

}  // namespace

void gather_batch(float* images_out, uint8_t* labels_out, const uint8_t* pixels,
                  const uint8_t* labels, const int32_t* indices, int n, int image_size, float mean,
                  float std, cudaStream_t stream) {
  const size_t total = size_t(n) * image_size;
  if (total == 0) return;
  gather_batch_kernel<<<detail::grid_for(total), detail::kBlock, 0, stream>>>(
      images_out, labels_out, pixels, labels, indices, n, image_size, mean, std);
  GPULAB_CUDA_CHECK_LAUNCH("gather_batch_kernel");
}

}  // namespace gpulab::kernels::cuda
