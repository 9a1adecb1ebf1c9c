// MNIST-style preprocessing: ground and ink, bounding box, area-averaged resize, centre of mass.
#include "engine/inside/digit_image.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpulab {
namespace {

// Ink below this (on the 0..1 scale above the ground) is the ground's noise, not the digit.
constexpr float kInkThreshold = 0.1f;

float border_median(const GrayImage& picture) {
  std::vector<float> border;
  const int w = picture.width, h = picture.height;
  for (int x = 0; x < w; ++x) {
    border.push_back(picture.pixels[x]);
    border.push_back(picture.pixels[size_t(h - 1) * w + x]);
  }
  for (int y = 0; y < h; ++y) {
    border.push_back(picture.pixels[size_t(y) * w]);
    border.push_back(picture.pixels[size_t(y) * w + w - 1]);
  }
  std::nth_element(border.begin(), border.begin() + border.size() / 2, border.end());
  return border[border.size() / 2];
}

// The mean of `source` (sw, sh) over each cell of a (dw, dh) grid laid on it: each output pixel
// weighs the source pixels by how much of them its cell covers, so a downscale is anti-aliased
// and an integer upscale stays exact.
std::vector<float> area_resize(const std::vector<float>& source, int sw, int sh, int dw, int dh) {
  const double sx = double(sw) / dw, sy = double(sh) / dh;  // source pixels per output pixel
  std::vector<float> out(size_t(dw) * dh, 0.0f);
  for (int oy = 0; oy < dh; ++oy) {
    const double y0 = oy * sy, y1 = (oy + 1) * sy;
    for (int ox = 0; ox < dw; ++ox) {
      const double x0 = ox * sx, x1 = (ox + 1) * sx;
      double sum = 0;
      for (int y = int(y0); y < std::min(sh, int(std::ceil(y1))); ++y) {
        const double wy = std::min(y1, y + 1.0) - std::max(y0, double(y));
        for (int x = int(x0); x < std::min(sw, int(std::ceil(x1))); ++x) {
          const double wx = std::min(x1, x + 1.0) - std::max(x0, double(x));
          sum += wx * wy * source[size_t(y) * sw + x];
        }
      }
      out[size_t(oy) * dw + ox] = float(sum / (sx * sy));
    }
  }
  return out;
}

}  // namespace

GrayImage gray_image(int width, int height, std::span<const uint8_t> pixels) {
  GrayImage image{width, height, std::vector<float>(pixels.size())};
  for (size_t i = 0; i < pixels.size(); ++i) image.pixels[i] = pixels[i] / 255.0f;
  return image;
}

std::vector<uint8_t> mnist_digit(const GrayImage& picture) {
  const int w = picture.width, h = picture.height;
  if (w <= 0 || h <= 0 || picture.pixels.size() != size_t(w) * h)
    throw std::invalid_argument("the picture has no pixels");
  // Ink as light on a ground of 0, whatever the picture's colours.
  const float ground = border_median(picture);
  const bool dark_ink = ground > 0.5f;
  const float range = dark_ink ? ground : 1.0f - ground;
  std::vector<float> ink(picture.pixels.size(), 0.0f);
  if (range > 0)
    for (size_t i = 0; i < ink.size(); ++i) {
      const float above = dark_ink ? ground - picture.pixels[i] : picture.pixels[i] - ground;
      ink[i] = std::clamp(above / range, 0.0f, 1.0f);
    }
  int left = w, right = -1, top = h, bottom = -1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (ink[size_t(y) * w + x] > kInkThreshold) {
        left = std::min(left, x), right = std::max(right, x);
        top = std::min(top, y), bottom = std::max(bottom, y);
      }
  if (right < 0)
    throw std::invalid_argument("no digit in the picture: it is all one shade (" +
                                std::string(dark_ink ? "a light" : "a dark") + " ground)");
  const int box_w = right - left + 1, box_h = bottom - top + 1;
  std::vector<float> box(size_t(box_w) * box_h);
  for (int y = 0; y < box_h; ++y)
    for (int x = 0; x < box_w; ++x)
      box[size_t(y) * box_w + x] = ink[size_t(top + y) * w + left + x];
  // The longer side becomes 20 pixels, the shorter keeps the aspect ratio.
  const double scale = double(kDigitBox) / std::max(box_w, box_h);
  const int fit_w = std::clamp(int(std::lround(box_w * scale)), 1, kDigitBox);
  const int fit_h = std::clamp(int(std::lround(box_h * scale)), 1, kDigitBox);
  const std::vector<float> fit = area_resize(box, box_w, box_h, fit_w, fit_h);
  // Shift by whole pixels so the centre of mass lands on pixel (14, 14), as in MNIST's digits
  // (their centres of mass lie within half a pixel of it), keeping all the ink inside. Halves
  // round up, and a hair's breadth more, so that a symmetric digit's float noise does not decide.
  constexpr double kTieBreak = 1e-6;
  double mass = 0, mass_x = 0, mass_y = 0;
  for (int y = 0; y < fit_h; ++y)
    for (int x = 0; x < fit_w; ++x) {
      const double v = fit[size_t(y) * fit_w + x];
      mass += v, mass_x += v * x, mass_y += v * y;
    }
  const double centre = kDigitSide / 2;
  const int at_x =
      std::clamp(int(std::lround(centre - mass_x / mass + kTieBreak)), 0, kDigitSide - fit_w);
  const int at_y =
      std::clamp(int(std::lround(centre - mass_y / mass + kTieBreak)), 0, kDigitSide - fit_h);
  std::vector<uint8_t> digit(size_t(kDigitSide) * kDigitSide, 0);
  for (int y = 0; y < fit_h; ++y)
    for (int x = 0; x < fit_w; ++x)
      digit[size_t(at_y + y) * kDigitSide + at_x + x] =
          uint8_t(std::lround(std::clamp(fit[size_t(y) * fit_w + x], 0.0f, 1.0f) * 255.0f));
  return digit;
}

}  // namespace gpulab
