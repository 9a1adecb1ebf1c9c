// Elementwise activations on the GPU; same names and arguments as kernels/cpu plus a stream.
// Backward passes take the forward output and accumulate (+=) into dinp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels::cuda {

void relu_forward(float* out, const float* inp, size_t n, cudaStream_t stream);
void relu_backward(float* dinp, const float* dout, const float* out, size_t n, cudaStream_t stream);
void tanh_forward(float* out, const float* inp, size_t n, cudaStream_t stream);
void tanh_backward(float* dinp, const float* dout, const float* out, size_t n, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
