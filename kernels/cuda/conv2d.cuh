// 2-D convolution on the GPU: im2col over a chunk of the batch and one cuBLAS GEMM per product.
// Same names, arguments and accumulate rules as kernels/cpu (conv2d_forward, conv2d_backward).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cpu/ops.hpp"
#include "kernels/cuda/gemm.cuh"

namespace gpulab::kernels::cuda {

// Scratch floats that let conv2d_* process `images` images per GEMM. Any scratch of at least
// conv2d_scratch_floats(s, 1) works; more means fewer, larger GEMMs.
size_t conv2d_scratch_floats(const Conv2dShape& s, int images);
// Elements of Gemm::bf16_operands that conv2d_* need in bf16 with a scratch of scratch_floats
// (the chunk of images it holds sets the products' sizes).
size_t conv2d_bf16_elements(const Conv2dShape& s, size_t scratch_floats);

// out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const Conv2dShape& s, const Gemm& gemm, cudaStream_t stream);
// dinp (N,C,H,W), dweight (K,C,R,S), dbias (K), each accumulated (+=) or nullptr;
// dout (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S)
void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s, const Gemm& gemm,
                     cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
