// The MNIST dataset (and Fashion-MNIST, same files and format): loading the four IDX files,
// finding the data folder, the pixel normalization shared with CUDA and PyTorch, and splits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace gpulab::data {

struct ImageSet {
  int count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // (count, rows, cols)
  std::vector<uint8_t> labels;  // (count), each 0..9
  int image_size() const { return rows * cols; }
};

// Loads an images file (3 dimensions) and its labels file (1 dimension), raw or .gz.
ImageSet load_image_set(const std::filesystem::path& images, const std::filesystem::path& labels);

struct MnistData {
  ImageSet train, test;
  std::filesystem::path dir;  // the folder the files came from
};

// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte from `dir`, each raw or with .gz (raw first).
MnistData load_mnist(const std::filesystem::path& dir);

// Where to look for the data, first that is set (and not empty): the flag, $GPULAB_DATA,
// $XDG_DATA_HOME/gpulab/mnist, $HOME/.local/share/gpulab/mnist; but where that user folder
// lacks MNIST and system_data_dir() holds it, that one. Throws DataError if none is set.
std::filesystem::path default_data_dir(const std::optional<std::filesystem::path>& flag);

// The shared read-only copy a site may install for every user (gpulab-cli data fetch --shared):
// $GPULAB_SYSTEM_DATA when set (empty: none), else kSharedDataDir.
inline constexpr const char* kSharedDataDir = "/var/lib/gpulab/mnist";
std::filesystem::path system_data_dir();

// The usual MNIST statistics. Every backend and the PyTorch reference normalize with exactly
// (p / 255 - mean) / std in float, so their inputs agree bit for bit.
inline constexpr float kMnistMean = 0.1307f, kMnistStd = 0.3081f;
inline constexpr int kMnistTrainImages = 60'000;  // the largest batch the window offers
void normalize_pixels(float* out, const uint8_t* pixels, size_t n);  // out, pixels: (n)

// Moves the last `count` images of `set` into the returned set (a validation split).
// Throws std::invalid_argument unless 0 <= count < set.count.
ImageSet split_off(ImageSet& set, int count);

}  // namespace gpulab::data
