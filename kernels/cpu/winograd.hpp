// Winograd F(2x2, 3x3) transforms for the fast CPU convolution (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2015). A 3x3, stride-1 convolution becomes 16 GEMMs with
// 2.25x fewer multiply-adds than im2col's one: each 2x2 output tile is
//   y = A^T [ (G g G^T) .* (B^T d B) ] A
// for its 4x4 input tile d and the 3x3 filter g. The backward passes use the adjoint (transposed)
// transforms of the same maps. Internal to the fast kernels.
#pragma once

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::cpu::detail {

// 16 transformed positions (xi = 4*i + j) per tile.
constexpr int kWinogradPoints = 16;

// Whether conv2d uses Winograd for this shape: a 3x3 kernel at stride 1, with enough input and
// output channels (8) for the 16 GEMMs, whose inner dimensions they are, to beat im2col's one.
bool winograd_applies(const Conv2dShape& s);

// How one image's output is cut into 2x2 tiles, and how the tiles' zero-padded input is held.
// Tiles are numbered t = ty * (tiles_w + 1) + tx: each tile row ends with a dummy tile, so that
// the tiles of a whole image are one run of floats and every transform loop is one long
// vectorizable loop over them (short per-row loops cost twice the time). The dummy tiles' outputs
// are dropped and their output gradients are zero. The padded input, rows and columns
// [-padding, 2 * tiles + 2 - padding) of one channel, is held as four sub-planes by row and
// column parity: rows 2ty .. 2ty+3 of tile row ty are then rows ty and ty + 1 of the even-row
// and odd-row sub-planes, each tiles_w + 1 floats wide, one tile row apart in the numbering.
struct WinogradTiles {
  explicit WinogradTiles(const Conv2dShape& s);
  int out_h, out_w;      // Ho, Wo
  int tiles_h, tiles_w;  // ceil(Ho / 2), ceil(Wo / 2)
  int half;              // tiles_w + 1: the tile numbering's row length, a sub-plane's width
  int tiles;             // T = tiles_h * half, dummies included: the GEMMs' N
  int padding, in_h, in_w;
  // One sub-plane: tiles_h + 1 rows of `half` floats, and one more that reads past the end.
  size_t sub_plane_floats() const { return size_t(tiles_h + 1) * half + 1; }
  size_t plane_floats() const { return 4 * sub_plane_floats(); }
  size_t temp_floats() const { return 20 * temp_stride(); }  // the transforms' temporaries
  size_t temp_stride() const { return (size_t(tiles) + 16) / 16 * 16; }  // one temporary
};

// U (16, K, C) = G g G^T for the filters (k, c) in [kc_begin, kc_end) of weight (K, C, 3, 3).
void winograd_weights(float* U, const float* weight, int K, int C, int kc_begin, int kc_end);

// dweight (3, 3) += G^T dU G for one filter, dU given as 16 values `stride` apart.
void winograd_weights_adjoint(float* dweight, const float* dU, size_t stride);

// The transforms take plane: plane_floats() and temp: temp_floats() of scratch.

// V (16, C, T) = B^T d B for every tile of image (C, H, W).
void winograd_input(float* V, const float* image, int C, const WinogradTiles& t, float* plane,
                    float* temp);

// dimage (C, H, W) += the adjoint of winograd_input applied to dV (16, C, T).
void winograd_input_adjoint(float* dimage, const float* dV, int C, const WinogradTiles& t,
                            float* plane, float* temp);

// out (K, Ho, Wo) = A^T M A (+ bias[k]) for M (16, K, T). bias may be nullptr.
void winograd_output(float* out, const float* M, const float* bias, int K, const WinogradTiles& t,
                     float* temp);

// dM (16, K, T) = the adjoint of winograd_output (without bias) applied to dout (K, Ho, Wo).
void winograd_output_adjoint(float* dM, const float* dout, int K, const WinogradTiles& t,
                             float* temp);

}  // namespace gpulab::kernels::cpu::detail
