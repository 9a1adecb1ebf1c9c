// IDX files (the format of MNIST and Fashion-MNIST): bytes in, a checked array out, and every
// problem reported as a DataError naming the file, what was expected and what was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab::data {

// Every problem with a data file: the message is "<file>: <what was expected, what was found>".
class DataError : public std::runtime_error {
 public:
  DataError(const std::string& file, const std::string& problem);
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Only unsigned byte data (type code 0x08) is accepted: MNIST and Fashion-MNIST are all bytes.
inline constexpr uint8_t kIdxUnsignedByte = 0x08;

// Limits that keep a hostile header from asking for absurd allocations.
inline constexpr uint32_t kIdxMaxFirstDim = 100'000'000;       // items (images, labels)
inline constexpr uint32_t kIdxMaxOtherDim = 65'536;            // rows, cols, channels
inline constexpr size_t kIdxMaxFileBytes = size_t{512} << 20;  // also caps gunzipped output

struct IdxArray {
  uint8_t type_code = kIdxUnsignedByte;
  std::vector<uint32_t> dims;    // outermost first, as in the file
  std::vector<uint8_t> data;     // row-major, element_count() bytes
  size_t element_count() const;  // product of dims; 0 when there are none
};

// Parses a whole IDX file held in memory (not gzipped). `name` only goes into error messages.
IdxArray parse_idx(std::span<const uint8_t> bytes, const std::string& name);

// Reads a file, gunzipping it when it starts with the gzip magic 1f 8b. Refuses files (and
// decompressed data) over max_bytes, so a gzip bomb cannot exhaust memory, and anything but a
// regular file (a FIFO is never waited on).
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path,
                                     size_t max_bytes = kIdxMaxFileBytes);

// Inflates one or more concatenated gzip members; throws DataError (corrupt, truncated, or over
// max_bytes once inflated) naming `name`.
std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name,
                            size_t max_bytes = kIdxMaxFileBytes);

// read_file_bytes + parse_idx, with the path as the name in messages.
IdxArray read_idx_file(const std::filesystem::path& path);

// An array's shape as messages print it: "60000x28x28".
std::string dims_text(const std::vector<uint32_t>& dims);

}  // namespace gpulab::data
