// Random rotation and shift of images, bilinear, from counter-based draws.
#include "datasets/augment.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/counter_rng.hpp"

namespace gpulab::data {

namespace {

// Mixed into the run's seed so that the augmentation's draws are not dropout's.
constexpr uint64_t kAugmentStream = 0x6175676D656E7400ull;  // "augment"

float pixel_or_zero(const uint8_t* in, int rows, int cols, int r, int c) {
  return r < 0 || r >= rows || c < 0 || c >= cols ? 0.0f : float(in[size_t(r) * cols + c]);
}

}  // namespace

ImageAugment augment_draw(uint64_t seed, uint64_t counter, uint64_t image) {
  float u[4];
  kernels::rng::uniform4(u, seed ^ kAugmentStream, counter, image);
  return {(2 * u[0] - 1) * kMaxRotationDeg, (2 * u[1] - 1) * kMaxShiftPixels,
          (2 * u[2] - 1) * kMaxShiftPixels};
}

void augment_image(float* out, const uint8_t* in, int rows, int cols, const ImageAugment& a) {
  const float angle = a.rotation_deg * std::numbers::pi_v<float> / 180.0f;
  // Each output point is mapped back to where it came from: the shift undone, then the turn.
  const float cos_a = std::cos(angle), sin_a = std::sin(angle);
  const float centre_x = float(cols - 1) / 2, centre_y = float(rows - 1) / 2;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const float x = float(c) - centre_x - a.shift_x, y = float(r) - centre_y - a.shift_y;
      const float source_x = cos_a * x + sin_a * y + centre_x;
      const float source_y = -sin_a * x + cos_a * y + centre_y;
      const float floor_x = std::floor(source_x), floor_y = std::floor(source_y);
      const int c0 = int(floor_x), r0 = int(floor_y);
      const float fx = source_x - floor_x, fy = source_y - floor_y;
      const float top = (1 - fx) * pixel_or_zero(in, rows, cols, r0, c0) +
                        fx * pixel_or_zero(in, rows, cols, r0, c0 + 1);
      const float bottom = (1 - fx) * pixel_or_zero(in, rows, cols, r0 + 1, c0) +
                           fx * pixel_or_zero(in, rows, cols, r0 + 1, c0 + 1);
      out[size_t(r) * cols + c] = (1 - fy) * top + fy * bottom;
    }
  }
}

void augment_batch(float* images_out, uint8_t* labels_out, const ImageSet& set,
                   std::span<const int32_t> indices, uint64_t seed, uint64_t step) {
  const size_t image_size = size_t(set.image_size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const int32_t index = indices[k];
    if (index < 0 || index >= set.count)
      throw std::out_of_range("augment_batch: index " + std::to_string(index) +
                              " is outside a set of " + std::to_string(set.count) + " images");
    float* image = images_out + k * image_size;
    augment_image(image, set.pixels.data() + size_t(index) * image_size, set.rows, set.cols,
                  augment_draw(seed, step, uint64_t(index)));
    // As normalize_pixels, on values that are no longer whole.
    for (size_t i = 0; i < image_size; ++i) image[i] = (image[i] / 255.0f - kMnistMean) / kMnistStd;
    labels_out[k] = set.labels[index];
  }
}

void augment_set(ImageSet& set, uint64_t seed) {
  const size_t image_size = size_t(set.image_size());
  std::vector<float> image(image_size);
  for (int index = 0; index < set.count; ++index) {
    uint8_t* pixels = set.pixels.data() + size_t(index) * image_size;
    augment_image(image.data(), pixels, set.rows, set.cols, augment_draw(seed, 0, uint64_t(index)));
    for (size_t i = 0; i < image_size; ++i)
      pixels[i] = uint8_t(std::clamp(std::lround(image[i]), 0L, 255L));
  }
}

}  // namespace gpulab::data
