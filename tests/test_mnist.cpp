// Tests for the MNIST loader, the data folder lookup, pixel normalization, the validation split,
// the deterministic shuffle, the batch sampler and batch gathering. All data is synthetic.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/augment.hpp"
#include "datasets/batching.hpp"
#include "datasets/idx.hpp"
#include "datasets/mnist.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace gpulab::data;

namespace {

using Bytes = std::vector<uint8_t>;

using gpulab::test::TempDir;

Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes bytes = {0, 0, 0x08, uint8_t(dims.size())};
  for (uint32_t dim : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(dim >> shift));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// Pixel value of image i at offset p: varied, and different between images.
uint8_t pixel_value(int image, int offset) { return uint8_t((image * 37 + offset * 11) % 256); }

Bytes image_data(int count, int rows, int cols) {
  Bytes data(size_t(count) * rows * cols);
  for (int i = 0; i < count; ++i)
    for (int p = 0; p < rows * cols; ++p) data[size_t(i) * rows * cols + p] = pixel_value(i, p);
  return data;
}

Bytes label_data(int count) {
  Bytes labels(count);
  for (int i = 0; i < count; ++i) labels[i] = uint8_t((i * 7) % 10);
  return labels;
}

// Writes raw bytes, or a .gz through zlib's gzip file API (the same framing gzip(1) writes).
void write_file(const fs::path& path, const Bytes& bytes, bool gzipped) {
  if (gzipped) {
    gzFile file = gzopen((path.string() + ".gz").c_str(), "wb9");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(gzwrite(file, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
    ASSERT_EQ(gzclose(file), Z_OK);
  } else {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
}

void write_image_set(const fs::path& dir, const std::string& prefix, int count, int rows, int cols,
                     bool gzipped) {
  write_file(
      dir / (prefix + "-images-idx3-ubyte"),
      idx_bytes({uint32_t(count), uint32_t(rows), uint32_t(cols)}, image_data(count, rows, cols)),
      gzipped);
  write_file(dir / (prefix + "-labels-idx1-ubyte"), idx_bytes({uint32_t(count)}, label_data(count)),
             gzipped);
}

void write_mnist(const fs::path& dir, bool gzipped, int train = 100, int test = 20) {
  write_image_set(dir, "train", train, 28, 28, gzipped);
  write_image_set(dir, "t10k", test, 28, 28, gzipped);
}

template <typename Action>
std::string data_error_message(Action action) {
  try {
    action();
  } catch (const DataError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a DataError";
  return "";
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// Sets or unsets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

// ---- load_image_set ----------------------------------------------------------------------

TEST(MnistImageSet, LoadsImagesAndLabels) {
  TempDir dir;
  write_image_set(dir.path(), "train", 12, 5, 4, false);
  const ImageSet set = load_image_set(dir.path() / "train-images-idx3-ubyte",
                                      dir.path() / "train-labels-idx1-ubyte");
  EXPECT_EQ(set.count, 12);
  EXPECT_EQ(set.rows, 5);
  EXPECT_EQ(set.cols, 4);
  EXPECT_EQ(set.image_size(), 20);
  EXPECT_EQ(set.pixels, image_data(12, 5, 4));
  EXPECT_EQ(set.labels, label_data(12));
}

TEST(MnistImageSet, LabelImageCountMismatch) {
  TempDir dir;
  write_file(dir.path() / "images", idx_bytes({10, 2, 2}, image_data(10, 2, 2)), false);
  write_file(dir.path() / "labels", idx_bytes({9}, label_data(9)), false);
  const std::string message =
      data_error_message([&] { load_image_set(dir.path() / "images", dir.path() / "labels"); });
  EXPECT_TRUE(contains(message, (dir.path() / "labels").string() + ": ")) << message;
  EXPECT_TRUE(contains(message, "9 labels for 10 images")) << message;
}

TEST(MnistImageSet, LabelTenRejected) {
  TempDir dir;
  Bytes labels = label_data(6);
  labels[4] = 10;
  write_file(dir.path() / "images", idx_bytes({6, 2, 2}, image_data(6, 2, 2)), false);
  write_file(dir.path() / "labels", idx_bytes({6}, labels), false);
  const std::string message =
      data_error_message([&] { load_image_set(dir.path() / "images", dir.path() / "labels"); });
  EXPECT_TRUE(contains(message, "labels: label at index 4 is 10, expected 0 to 9")) << message;
}

TEST(MnistImageSet, SwappedFilesAreExplained) {
  TempDir dir;
  write_image_set(dir.path(), "train", 3, 2, 2, false);
  const std::string message = data_error_message([&] {
    load_image_set(dir.path() / "train-labels-idx1-ubyte", dir.path() / "train-images-idx3-ubyte");
  });
  EXPECT_TRUE(contains(message, "train-labels-idx1-ubyte: expected images with 3 dimensions"))
      << message;
  EXPECT_TRUE(contains(message, "found 1")) << message;
}

// ---- load_mnist --------------------------------------------------------------------------

TEST(MnistLoad, RawFiles) {
  TempDir dir;
  write_mnist(dir.path(), false);
  const MnistData data = load_mnist(dir.path());
  EXPECT_EQ(data.dir, dir.path());
  EXPECT_EQ(data.train.count, 100);
  EXPECT_EQ(data.test.count, 20);
  EXPECT_EQ(data.train.rows, 28);
  EXPECT_EQ(data.train.cols, 28);
  EXPECT_EQ(data.train.pixels, image_data(100, 28, 28));
  EXPECT_EQ(data.test.labels, label_data(20));
}

TEST(MnistLoad, GzFiles) {
  TempDir dir;
  write_mnist(dir.path(), true);
  ASSERT_FALSE(fs::exists(dir.path() / "train-images-idx3-ubyte"));
  const MnistData data = load_mnist(dir.path());
  EXPECT_EQ(data.train.count, 100);
  EXPECT_EQ(data.test.count, 20);
  EXPECT_EQ(data.train.pixels, image_data(100, 28, 28));
  EXPECT_EQ(data.test.pixels, image_data(20, 28, 28));
  EXPECT_EQ(data.train.labels, label_data(100));
}

TEST(MnistLoad, RawPreferredOverGz) {
  TempDir dir;
  write_mnist(dir.path(), true, 50, 10);
  write_mnist(dir.path(), false, 100, 20);
  EXPECT_EQ(load_mnist(dir.path()).train.count, 100);
}

TEST(MnistLoad, MissingFolderSaysHowToGetData) {
  TempDir dir;
  const fs::path missing = dir.path() / "nowhere";
  const std::string message = data_error_message([&] { load_mnist(missing); });
  EXPECT_TRUE(contains(message, missing.string() + ": no such folder")) << message;
  EXPECT_TRUE(contains(message, "train-images-idx3-ubyte")) << message;
  EXPECT_TRUE(contains(message, "t10k-labels-idx1-ubyte")) << message;
  EXPECT_TRUE(contains(
      message, "run gpulab-cli data fetch (or ./scripts/setup in a clone), or pass --data-dir DIR"))
      << message;
}

TEST(MnistLoad, MissingFileIsNamed) {
  TempDir dir;
  write_mnist(dir.path(), false);
  fs::remove(dir.path() / "t10k-labels-idx1-ubyte");
  const std::string message = data_error_message([&] { load_mnist(dir.path()); });
  EXPECT_TRUE(contains(message, dir.path().string() +
                                    ": missing t10k-labels-idx1-ubyte (looked for "
                                    "t10k-labels-idx1-ubyte and t10k-labels-idx1-ubyte.gz)"))
      << message;
  EXPECT_TRUE(contains(
      message, "run gpulab-cli data fetch (or ./scripts/setup in a clone), or pass --data-dir DIR"))
      << message;
}

TEST(MnistLoad, EmptyFolderListsEveryFile) {
  TempDir dir;
  const std::string message = data_error_message([&] { load_mnist(dir.path()); });
  EXPECT_TRUE(contains(message,
                       "missing train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                       "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte"))
      << message;
  EXPECT_TRUE(contains(message, "raw and with .gz")) << message;
  EXPECT_TRUE(contains(message, "./scripts/setup")) << message;
}

TEST(MnistLoad, MixedRawAndGzFiles) {
  TempDir dir;
  write_image_set(dir.path(), "train", 30, 28, 28, true);
  write_image_set(dir.path(), "t10k", 5, 28, 28, false);
  const MnistData data = load_mnist(dir.path());
  EXPECT_EQ(data.train.count, 30);
  EXPECT_EQ(data.test.count, 5);
}

TEST(MnistLoad, TestImagesOfAnotherSizeRejected) {
  TempDir dir;
  write_image_set(dir.path(), "train", 10, 28, 28, false);
  write_image_set(dir.path(), "t10k", 5, 32, 32, false);
  const std::string message = data_error_message([&] { load_mnist(dir.path()); });
  EXPECT_TRUE(contains(message, "t10k-images-idx3-ubyte: expected 28x28")) << message;
  EXPECT_TRUE(contains(message, "found 32x32")) << message;
}

TEST(MnistLoad, CorruptFileNamesItsPath) {
  TempDir dir;
  write_mnist(dir.path(), false);
  fs::resize_file(dir.path() / "train-images-idx3-ubyte", 16 + 1000);
  const std::string message = data_error_message([&] { load_mnist(dir.path()); });
  EXPECT_TRUE(contains(message, "train-images-idx3-ubyte: file is truncated")) << message;
}

// ---- default_data_dir --------------------------------------------------------------------

TEST(MnistDataDir, FlagComesFirst) {
  ScopedEnv data("GPULAB_DATA", "/env/data");
  EXPECT_EQ(default_data_dir(fs::path("/flag/dir")), fs::path("/flag/dir"));
}

TEST(MnistDataDir, GpulabDataBeforeXdg) {
  ScopedEnv data("GPULAB_DATA", "/env/data");
  ScopedEnv xdg("XDG_DATA_HOME", "/xdg");
  EXPECT_EQ(default_data_dir(std::nullopt), fs::path("/env/data"));
}

TEST(MnistDataDir, XdgBeforeHome) {
  ScopedEnv data("GPULAB_DATA", nullptr);
  ScopedEnv xdg("XDG_DATA_HOME", "/xdg");
  ScopedEnv home("HOME", "/home/learner");
  EXPECT_EQ(default_data_dir(std::nullopt), fs::path("/xdg/gpulab/mnist"));
}

TEST(MnistDataDir, HomeLast) {
  ScopedEnv data("GPULAB_DATA", nullptr);
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home("HOME", "/home/learner");
  EXPECT_EQ(default_data_dir(std::nullopt), fs::path("/home/learner/.local/share/gpulab/mnist"));
}

TEST(MnistDataDir, EmptyValuesAndRelativeXdgAreSkipped) {
  ScopedEnv data("GPULAB_DATA", "");
  ScopedEnv xdg("XDG_DATA_HOME", "relative/path");  // the XDG spec says to ignore it
  ScopedEnv home("HOME", "/home/learner");
  EXPECT_EQ(default_data_dir(fs::path()), fs::path("/home/learner/.local/share/gpulab/mnist"));
}

// A site installs one read-only copy for every user (GPULAB_SYSTEM_DATA stands in for
// /var/lib/gpulab/mnist): read while a user has none of their own, never over theirs.
TEST(MnistDataDir, ASharedCopyServesAUserWhoHasNoneOfTheirOwn) {
  TempDir dir;
  const fs::path shared = dir.path() / "shared", home = dir.path() / "home";
  const fs::path own = home / ".local" / "share" / "gpulab" / "mnist";
  ScopedEnv data("GPULAB_DATA", nullptr);
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home_env("HOME", home.c_str());
  ScopedEnv system("GPULAB_SYSTEM_DATA", shared.c_str());
  EXPECT_EQ(default_data_dir(std::nullopt), own);  // no shared copy yet: the user's folder
  fs::create_directories(shared);
  fs::create_directories(own);
  EXPECT_EQ(default_data_dir(std::nullopt), own);  // a shared folder without MNIST is not one
  write_mnist(shared, true);
  EXPECT_EQ(default_data_dir(std::nullopt), shared);
  EXPECT_EQ(default_data_dir(fs::path("/flag/dir")), fs::path("/flag/dir"));
  {
    ScopedEnv named("GPULAB_DATA", "/env/data");
    EXPECT_EQ(default_data_dir(std::nullopt), fs::path("/env/data"));
  }
  write_mnist(own, false);
  EXPECT_EQ(default_data_dir(std::nullopt), own);
  ScopedEnv none("GPULAB_SYSTEM_DATA", "");  // empty: no shared copy
  fs::remove_all(own);
  EXPECT_EQ(default_data_dir(std::nullopt), own);
}

// The shared copy's folder is one no package owns (purging gpulab leaves it alone), the same
// wherever the program is installed; GPULAB_SYSTEM_DATA names another, empty none.
TEST(MnistDataDir, TheSharedCopyIsInVarLibGpulab) {
  {
    ScopedEnv system("GPULAB_SYSTEM_DATA", nullptr);
    EXPECT_EQ(system_data_dir(), fs::path("/var/lib/gpulab/mnist"));
  }
  {
    ScopedEnv system("GPULAB_SYSTEM_DATA", "/srv/mnist");
    EXPECT_EQ(system_data_dir(), fs::path("/srv/mnist"));
  }
  ScopedEnv system("GPULAB_SYSTEM_DATA", "");
  EXPECT_EQ(system_data_dir(), fs::path());
}

TEST(MnistDataDir, NothingSetIsAnError) {
  ScopedEnv data("GPULAB_DATA", nullptr);
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home("HOME", nullptr);
  ScopedEnv system("GPULAB_SYSTEM_DATA", "");
  EXPECT_TRUE(
      contains(data_error_message([] { default_data_dir(std::nullopt); }), "--data-dir DIR"));
}

// ---- normalize_pixels --------------------------------------------------------------------

TEST(MnistNormalize, ValuesWorkedOutByHand) {
  const uint8_t pixels[3] = {0, 255, 128};
  float out[3];
  normalize_pixels(out, pixels, 3);
  // 0:   (0 - 0.1307) / 0.3081             = -0.4242129...
  // 255: (1 - 0.1307) / 0.3081 = 0.8693 / 0.3081 = 2.8214865...
  // 128: 128 / 255 = 0.5019608; - 0.1307 = 0.3712608; / 0.3081 = 1.2050009...
  EXPECT_NEAR(out[0], -0.4242129, 1e-6);
  EXPECT_NEAR(out[1], 2.8214865, 1e-6);
  EXPECT_NEAR(out[2], 1.2050009, 1e-6);
  // The exact floats of (p / 255.0f - mean) / std, step by step in float: the cross-backend
  // contract is bit-exact, not just close.
  EXPECT_EQ(out[0], -0.424212962f);
  EXPECT_EQ(out[1], 2.82148671f);
  EXPECT_EQ(out[2], 1.20500112f);
}

// ---- split_off ---------------------------------------------------------------------------

ImageSet synthetic_set(int count, int rows, int cols) {
  ImageSet set;
  set.count = count;
  set.rows = rows;
  set.cols = cols;
  set.pixels = image_data(count, rows, cols);
  set.labels = label_data(count);
  return set;
}

TEST(MnistSplit, MovesTheLastImages) {
  ImageSet train = synthetic_set(10, 3, 2);
  const ImageSet validation = split_off(train, 4);
  EXPECT_EQ(train.count, 6);
  EXPECT_EQ(validation.count, 4);
  EXPECT_EQ(validation.rows, 3);
  EXPECT_EQ(validation.cols, 2);
  const Bytes all_pixels = image_data(10, 3, 2);
  const Bytes all_labels = label_data(10);
  EXPECT_EQ(train.pixels, Bytes(all_pixels.begin(), all_pixels.begin() + 36));
  EXPECT_EQ(validation.pixels, Bytes(all_pixels.begin() + 36, all_pixels.end()));
  EXPECT_EQ(train.labels, Bytes(all_labels.begin(), all_labels.begin() + 6));
  EXPECT_EQ(validation.labels, Bytes(all_labels.begin() + 6, all_labels.end()));
}

TEST(MnistSplit, ZeroTakesNothing) {
  ImageSet train = synthetic_set(5, 2, 2);
  const ImageSet validation = split_off(train, 0);
  EXPECT_EQ(validation.count, 0);
  EXPECT_TRUE(validation.pixels.empty());
  EXPECT_EQ(train.count, 5);
  EXPECT_EQ(train.pixels.size(), 20u);
}

TEST(MnistSplit, RejectsCountsOutOfRange) {
  ImageSet train = synthetic_set(5, 2, 2);
  EXPECT_THROW(split_off(train, 5), std::invalid_argument);
  EXPECT_THROW(split_off(train, -1), std::invalid_argument);
  try {
    split_off(train, 7);
  } catch (const std::invalid_argument& error) {
    EXPECT_TRUE(contains(error.what(), "cannot take 7 images from a set of 5")) << error.what();
  }
  EXPECT_EQ(train.count, 5);
}

// ---- shuffled_indices --------------------------------------------------------------------

bool is_permutation_of_range(const std::vector<int32_t>& order, int count) {
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> range(count);
  std::iota(range.begin(), range.end(), 0);
  return sorted == range;
}

TEST(BatchShuffle, IsAPermutation) {
  for (int count : {1, 2, 3, 10, 1000, 60000})
    EXPECT_TRUE(is_permutation_of_range(shuffled_indices(count, 42, 3), count)) << count;
  EXPECT_TRUE(shuffled_indices(0, 42, 0).empty());
}

TEST(BatchShuffle, SameSeedAndEpochGiveTheSameOrder) {
  EXPECT_EQ(shuffled_indices(1000, 7, 2), shuffled_indices(1000, 7, 2));
}

TEST(BatchShuffle, DifferentEpochOrSeedGiveADifferentOrder) {
  const std::vector<int32_t> base = shuffled_indices(1000, 7, 0);
  EXPECT_NE(base, shuffled_indices(1000, 7, 1));
  EXPECT_NE(base, shuffled_indices(1000, 8, 0));
  EXPECT_NE(shuffled_indices(1000, 1, 0), shuffled_indices(1000, 0, 1));
}

TEST(BatchShuffle, PinnedOrder) {
  // The order for a seed is part of what a recorded run means, on every platform. If this
  // changes, every stored loss sequence that used shuffling changes too.
  EXPECT_EQ(shuffled_indices(10, 42, 0), (std::vector<int32_t>{2, 5, 0, 9, 4, 7, 8, 6, 3, 1}));
  EXPECT_EQ(shuffled_indices(10, 42, 1), (std::vector<int32_t>{4, 2, 7, 6, 1, 9, 5, 8, 3, 0}));
}

TEST(BatchShuffle, RoughlyUniform) {
  // Each index should land in each position about equally often; a biased draw or an
  // off-by-one in Fisher-Yates shows up as a skew far beyond this tolerance.
  constexpr int kCount = 5, kTrials = 20000;
  int hits[kCount][kCount] = {};
  for (int epoch = 0; epoch < kTrials; ++epoch) {
    const std::vector<int32_t> order = shuffled_indices(kCount, 1, uint64_t(epoch));
    for (int position = 0; position < kCount; ++position) ++hits[position][order[position]];
  }
  for (auto& row : hits)
    for (int count : row) EXPECT_NEAR(count, kTrials / kCount, kTrials / kCount / 10);
}

// ---- BatchSampler ------------------------------------------------------------------------

std::vector<int32_t> epoch_order(const BatchSampler& sampler) {
  std::vector<int32_t> order;
  for (int b = 0; b < sampler.batches_per_epoch(); ++b) {
    const std::span<const int32_t> batch = sampler.batch(b);
    order.insert(order.end(), batch.begin(), batch.end());
  }
  return order;
}

TEST(BatchSampler, FileOrderWithoutShuffle) {
  BatchSampler sampler(10, 4, false, 123);
  EXPECT_EQ(sampler.count(), 10);
  EXPECT_EQ(sampler.batch_size(), 4);
  const std::vector<int32_t> expected = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(epoch_order(sampler), expected);
  sampler.start_epoch(5);  // no shuffle: every epoch is file order
  EXPECT_EQ(epoch_order(sampler), expected);
}

TEST(BatchSampler, LastPartialBatchIsKept) {
  BatchSampler sampler(10, 4, false, 0);
  ASSERT_EQ(sampler.batches_per_epoch(), 3);
  EXPECT_EQ(sampler.batch(0).size(), 4u);
  EXPECT_EQ(sampler.batch(1).size(), 4u);
  ASSERT_EQ(sampler.batch(2).size(), 2u);
  EXPECT_EQ(sampler.batch(2)[0], 8);
  EXPECT_EQ(sampler.batch(2)[1], 9);
}

TEST(BatchSampler, DropLastDropsThePartialBatch) {
  BatchSampler sampler(10, 4, true, 9, /*drop_last=*/true);
  EXPECT_EQ(sampler.batches_per_epoch(), 2);
  EXPECT_EQ(sampler.batch(1).size(), 4u);
  EXPECT_EQ(BatchSampler(12, 4, false, 0, true).batches_per_epoch(), 3);
}

TEST(BatchSampler, EveryIndexExactlyOncePerShuffledEpoch) {
  BatchSampler sampler(1003, 64, true, 2024);
  ASSERT_EQ(sampler.batches_per_epoch(), 16);
  std::vector<int32_t> previous;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    sampler.start_epoch(epoch);
    const std::vector<int32_t> order = epoch_order(sampler);
    EXPECT_TRUE(is_permutation_of_range(order, 1003)) << "epoch " << epoch;
    EXPECT_EQ(order, shuffled_indices(1003, 2024, epoch));
    EXPECT_NE(order, previous);
    previous = order;
  }
}

TEST(BatchSampler, SameSeedSameOrder) {
  BatchSampler a(500, 32, true, 77), b(500, 32, true, 77);
  a.start_epoch(3);
  b.start_epoch(3);
  EXPECT_EQ(epoch_order(a), epoch_order(b));
  b.start_epoch(4);
  EXPECT_NE(epoch_order(a), epoch_order(b));
}

TEST(BatchSampler, BatchLargerThanTheSet) {
  BatchSampler sampler(3, 128, false, 0);
  ASSERT_EQ(sampler.batches_per_epoch(), 1);
  EXPECT_EQ(sampler.batch(0).size(), 3u);
}

TEST(BatchSampler, InvalidArgumentsAreExplained) {
  auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "(no exception)";
  };
  EXPECT_TRUE(contains(message([] { BatchSampler(10, 0, false, 0); }), "batch size is 0"));
  EXPECT_TRUE(contains(message([] { BatchSampler(0, 4, false, 0); }), "count is 0"));
  EXPECT_TRUE(contains(message([] { BatchSampler(3, 4, false, 0, true); }), "leaves no batch"));
  EXPECT_THROW(BatchSampler(10, 4, false, 0).batch(3), std::out_of_range);
  EXPECT_THROW(BatchSampler(10, 4, false, 0).batch(-1), std::out_of_range);
}

// ---- gather_batch ------------------------------------------------------------------------

TEST(BatchGather, CopiesNormalizedImagesAndLabels) {
  const ImageSet set = synthetic_set(6, 2, 3);
  const std::vector<int32_t> indices = {4, 0, 4};
  std::vector<float> images(indices.size() * 6, -99.0f);
  std::vector<uint8_t> labels(indices.size(), 255);
  gather_batch(images.data(), labels.data(), set, indices);
  for (size_t k = 0; k < indices.size(); ++k) {
    EXPECT_EQ(labels[k], set.labels[indices[k]]);
    for (int p = 0; p < 6; ++p) {
      const uint8_t pixel = pixel_value(indices[k], p);
      EXPECT_EQ(images[k * 6 + p], (pixel / 255.0f - kMnistMean) / kMnistStd);
    }
  }
  // Image 0, pixel 0 is 0: the normalized value of black.
  EXPECT_EQ(images[6], -0.424212962f);
}

TEST(BatchGather, RejectsAnIndexOutsideTheSet) {
  const ImageSet set = synthetic_set(4, 2, 2);
  std::vector<float> images(4);
  uint8_t label = 0;
  const std::vector<int32_t> bad = {4};
  EXPECT_THROW(gather_batch(images.data(), &label, set, bad), std::out_of_range);
}

// ---- augmentation (--preprocess) -----------------------------------------------------------

// A 3 x 3 image with a value of its own at each pixel, row by row: 10, 20, ..., 90.
std::vector<uint8_t> nine_pixels() { return {10, 20, 30, 40, 50, 60, 70, 80, 90}; }

TEST(Augment, AWholePixelShiftMovesTheImageAndFillsWithZero) {
  const std::vector<uint8_t> in = nine_pixels();
  std::vector<float> out(9, -1.0f);
  augment_image(out.data(), in.data(), 3, 3, {0, 1, 0});  // one pixel to the right
  EXPECT_EQ(out, (std::vector<float>{0, 10, 20, 0, 40, 50, 0, 70, 80}));
  augment_image(out.data(), in.data(), 3, 3, {0, 0, -1});  // one pixel up
  EXPECT_EQ(out, (std::vector<float>{40, 50, 60, 70, 80, 90, 0, 0, 0}));
}

TEST(Augment, AHalfPixelShiftAveragesNeighbours) {
  const std::vector<uint8_t> in = nine_pixels();
  std::vector<float> out(9);
  augment_image(out.data(), in.data(), 3, 3, {0, 0.5f, 0});
  // Each pixel is half its own value and half its left neighbour's (0 left of the image).
  EXPECT_EQ(out, (std::vector<float>{5, 15, 25, 20, 45, 55, 35, 75, 85}));
}

TEST(Augment, AQuarterTurnIsClockwiseOnScreen) {
  const std::vector<uint8_t> in = nine_pixels();
  std::vector<float> out(9);
  augment_image(out.data(), in.data(), 3, 3, {90, 0, 0});
  // 10 20 30       70 40 10
  // 40 50 60  ->   80 50 20
  // 70 80 90       90 60 30
  const std::vector<float> turned = {70, 40, 10, 80, 50, 20, 90, 60, 30};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(out[i], turned[i], 1e-3) << "pixel " << i;
}

TEST(Augment, DrawsAreReproducibleWithinTheirRangesAndDifferPerStepAndImage) {
  const ImageAugment a = augment_draw(7, 3, 11);
  const ImageAugment again = augment_draw(7, 3, 11);
  EXPECT_EQ(a.rotation_deg, again.rotation_deg);
  EXPECT_EQ(a.shift_x, again.shift_x);
  EXPECT_EQ(a.shift_y, again.shift_y);
  EXPECT_NE(a.rotation_deg, augment_draw(7, 4, 11).rotation_deg);  // the next step
  EXPECT_NE(a.rotation_deg, augment_draw(7, 3, 12).rotation_deg);  // another image
  EXPECT_NE(a.rotation_deg, augment_draw(8, 3, 11).rotation_deg);  // another seed
  for (uint64_t image = 0; image < 1000; ++image) {
    const ImageAugment d = augment_draw(1, 1, image);
    EXPECT_GE(d.rotation_deg, -kMaxRotationDeg);
    EXPECT_LT(d.rotation_deg, kMaxRotationDeg);
    EXPECT_GE(d.shift_x, -kMaxShiftPixels);
    EXPECT_LT(d.shift_x, kMaxShiftPixels);
    EXPECT_GE(d.shift_y, -kMaxShiftPixels);
    EXPECT_LT(d.shift_y, kMaxShiftPixels);
  }
}

// Each image of a batch is its own draw under (seed, step, index), so a shard of the batch (a
// replica's) gets the same images as the whole batch; then normalized as gather_batch does.
TEST(Augment, ABatchIsEachImageAugmentedByItsIndexThenNormalized) {
  const ImageSet set = synthetic_set(6, 2, 3);
  const std::vector<int32_t> indices = {4, 0, 5};
  std::vector<float> images(indices.size() * 6);
  std::vector<uint8_t> labels(indices.size(), 255);
  augment_batch(images.data(), labels.data(), set, indices, 9, 2);
  for (size_t k = 0; k < indices.size(); ++k) {
    EXPECT_EQ(labels[k], set.labels[indices[k]]);
    std::vector<float> alone(6);
    augment_image(alone.data(), set.pixels.data() + indices[k] * 6, 2, 3,
                  augment_draw(9, 2, uint64_t(indices[k])));
    for (int p = 0; p < 6; ++p)
      EXPECT_EQ(images[k * 6 + p], (alone[p] / 255.0f - kMnistMean) / kMnistStd);
  }
  std::vector<float> shard(6);
  uint8_t label = 0;
  augment_batch(shard.data(), &label, set, std::span(indices).subspan(2), 9, 2);
  EXPECT_TRUE(std::equal(shard.begin(), shard.end(), images.begin() + 12));
  const std::vector<int32_t> bad = {6};
  EXPECT_THROW(augment_batch(images.data(), labels.data(), set, bad, 9, 2), std::out_of_range);
}

// Once: every image augmented with the draw of counter 0 and rounded back to bytes; a black
// image stays black whatever the draw.
TEST(Augment, ASetAugmentedOnceKeepsItsImagesAsRoundedBytes) {
  ImageSet set;
  set.count = 2, set.rows = 3, set.cols = 3;
  set.pixels = nine_pixels();
  set.pixels.resize(18, 0);
  set.labels = {3, 4};
  const ImageSet before = set;
  augment_set(set, 5);
  std::vector<float> expected(9);
  augment_image(expected.data(), before.pixels.data(), 3, 3, augment_draw(5, 0, 0));
  for (int p = 0; p < 9; ++p)
    EXPECT_EQ(set.pixels[p], uint8_t(std::lround(std::clamp(expected[p], 0.0f, 255.0f))))
        << "pixel " << p;
  EXPECT_NE(std::vector<uint8_t>(set.pixels.begin(), set.pixels.begin() + 9), nine_pixels());
  EXPECT_EQ(std::vector<uint8_t>(set.pixels.begin() + 9, set.pixels.end()),
            std::vector<uint8_t>(9, 0));
  EXPECT_EQ(set.labels, before.labels);
}
