// Digits drawn from a 5x7 pixel font, made the way MNIST's were (engine/inside/digit_image.hpp):
// a set a small model learns in a few steps, and whose pictures survive being redrawn at another
// size and colour and preprocessed again.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/inside/digit_image.hpp"

namespace gpulab::test {

inline const std::array<std::array<const char*, 7>, 10> kGlyphs = {{
    {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
    {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
    {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
    {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
    {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
    {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
    {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
    {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
    {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
    {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
}};

// `count` digits of random labels, each glyph drawn 15x20 (3 pixels per font column, 3 or 2 per
// row: 20 high, so the 20x20 fit keeps it crisp and preprocessing it again changes nothing) at a
// random place and brightness on a 28x28 black ground, then preprocessed as MNIST's digits were.
inline data::ImageSet glyph_digits(int count, uint32_t seed) {
  data::ImageSet set;
  set.count = count;
  set.rows = set.cols = 28;
  set.labels.resize(size_t(count));
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    const int label = int(rng() % 10);
    set.labels[size_t(i)] = uint8_t(label);
    std::vector<uint8_t> canvas(28 * 28, 0);
    const int at_x = 1 + int(rng() % 10), at_y = 1 + int(rng() % 4);
    const uint8_t ink = uint8_t(160 + rng() % 96);
    constexpr int kRowOf[20] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6};
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 15; ++x)
        if (kGlyphs[size_t(label)][size_t(kRowOf[y])][x / 3] == '#')
          canvas[size_t(at_y + y) * 28 + at_x + x] = ink;
    const std::vector<uint8_t> digit = mnist_digit(gray_image(28, 28, canvas));
    set.pixels.insert(set.pixels.end(), digit.begin(), digit.end());
  }
  return set;
}

// Image `index` of `set` drawn `scale` times larger (each pixel a scale x scale square) at
// (left, top) of a width x height picture; inverted (black ink on white) where asked.
inline std::vector<uint8_t> redraw_digit(const data::ImageSet& set, int index, int scale, int width,
                                         int height, int left, int top, bool invert) {
  std::vector<uint8_t> picture(size_t(width) * height, invert ? 255 : 0);
  const uint8_t* digit = set.pixels.data() + size_t(index) * 784;
  for (int y = 0; y < 28 * scale; ++y)
    for (int x = 0; x < 28 * scale; ++x) {
      const uint8_t v = digit[size_t(y / scale) * 28 + x / scale];
      picture[size_t(top + y) * width + left + x] = invert ? uint8_t(255 - v) : v;
    }
  return picture;
}

}  // namespace gpulab::test
