// Building a batch on the GPU from a data set kept there as bytes: the twin of
// data::gather_batch (datasets/batching.hpp), with the same normalization bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpulab::kernels::cuda {

// images_out (n, image_size) = (pixel / 255 - mean) / std in float, labels_out (n), for the
// images `indices` (n) of pixels (count, image_size) and labels (count). Indices must be valid:
// the caller checks them on the host before copying them over.
void gather_batch(float* images_out, uint8_t* labels_out, const uint8_t* pixels,
                  const uint8_t* labels, const int32_t* indices, int n, int image_size, float mean,
                  float std, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
