// Loading MNIST-format image sets, finding the data folder, normalizing pixels and splitting
// off a validation set.
#include "datasets/mnist.hpp"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"

namespace gpulab::data {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHowToGetData =
    "run gpulab-cli data fetch (or ./scripts/setup in a clone), or pass --data-dir DIR";

}  // namespace

ImageSet load_image_set(const fs::path& images, const fs::path& labels) {
  IdxArray image_array = read_idx_file(images);
  IdxArray label_array = read_idx_file(labels);

  // Swapped arguments are the likely mistake, so say what each file should look like.
  if (image_array.dims.size() != 3)
    throw DataError(images.string(),
                    "expected images with 3 dimensions (count x rows x cols), found " +
                        std::to_string(image_array.dims.size()) + ": " +
                        dims_text(image_array.dims));
  if (label_array.dims.size() != 1)
    throw DataError(labels.string(), "expected labels with 1 dimension (count), found " +
                                         std::to_string(label_array.dims.size()) + ": " +
                                         dims_text(label_array.dims));
  if (image_array.dims[0] != label_array.dims[0])
    throw DataError(labels.string(), "expected one label per image, found " +
                                         std::to_string(label_array.dims[0]) + " labels for " +
                                         std::to_string(image_array.dims[0]) + " images in " +
                                         images.string());
  for (size_t i = 0; i < label_array.data.size(); ++i) {
    if (label_array.data[i] > 9)
      throw DataError(labels.string(), "label at index " + std::to_string(i) + " is " +
                                           std::to_string(label_array.data[i]) +
                                           ", expected 0 to 9");
  }

  // The IDX caps (count <= 1e8, rows and cols <= 65536) keep these within int.
  ImageSet set;
  set.count = int(image_array.dims[0]);
  set.rows = int(image_array.dims[1]);
  set.cols = int(image_array.dims[2]);
  if (size_t(set.rows) * size_t(set.cols) > size_t(INT32_MAX))
    throw DataError(images.string(), "images of " + std::to_string(set.rows) + "x" +
                                         std::to_string(set.cols) + " pixels are too large");
  set.pixels = std::move(image_array.data);
  set.labels = std::move(label_array.data);
  return set;
}

namespace {

constexpr std::array<const char*, 4> kMnistFileNames = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte"};

// The raw file if present, else the .gz; empty if neither exists.
fs::path find_raw_or_gz(const fs::path& dir, const std::string& file_name) {
  std::error_code error;
  const fs::path raw = dir / file_name;
  if (fs::exists(raw, error)) return raw;
  const fs::path gz = dir / (file_name + ".gz");
  if (fs::exists(gz, error)) return gz;
  return {};
}

}  // namespace

MnistData load_mnist(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    std::string expected;
    for (size_t i = 0; i < kMnistFileNames.size(); ++i)
      expected += std::string(i == 0                           ? ""
                              : i + 1 < kMnistFileNames.size() ? ", "
                                                               : " and ") +
                  kMnistFileNames[i];
    throw DataError(dir.string(),
                    std::string(fs::exists(dir, error) ? "not a folder" : "no such folder") +
                        "; expected it to hold the MNIST files " + expected +
                        " (each raw or .gz); " + kHowToGetData);
  }

  std::array<fs::path, 4> paths;
  std::vector<std::string> missing;
  for (size_t i = 0; i < kMnistFileNames.size(); ++i) {
    paths[i] = find_raw_or_gz(dir, kMnistFileNames[i]);
    if (paths[i].empty()) missing.push_back(kMnistFileNames[i]);
  }
  if (!missing.empty()) {
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
    const std::string looked_for =
        missing.size() == 1 ? missing[0] + " and " + missing[0] + ".gz" : "each raw and with .gz";
    throw DataError(dir.string(),
                    "missing " + names + " (looked for " + looked_for + "); " + kHowToGetData);
  }

  MnistData data;
  data.dir = dir;
  data.train = load_image_set(paths[0], paths[1]);
  data.test = load_image_set(paths[2], paths[3]);
  // A model built for the training images cannot evaluate test images of another size.
  if (data.test.rows != data.train.rows || data.test.cols != data.train.cols)
    throw DataError(paths[2].string(),
                    "expected " + std::to_string(data.train.rows) + "x" +
                        std::to_string(data.train.cols) + " images like the training set, found " +
                        std::to_string(data.test.rows) + "x" + std::to_string(data.test.cols));
  return data;
}

namespace {

// An environment variable's value, or empty when it is unset or empty.
std::string env_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

fs::path default_data_dir(const std::optional<fs::path>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (std::string dir = env_value("GPULAB_DATA"); !dir.empty()) return dir;
  // The XDG spec says to ignore a relative XDG_DATA_HOME.
  fs::path user;
  if (fs::path xdg = env_value("XDG_DATA_HOME"); xdg.is_absolute())
    user = xdg / "gpulab" / "mnist";
  else if (std::string home = env_value("HOME"); !home.empty())
    user = fs::path(home) / ".local" / "share" / "gpulab" / "mnist";
  // A copy a site installed for every user, read while the user has none of their own (and
  // never fetched into: a user's fetch goes to their own folder).
  const fs::path shared = system_data_dir();
  if (!shared.empty() && (user.empty() || !mnist_present(user)) && mnist_present(shared))
    return shared;
  if (!user.empty()) return user;
  throw DataError("(data folder)",
                  "cannot choose one: --data-dir, GPULAB_DATA, XDG_DATA_HOME and HOME are all "
                  "unset; pass --data-dir DIR");
}

fs::path system_data_dir() {
  // GPULAB_SYSTEM_DATA (tests, or a site's own layout), else /var/lib/gpulab/mnist: a folder no
  // package owns, so removing or purging gpulab leaves a site's copy alone and warns of nothing.
  if (const char* named = std::getenv("GPULAB_SYSTEM_DATA")) return named;
  return kSharedDataDir;
}

void normalize_pixels(float* out, const uint8_t* pixels, size_t n) {
  // Written exactly as the contract says (divide, subtract, divide; no reciprocal multiply)
  // so the CUDA backend and PyTorch produce the same floats.
  for (size_t i = 0; i < n; ++i)
    out[i] = (static_cast<float>(pixels[i]) / 255.0f - kMnistMean) / kMnistStd;
}

ImageSet split_off(ImageSet& set, int count) {
  if (count < 0 || count >= set.count)
    throw std::invalid_argument("split_off: cannot take " + std::to_string(count) +
                                " images from a set of " + std::to_string(set.count) +
                                "; expected 0 <= count < " + std::to_string(set.count));
  const int kept = set.count - count;
  const size_t image_size = size_t(set.image_size());

  ImageSet taken;
  taken.count = count;
  taken.rows = set.rows;
  taken.cols = set.cols;
  taken.pixels.assign(set.pixels.begin() + kept * image_size, set.pixels.end());
  taken.labels.assign(set.labels.begin() + kept, set.labels.end());

  set.count = kept;
  set.pixels.resize(kept * image_size);
  set.labels.resize(kept);
  return taken;
}

}  // namespace gpulab::data
