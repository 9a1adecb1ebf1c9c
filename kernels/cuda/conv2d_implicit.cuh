// 2-D convolution as implicit GEMM: the unfolded input is never written; each product stages
// tiles of the tensors in shared memory, computing the unfolding's indices as it loads them.
// Same layouts and accumulate rules as conv2d_forward and conv2d_backward
// (kernels/cuda/conv2d.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cpu/ops.hpp"
#include "kernels/cuda/gemm.cuh"

namespace gpulab::kernels::cuda {

// Scratch floats the weight gradient's split of the depth (the batch's positions) can use: with
// less, fewer slices; with none, one pass. Gemm::scratch is read for nothing else.
size_t conv2d_implicit_scratch_floats(const Conv2dShape& s);

// out (N,K,Ho,Wo) = conv(inp, weight) + bias, overwritten; with relu set, relu(that) as
// relu_forward gives it (the ReLU after the convolution fused into the store).
// inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr. Reads gemm.precision only.
void conv2d_implicit_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const Conv2dShape& s, bool relu, const Gemm& gemm,
                             cudaStream_t stream);
// dinp (N,C,H,W), dweight (K,C,R,S), dbias (K), each accumulated (+=) or nullptr;
// dout (N,K,Ho,Wo); relu_out (N,K,Ho,Wo) or nullptr: given, dout is the gradient of the ReLU
// after the convolution and relu_out that ReLU's output, and each element of dout counts only
// where relu_out > 0 (relu_backward's rule), so the ReLU's backward needs no pass of its own.
// inp (N,C,H,W), weight (K,C,R,S). gemm.scratch holds the weight gradient's partial sums.
void conv2d_implicit_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* relu_out, const float* inp, const float* weight,
                              const Conv2dShape& s, const Gemm& gemm, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
