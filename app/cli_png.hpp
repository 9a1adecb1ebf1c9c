// PNG files for the command line, read as grayscale and written as 8-bit grayscale, through Qt's
// QImage where gpulab-cli is built with Qt; without it each call says that it needs the Qt build.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "engine/inside/digit_image.hpp"

namespace gpulab::cli {

// Empty where PNG files can be read and written; else why not and what to do.
std::string png_unavailable_reason();

// Any PNG: any size, bit depth and colour type; colours become their luminance, and transparent
// pixels the ground the opaque ones stand out from. Throws ConfigError naming the file when it is
// not a readable PNG.
GrayImage read_png_gray(const std::filesystem::path& path);

// (height, width) bytes drawn `scale` times larger (each pixel a scale x scale square), as the
// bytes of a PNG file.
std::string encode_png_gray(std::span<const uint8_t> pixels, int width, int height, int scale = 1);

}  // namespace gpulab::cli
