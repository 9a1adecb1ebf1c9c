// The tile one block of an implicit GEMM computes (kernels/cuda/implicit_gemm.cuh), for the host
// code that sizes its grids and splits its depth.
#pragma once

namespace gpulab::kernels::cuda::detail {

// A block computes a kTileM x kTileN tile of C with kTileThreads threads, stepping kTileK along
// the depth.
constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kTileThreads = 256;

}  // namespace gpulab::kernels::cuda::detail
