// The operands of a bf16 GEMM: fp32 matrices rounded to bfloat16 (to nearest, ties to even) into
// packed copies that cuBLAS then multiplies with fp32 accumulation.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace gpulab::kernels::cuda {

// out (count, rows, cols) packed = in (count, rows, cols) rounded to bfloat16, where in's rows
// are `ld` floats apart and its matrices `stride` floats apart.
void round_to_bf16(__nv_bfloat16* out, const float* in, int rows, int cols, int ld,
                   long long stride, int count, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
