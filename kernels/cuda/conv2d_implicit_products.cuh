// The three products of the implicit-GEMM convolution (kernels/cuda/conv2d_implicit.cu): how
// each reads its operands from the NCHW tensors and where it stores each result, and how the
// weight gradient's depth is split. Host code too, so that the suites can check the index
// arithmetic against the CPU reference where there is no GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>

#include "kernels/cpu/ops.hpp"
#include "kernels/cuda/implicit_gemm_tile.hpp"

namespace gpulab::kernels::cuda::detail {

// The sizes the products index with, and the two reads they share.
struct Geometry {
  int C, H, W, K, R, S, stride, padding, Ho, Wo;
  int P, HW, RS, CRS;  // Ho*Wo, H*W, R*S, C*R*S

  // The unfolded input's element (crs, p) of image n: inp (N,C,H,W) at channel c, row
  // ho*stride - padding + r, column wo*stride - padding + q; 0 on the padding.
  __host__ __device__ float input_at(const float* inp, int n, int crs, int p) const {
    const int c = crs / RS, rs = crs - c * RS, r = rs / S, q = rs - r * S;
    const int ho = p / Wo, wo = p - ho * Wo;
    const int hi = ho * stride - padding + r, wi = wo * stride - padding + q;
    if (hi < 0 || hi >= H || wi < 0 || wi >= W) return 0.0f;
    return inp[(size_t(n) * C + c) * HW + size_t(hi) * W + wi];
  }
  // dout (N,K,P) at (n, k, p), or 0 where relu_out (N,K,P) is given and not > 0.
  __host__ __device__ float dout_at(const float* dout, const float* relu_out, int n, int k,
                                    int p) const {
    const size_t i = (size_t(n) * K + k) * P + p;
    const float g = dout[i];
    return relu_out == nullptr || relu_out[i] > 0.0f ? g : 0.0f;
  }
};

// out (N,K,P): C (K, N*P), column j = n*P + p.
struct ForwardProduct {
  float* out;
  const float* inp;
  const float* weight;
  const float* bias;
  Geometry g;
  bool relu;
  __host__ __device__ float a(int k, int crs) const { return weight[size_t(k) * g.CRS + crs]; }
  __host__ __device__ float b(int crs, int j) const {
    const int n = j / g.P;
    return g.input_at(inp, n, crs, j - n * g.P);
  }
  __host__ __device__ void store(int k, int j, float v, int) const {
    const int n = j / g.P, p = j - n * g.P;
    if (bias != nullptr) v += bias[k];
    if (relu) v = v > 0.0f ? v : 0.0f;  // relu_forward's rule
    out[(size_t(n) * g.K + k) * g.P + p] = v;
  }
};

// dinp (N,C,H,W) +=: C (C, N*H*W), column j = n*H*W + h*W + w, depth krs = k*R*S + r*S + q.
// Input position (h, w) met tap (r, q) at output (ho, wo) where ho*stride - padding + r = h.
struct InputGradProduct {
  float* dinp;
  const float* dout;
  const float* relu_out;
  const float* weight;
  Geometry g;
  __host__ __device__ float a(int c, int krs) const {
    const int k = krs / g.RS, rs = krs - k * g.RS;
    return weight[(size_t(k) * g.C + c) * g.RS + rs];
  }
  __host__ __device__ float b(int krs, int j) const {
    const int n = j / g.HW, hw = j - n * g.HW, h = hw / g.W, w = hw - h * g.W;
    const int k = krs / g.RS, rs = krs - k * g.RS, r = rs / g.S, q = rs - r * g.S;
    const int th = h + g.padding - r, tw = w + g.padding - q;
    if (th < 0 || tw < 0 || th % g.stride != 0 || tw % g.stride != 0) return 0.0f;
    const int ho = th / g.stride, wo = tw / g.stride;
    if (ho >= g.Ho || wo >= g.Wo) return 0.0f;
    return g.dout_at(dout, relu_out, n, k, ho * g.Wo + wo);
  }
  __host__ __device__ void store(int c, int j, float v, int) const {
    const int n = j / g.HW, hw = j - n * g.HW;
    dinp[(size_t(n) * g.C + c) * g.HW + hw] += v;  // each element has one thread
  }
};

// dweight (K,CRS) +=: C (K, CRS), depth t = n*P + p. With `partial`, slice z stores its sum in
// partial (slices, K, CRS) instead, to be added in slice order.
struct WeightGradProduct {
  float* dweight;
  float* partial;
  const float* dout;
  const float* relu_out;
  const float* inp;
  Geometry g;
  __host__ __device__ float a(int k, int t) const {
    const int n = t / g.P;
    return g.dout_at(dout, relu_out, n, k, t - n * g.P);
  }
  __host__ __device__ float b(int t, int crs) const {
    const int n = t / g.P;
    return g.input_at(inp, n, crs, t - n * g.P);
  }
  __host__ __device__ void store(int k, int crs, float v, int slice) const {
    if (partial != nullptr)
      partial[(size_t(slice) * g.K + k) * g.CRS + crs] = v;
    else
      dweight[size_t(k) * g.CRS + crs] += v;
  }
};

inline Geometry geometry_of(const Conv2dShape& s) {
  const int Ho = s.out_height(), Wo = s.out_width();
  return {s.in_channels,
          s.in_height,
          s.in_width,
          s.out_channels,
          s.kernel_h,
          s.kernel_w,
          s.stride,
          s.padding,
          Ho,
          Wo,
          Ho * Wo,
          s.in_height * s.in_width,
          s.kernel_h * s.kernel_w,
          s.in_channels * s.kernel_h * s.kernel_w};
}

// Images per launch, so that every column and depth index (n*P + p, n*H*W + hw), plus a tile,
// fits an int.
inline int chunk_images(const Conv2dShape& s, const Geometry& g) {
  const int per_image = g.P > g.HW ? g.P : g.HW;
  const int fit = (INT_MAX / 2) / per_image;
  return fit < s.batch ? fit : s.batch;
}

// The weight gradient's split: enough slices for about kTargetBlocks blocks of tiles (a 32x9
// result, one tile, gets hundreds of slices), each at least kMinSliceDepth deep, their partial
// results at most kMaxPartialFloats.
constexpr int kTargetBlocks = 528;  // 4 per multiprocessor of an H100
constexpr int kMinSliceDepth = 1024;
constexpr size_t kMaxPartialFloats = size_t(8) << 20;  // 32 MiB

inline int wanted_slices(const Geometry& g, int depth) {
  const size_t tiles = size_t((g.K + kTileM - 1) / kTileM) * size_t((g.CRS + kTileN - 1) / kTileN);
  size_t slices = (kTargetBlocks + tiles - 1) / tiles;
  const size_t deep = size_t(depth) / kMinSliceDepth,
               fit = kMaxPartialFloats / (size_t(g.K) * g.CRS);
  if (deep < slices) slices = deep;
  if (fit < slices) slices = fit;
  return slices < 1 ? 1 : int(slices);
}

// How a weight gradient of `depth` runs with a scratch of scratch_floats: in `slices` slices of
// slice_depth (the last one shorter), their partial sums in the scratch; or, slices 1, in one pass
// that adds to dweight itself. Slices are whole tiles deep; rounding up may leave fewer slices
// than wanted, never an empty one.
struct WeightGradSplit {
  int slices, slice_depth;
};
inline WeightGradSplit split_weight_gradient(const Geometry& g, int depth, const float* scratch,
                                             size_t scratch_floats) {
  const size_t result = size_t(g.K) * g.CRS;
  const size_t room = scratch != nullptr ? scratch_floats / result : 0;
  int slices = wanted_slices(g, depth);
  if (size_t(slices) > room) slices = int(room);
  if (slices < 2) return {1, depth};
  const int slice_depth = ((depth + slices - 1) / slices + kTileK - 1) / kTileK * kTileK;
  return {(depth + slice_depth - 1) / slice_depth, slice_depth};
}

}  // namespace gpulab::kernels::cuda::detail
