// Sums along the rows or the columns of a row-major matrix, added into a vector: the bias
// gradients of conv2d and linear. Fixed summation order, no atomics: repeatable bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels::cuda {

// out (rows) += the sum of each row of in (rows, cols)
void row_sums_add(float* out, const float* in, int rows, size_t cols, cudaStream_t stream);
// out (cols) += the sum of each column of in (rows, cols)
void column_sums_add(float* out, const float* in, int rows, int cols, cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
