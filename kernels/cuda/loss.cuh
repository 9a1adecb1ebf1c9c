// Fused softmax cross-entropy with accuracy on the GPU (mean over the batch, as PyTorch's
// CrossEntropyLoss); same name and arguments as kernels/cpu plus a stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpulab::kernels::cuda {

// logits (N,C), labels (N). Writes dlogits (N,C) = (softmax - onehot) / normalizer when not
// nullptr (normalizer 0 means N; a replica holding a shard passes the whole batch's size, so the
// shards' gradients sum to the batch's), and into DEVICE memory the summed loss *loss_sum and the
// count of correct argmax predictions *correct. A label >= classes gives a NaN loss (the backends
// check labels when they load data).
void softmax_cross_entropy(float* dlogits, double* loss_sum, int* correct, const float* logits,
                           const uint8_t* labels, int batch, int classes, int normalizer,
                           cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
