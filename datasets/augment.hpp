// An input pipeline's work on training images, as a data loader does it on the host: each image
// read from its stored bytes, rotated and shifted at random (bilinear, zero outside) and
// normalized. Per batch (`augment_batch`, on the calling thread) or once for a whole set
// (`augment_set`). The draws are counter-based (Philox), so a run's seed gives the same images
// on every machine and with any number of replicas.
#pragma once

#include <cstdint>
#include <span>

#include "datasets/mnist.hpp"

namespace gpulab::data {

// torchvision's RandomAffine(degrees=10, translate=(2/28, 2/28)) for MNIST.
inline constexpr float kMaxRotationDeg = 10.0f, kMaxShiftPixels = 2.0f;

struct ImageAugment {
  float rotation_deg = 0;  // clockwise as the image is shown (rows run down)
  float shift_x = 0;       // pixels to the right
  float shift_y = 0;       // pixels down
};

// The augmentation of image `image` (its index in the set) under (seed, counter): rotation in
// [-kMaxRotationDeg, kMaxRotationDeg), shifts in [-kMaxShiftPixels, kMaxShiftPixels).
ImageAugment augment_draw(uint64_t seed, uint64_t counter, uint64_t image);

// out(r, c) = in at the point that the rotation about the image's centre, then the shift, brings
// to (r, c), read bilinearly, 0 outside the image; values stay in 0..255.
// out: (rows, cols) floats, in: (rows, cols) bytes.
void augment_image(float* out, const uint8_t* in, int rows, int cols, const ImageAugment& a);

// Gathers the chosen images, each augmented with augment_draw(seed, step, index) and normalized
// as gather_batch normalizes, and their labels. Allocates nothing. images_out: (n, rows * cols),
// labels_out: (n), n = indices.size(). Throws std::out_of_range for an index outside the set.
void augment_batch(float* images_out, uint8_t* labels_out, const ImageSet& set,
                   std::span<const int32_t> indices, uint64_t seed, uint64_t step);

// Every image of the set augmented with augment_draw(seed, 0, index) and rounded back to bytes
// (an augmented copy of the data set made before training, as one saved to disk would be).
void augment_set(ImageSet& set, uint64_t seed);

}  // namespace gpulab::data
