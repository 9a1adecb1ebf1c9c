// A picture of a digit of any size made into the 28x28 image a model trained on MNIST expects,
// the way the MNIST digits were made: light ink on a dark ground, the ink's bounding box fit into
// 20x20 keeping its aspect ratio (area-averaged), its centre of mass at the centre of 28x28.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpulab {

// A grayscale picture: (height, width) intensities, 0 black to 1 white.
struct GrayImage {
  int width = 0, height = 0;
  std::vector<float> pixels;
};

GrayImage gray_image(int width, int height, std::span<const uint8_t> pixels);  // 0..255 bytes

inline constexpr int kDigitSide = 28;  // the image the model sees
inline constexpr int kDigitBox = 20;   // the box the ink is fit into

// The 28x28 bytes (0 ground, 255 full ink). Where the picture's border is lighter than mid-grey
// the picture is dark ink on a light ground and is inverted first; the ground's level (the
// border's median) becomes 0. Throws std::invalid_argument when the picture holds no ink (all
// of it within a tenth of the ground's level) or has no pixels.
std::vector<uint8_t> mnist_digit(const GrayImage& picture);

}  // namespace gpulab
