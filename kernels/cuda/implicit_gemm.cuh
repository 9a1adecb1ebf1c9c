// The tile loop of an implicit GEMM (device code: included by .cu files only). C (M, N) =
// A (M, depth) x B (depth, N) where neither A nor B is ever stored: a Product computes each
// element from the tensors as it is staged (a(m, d), b(d, n), zero wherever the tensor has none)
// and stores each result where it belongs (store(m, n, value, slice)).
#pragma once

#include <cuda_bf16.h>
#include <mma.h>

#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/implicit_gemm_tile.hpp"

namespace gpulab::kernels::cuda::detail {

// To TF32: 10 of fp32's 23 mantissa bits kept, to nearest with ties away from zero (PTX
// cvt.rna.tf32.f32, which wmma::__float_to_tf32 is); infinities and NaNs pass unchanged.
__device__ inline float round_to_tf32(float x) {
  unsigned bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
  return __uint_as_float(bits);
}

// How a precision stages its operands: fp32 as they are; tf32 rounded to TF32 and kept as
// floats; bf16 rounded to bfloat16 (to nearest even, as the im2col path's round_to_bf16). The
// precision is this rounding: the product of two staged values is exact in fp32, so the tensor
// cores and the FMA loop below multiply alike and differ only in the order of the sums.
template <Precision P>
struct Staged {
  using type = float;
  __device__ static float from(float x) { return x; }
};
template <>
struct Staged<Precision::Tf32> {
  using type = float;
  __device__ static float from(float x) { return round_to_tf32(x); }
};
template <>
struct Staged<Precision::Bf16> {
  using type = __nv_bfloat16;
  __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
};
__device__ inline float as_float(float x) { return x; }
__device__ inline float as_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Rows padded by 16 bytes against bank conflicts; the pads keep every row a multiple of 16 bytes
// and every fragment WMMA loads 32-byte aligned (ldm a multiple of 4 floats or 8 bf16).
template <class T>
struct __align__(128) Tiles {
  static constexpr int kPad = 16 / int(sizeof(T));
  static constexpr int kLdA = kTileK + kPad, kLdB = kTileN + kPad, kLdC = kTileN + 4;
  T a[kTileM][kLdA];  // A (kTileM, kTileK) at (m0, k0)
  T b[kTileK][kLdB];  // B (kTileK, kTileN) at (k0, n0)
  float c[kTileM][kLdC];
};

// The CUDA-core product of the staged tiles: thread (ty, tx) holds C's rows ty + 16 i and
// columns tx + 16 j, summed with fmaf in depth order.
template <class T>
struct FmaMath {
  float acc[4][4] = {};
  __device__ void multiply(const Tiles<T>& tiles) {
    const int ty = int(threadIdx.x) / 16, tx = int(threadIdx.x) % 16;
#pragma unroll
    for (int d = 0; d < kTileK; ++d) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = as_float(tiles.a[ty + 16 * i][d]);
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = as_float(tiles.b[d][tx + 16 * j]);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  __device__ void store(Tiles<T>& tiles) const {
    const int ty = int(threadIdx.x) / 16, tx = int(threadIdx.x) % 16;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) tiles.c[ty + 16 * i][tx + 16 * j] = acc[i][j];
  }
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// The WMMA shape of a tensor-core precision: tf32 m16n16k8, bf16 m16n16k16, fp32 accumulators.
template <Precision P>
struct Wmma;
template <>
struct Wmma<Precision::Tf32> {
  static constexpr int kDepth = 8;
  using element = nvcuda::wmma::precision::tf32;
};
template <>
struct Wmma<Precision::Bf16> {
  static constexpr int kDepth = 16;
  using element = __nv_bfloat16;
};

// The tensor-core product of the staged tiles: warp w holds C's 16x16 fragments at fragment row
// w / 2 and fragment columns 2 (w % 2) and 2 (w % 2) + 1, the eight warps covering the 64x64 tile.
template <Precision P>
struct WmmaMath {
  using T = typename Staged<P>::type;
  static constexpr int kDepth = Wmma<P>::kDepth;
  using element = typename Wmma<P>::element;
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, kDepth, float> c[2];
  __device__ WmmaMath() {
    nvcuda::wmma::fill_fragment(c[0], 0.0f);
    nvcuda::wmma::fill_fragment(c[1], 0.0f);
  }
  __device__ static int row() { return int(threadIdx.x) / 32 / 2; }
  __device__ static int col() { return 2 * (int(threadIdx.x) / 32 % 2); }
  // TF32 fragments are loaded as floats and must be converted (already TF32 values when
  // staged: the conversion changes nothing, it is what the API asks for).
  template <class Fragment>
  __device__ static void to_tf32(Fragment& f) {
    if constexpr (P == Precision::Tf32)
      for (int i = 0; i < f.num_elements; ++i) f.x[i] = nvcuda::wmma::__float_to_tf32(f.x[i]);
  }
  __device__ void multiply(const Tiles<T>& tiles) {
    namespace wmma = nvcuda::wmma;
    for (int d = 0; d < kTileK; d += kDepth) {
      wmma::fragment<wmma::matrix_a, 16, 16, kDepth, element, wmma::row_major> a;
      wmma::load_matrix_sync(a, &tiles.a[16 * row()][d], Tiles<T>::kLdA);
      to_tf32(a);
      for (int j = 0; j < 2; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, kDepth, element, wmma::row_major> b;
        wmma::load_matrix_sync(b, &tiles.b[d][16 * (col() + j)], Tiles<T>::kLdB);
        to_tf32(b);
        wmma::mma_sync(c[j], a, b, c[j]);
      }
    }
  }
  __device__ void store(Tiles<T>& tiles) const {
    for (int j = 0; j < 2; ++j)
      nvcuda::wmma::store_matrix_sync(&tiles.c[16 * row()][16 * (col() + j)], c[j], Tiles<T>::kLdC,
                                      nvcuda::wmma::mem_row_major);
  }
};
template <Precision P>
struct MathOf {
  using type = WmmaMath<P>;
};
template <>
struct MathOf<Precision::Fp32> {
  using type = FmaMath<float>;
};
#else
// Built for an architecture without TF32/bf16 WMMA (below sm_80, or the host pass): the CUDA
// cores multiply the same staged values, each product exact in fp32.
template <Precision P>
struct MathOf {
  using type = FmaMath<typename Staged<P>::type>;
};
#endif

// One block per tile of C (implicit_gemm_tile.hpp) and slice of the depth (split-K: each slice's
// partial tile is stored as its own): slice z covers depth [z * slice_depth,
// min(depth, (z + 1) * slice_depth)). Products outside C or the slice are staged as zeros, so
// they add exact zeros. Every element of C inside (M, N) is stored once per slice, whatever the
// slice's length (an empty one stores zeros).
template <Precision P, class Product>
__global__ void __launch_bounds__(kTileThreads)
    implicit_gemm_kernel(Product product, int M, int N, int depth, int slice_depth) {
  using T = typename Staged<P>::type;
  __shared__ Tiles<T> tiles;
  const int m0 = int(blockIdx.y) * kTileM, n0 = int(blockIdx.x) * kTileN, slice = int(blockIdx.z);
  const int begin = slice * slice_depth;
  const int end = depth - begin < slice_depth ? depth : begin + slice_depth;
  const int tid = int(threadIdx.x);
  typename MathOf<P>::type math;
  for (int k0 = begin; k0 < end; k0 += kTileK) {
    for (int e = tid; e < kTileM * kTileK; e += kTileThreads) {
      const int m = e / kTileK, d = e % kTileK;
      const bool inside = m0 + m < M && k0 + d < end;
      tiles.a[m][d] = Staged<P>::from(inside ? product.a(m0 + m, k0 + d) : 0.0f);
    }
    for (int e = tid; e < kTileK * kTileN; e += kTileThreads) {
      const int d = e / kTileN, n = e % kTileN;
      const bool inside = n0 + n < N && k0 + d < end;
      tiles.b[d][n] = Staged<P>::from(inside ? product.b(k0 + d, n0 + n) : 0.0f);
    }
    __syncthreads();
    math.multiply(tiles);
    __syncthreads();  // before the next step overwrites the tiles
  }
  math.store(tiles);
  __syncthreads();
  // The epilogue: consecutive threads store consecutive columns of C.
  for (int e = tid; e < kTileM * kTileN; e += kTileThreads) {
    const int m = e / kTileN, n = e % kTileN;
    if (m0 + m < M && n0 + n < N) product.store(m0 + m, n0 + n, tiles.c[m][n], slice);
  }
}

}  // namespace gpulab::kernels::cuda::detail
