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
// the tiles of a whole image are one run of floats and each transform is one long vectorizable
// loop over them (per-row loops of a dozen tiles cost twice the time). The dummy tiles' outputs
// are dropped and their output gradients are zero. The padded input of one channel, rows and
// columns [-padding, 2 * tiles + 2 - padding), is held as two planes of its even and its odd
// rows, each row 2 * (tiles_w + 1) floats: tile t's 4x4 input then starts at float 2t of the
// even-row plane (rows 2ty, 2ty + 2) and of the odd-row plane (rows 2ty + 1, 2ty + 3).
struct WinogradTiles {
  explicit WinogradTiles(const Conv2dShape& s);
  int out_h, out_w;      // Ho, Wo
  int tiles_h, tiles_w;  // ceil(Ho / 2), ceil(Wo / 2)
  int half;              // tiles_w + 1: the tile numbering's row length
  int tiles;             // T = tiles_h * half, dummies included: the GEMMs' N
  int padding, in_h, in_w;
  // One row-parity plane: tiles_h + 1 rows of 2 * half floats, and two more read past the end.
  size_t parity_plane_floats() const { return size_t(tiles_h + 1) * 2 * half + 2; }
  size_t plane_floats() const { return 2 * parity_plane_floats(); }
  // 16 temporaries of T tiles with half + 1 zeros on either side.
  size_t temp_stride() const { return (size_t(tiles) + 2 * half + 2 + 15) / 16 * 16; }
  size_t temp_floats() const { return 16 * temp_stride(); }
  // The padded input of all C channels, channels last: (2 * tiles_h + 2, 2 * half, C).
  size_t channels_last_floats(int C) const { return size_t(2 * tiles_h + 2) * 2 * half * C; }
};

// U (16, K, C) = G g G^T for the filters (k, c) in [kc_begin, kc_end) of weight (K, C, 3, 3).
void winograd_weights(float* U, const float* weight, int K, int C, int kc_begin, int kc_end);

// dweight (3, 3) += G^T dU G for one filter, dU given as 16 values `stride` apart.
void winograd_weights_adjoint(float* dweight, const float* dU, size_t stride);

// The transforms take plane: plane_floats() and temp: temp_floats() of scratch.

// V (16, C, T) = B^T d B for every tile of image (C, H, W).
void winograd_input(float* V, const float* image, int C, const WinogradTiles& t, float* plane,
                    float* temp);

// Vt (16, T, C) = winograd_input's V with each matrix transposed, tiles first, which the weight
// gradient's GEMM reads 1.5x faster (NN against NT: 45 against 68 us an image for pytorch-example's
// second layer). Vectorized over channels from a channels-last copy of the image in plane:
// channels_last_floats(C) of scratch.
void winograd_input_tiles_first(float* Vt, const float* image, int C, const WinogradTiles& t,
                                float* plane);

// dimage (C, H, W) += the adjoint of winograd_input applied to dV (16, C, T).
void winograd_input_adjoint(float* dimage, const float* dV, int C, const WinogradTiles& t,
                            float* plane, float* temp);

// out (K, Ho, Wo) = A^T M A (+ bias[k]) for M (16, K, T), through a ReLU when relu. bias may be
// nullptr.
void winograd_output(float* out, const float* M, const float* bias, bool relu, int K,
                     const WinogradTiles& t, float* temp);

// dM (16, K, T) = the adjoint of winograd_output (without bias) applied to dout (K, Ho, Wo).
void winograd_output_adjoint(float* dM, const float* dout, int K, const WinogradTiles& t,
                             float* temp);

}  // namespace gpulab::kernels::cpu::detail
