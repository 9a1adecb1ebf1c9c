// Fully connected layer on the GPU through cuBLAS, W stored (out, in) as PyTorch's Linear. Same
// names, arguments and accumulate rules as kernels/cpu (linear_forward, linear_backward).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/gemm.cuh"

namespace gpulab::kernels::cuda {

// Elements of Gemm::bf16_operands that linear_* need in bf16 for batches up to `batch`.
size_t linear_bf16_elements(int batch, int in_features, int out_features);

// out (N,OC), inp (N,IC), weight (OC,IC), bias (OC) or nullptr
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int batch,
                    int in_features, int out_features, const Gemm& gemm, cudaStream_t stream);
// dinp (N,IC), dweight (OC,IC), dbias (OC), each accumulated (+=) or nullptr;
// dout (N,OC), inp (N,IC), weight (OC,IC)
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int batch, int in_features, int out_features,
                     const Gemm& gemm, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
