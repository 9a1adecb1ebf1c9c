// Max pooling on the GPU, same tie and NaN rule as the CPU reference (the first maximum in
// row-major window order; NaN wins), so that argmax agrees between backends.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::cuda {

// out (N,C,Ho,Wo), argmax (N,C,Ho,Wo): flat index into the (H,W) plane of the max
void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s,
                       cudaStream_t stream);
// dinp (N,C,H,W) += dout (N,C,Ho,Wo) routed to each window's argmax
void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax, const Pool2dShape& s,
                        cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
