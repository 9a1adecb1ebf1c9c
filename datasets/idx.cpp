// IDX parsing and file reading with transparent gunzip. Every check names the file, what the
// header or format promised, and what was actually there.
#include "datasets/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <limits>
#include <memory>

#include "io/input_file.hpp"

namespace gpulab::data {

namespace fs = std::filesystem;

DataError::DataError(const std::string& file, const std::string& problem)
    : std::runtime_error(file + ": " + problem), file_(file) {}

size_t IdxArray::element_count() const {
  if (dims.empty()) return 0;
  size_t count = 1;
  for (uint32_t dim : dims) count *= dim;
  return count;
}

namespace {

std::string hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*X", digits, static_cast<unsigned>(value));
  return text;
}

std::string size_text(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + "-byte";
}

uint32_t read_big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

bool starts_with_gzip_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// The type codes the IDX format defines, so a float file is reported as such, not as garbage.
const char* idx_type_name(uint8_t type_code) {
  switch (type_code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "16-bit integer";
    case 0x0C:
      return "32-bit integer";
    case 0x0D:
      return "32-bit float";
    case 0x0E:
      return "64-bit float";
    default:
      return nullptr;
  }
}

}  // namespace

IdxArray parse_idx(std::span<const uint8_t> bytes, const std::string& name) {
  if (starts_with_gzip_magic(bytes))
    throw DataError(name,
                    "expected an IDX header, found gzip-compressed data "
                    "(read_idx_file decompresses it)");
  if (bytes.size() < 4)
    throw DataError(name, "file is truncated: expected a 4-byte magic number, found " +
                              std::to_string(bytes.size()) + " bytes");

  const uint32_t magic = read_big_endian_u32(bytes.data());
  if (bytes[0] != 0 || bytes[1] != 0)
    throw DataError(name, "not an IDX file: magic number " + hex(magic, 8) +
                              ", expected 0x0000TTNN (two zero bytes, type code, dimension count)");

  const uint8_t type_code = bytes[2];
  if (type_code != kIdxUnsignedByte) {
    const char* type_name = idx_type_name(type_code);
    throw DataError(name,
                    std::string(type_name ? "unsupported" : "unknown") + " data type " +
                        hex(type_code, 2) + (type_name ? std::string(" (") + type_name + ")" : "") +
                        " in magic number " + hex(magic, 8) + ", expected 0x08 (unsigned byte)");
  }

  const int dim_count = bytes[3];
  if (dim_count < 1 || dim_count > 4)
    throw DataError(name, "expected 1 to 4 dimensions, found " + std::to_string(dim_count) +
                              " (magic number " + hex(magic, 8) + ")");

  const size_t header_bytes = 4 + 4 * size_t(dim_count);
  if (bytes.size() < header_bytes)
    throw DataError(name, "file is truncated: a header with " + std::to_string(dim_count) +
                              " dimensions needs " + std::to_string(header_bytes) +
                              " bytes, found " + std::to_string(bytes.size()));

  IdxArray array;
  array.type_code = type_code;
  array.dims.resize(dim_count);
  for (int i = 0; i < dim_count; ++i) array.dims[i] = read_big_endian_u32(&bytes[4 + 4 * i]);

  size_t element_count = 1;
  for (int i = 0; i < dim_count; ++i) {
    const uint32_t dim = array.dims[i];
    const uint32_t limit = i == 0 ? kIdxMaxFirstDim : kIdxMaxOtherDim;
    if (dim == 0)
      throw DataError(name, "dimension " + std::to_string(i) + " is 0 in header " +
                                dims_text(array.dims) + ", expected at least 1");
    if (dim > limit)
      throw DataError(name, "dimension " + std::to_string(i) + " is " + std::to_string(dim) +
                                " in header " + dims_text(array.dims) + ", expected at most " +
                                std::to_string(limit));
    // Checked before multiplying: the caps alone still allow products past 2^64.
    if (element_count > std::numeric_limits<size_t>::max() / dim)
      throw DataError(name, "header says " + dims_text(array.dims) +
                                " elements, which overflows a 64-bit size");
    element_count *= dim;
  }

  const size_t data_bytes = bytes.size() - header_bytes;
  if (data_bytes != element_count)
    throw DataError(
        name,
        std::string(data_bytes < element_count ? "file is truncated" : "file has extra data") +
            ": header says " + dims_text(array.dims) + " = " + std::to_string(element_count) +
            " bytes of data, found " + std::to_string(data_bytes));

  array.data.assign(bytes.begin() + header_bytes, bytes.end());
  return array;
}

// The output grows by doubling up to max_bytes + 1, one byte past the cap, so "exactly at the
// cap" and "over it" differ.
std::vector<uint8_t> gunzip(std::span<const uint8_t> compressed, const std::string& name,
                            size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK)  // 15 + 32: gzip or zlib header, auto-detected
    throw DataError(name, "cannot start zlib inflate");
  std::unique_ptr<z_stream, int (*)(z_streamp)> stream_guard(&stream, inflateEnd);

  auto corrupt = [&](const std::string& reason) {
    return DataError(name, "corrupt gzip data: " + reason);
  };

  // The gzip trailer holds the size mod 2^32: a good first guess for one allocation, but a
  // damaged trailer may claim anything, so it is also held to what deflate can possibly
  // produce (at most 1032 bytes out per byte in) and never trusted as a bound.
  constexpr size_t kDeflateMaxRatio = 1032;
  size_t capacity = size_t{1} << 16;
  if (compressed.size() >= 18) {
    const uint8_t* trailer = compressed.data() + compressed.size() - 4;
    const size_t size_hint = uint32_t{trailer[0]} | (uint32_t{trailer[1]} << 8) |
                             (uint32_t{trailer[2]} << 16) | (uint32_t{trailer[3]} << 24);
    const size_t possible = std::min(compressed.size(), max_bytes) * kDeflateMaxRatio;
    capacity = std::clamp(std::min(size_hint, possible) + 1, capacity, max_bytes + 1);
  }
  std::vector<uint8_t> out(capacity);

  size_t in_pos = 0, out_pos = 0;
  for (;;) {
    if (stream.avail_in == 0 && in_pos < compressed.size()) {
      stream.next_in = const_cast<Bytef*>(compressed.data() + in_pos);
      stream.avail_in = uInt(std::min<size_t>(compressed.size() - in_pos, UINT_MAX));
    }
    if (out_pos == out.size()) {
      if (out.size() > max_bytes)
        throw DataError(name, "decompressed data is larger than the " + size_text(max_bytes) +
                                  " limit (a gzip bomb, or not an MNIST file)");
      out.resize(std::min(out.size() * 2, max_bytes + 1));
    }
    const uInt out_room = uInt(std::min<size_t>(out.size() - out_pos, UINT_MAX));
    stream.next_out = out.data() + out_pos;
    stream.avail_out = out_room;
    const uInt in_before = stream.avail_in;

    const int rc = inflate(&stream, Z_NO_FLUSH);
    in_pos += in_before - stream.avail_in;
    out_pos += out_room - stream.avail_out;

    if (rc == Z_STREAM_END) {
      if (in_pos == compressed.size()) break;
      // gzip(1) writes concatenated members for appended files; anything else is damage.
      if (!starts_with_gzip_magic(compressed.subspan(in_pos)))
        throw corrupt(std::to_string(compressed.size() - in_pos) +
                      " bytes of unexpected data after the end of the compressed stream");
      inflateReset(&stream);
      stream.avail_in = 0;  // refilled from in_pos at the top of the loop
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      // No progress: fine if only the output was full, truncation if the input ran out.
      if (stream.avail_out == 0) continue;
      throw corrupt("unexpected end of compressed data after " + std::to_string(in_pos) +
                    " bytes (file truncated?)");
    }
    if (rc == Z_MEM_ERROR) throw DataError(name, "out of memory while decompressing");
    throw corrupt(stream.msg ? stream.msg : "zlib error " + std::to_string(rc));
  }
  if (out_pos > max_bytes)
    throw DataError(name, "decompressed data is larger than the " + size_text(max_bytes) +
                              " limit (a gzip bomb, or not an MNIST file)");
  out.resize(out_pos);
  return out;
}

std::vector<uint8_t> read_file_bytes(const fs::path& path, size_t max_bytes) {
  const std::string name = path.string();
  // Through the one reader of input files: a FIFO, a device or a folder is refused at once, never
  // waited on, and a file over the cap from its size, before it is read.
  std::string text;
  try {
    text = read_input_file(path, max_bytes, "an IDX data file");
  } catch (const InputFileError& e) {
    const std::string what = e.what(), prefix = name + ": ";
    throw DataError(name, what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
  std::vector<uint8_t> bytes(text.begin(), text.end());
  text = std::string();
  if (starts_with_gzip_magic(bytes)) return gunzip(bytes, name, max_bytes);
  return bytes;
}

IdxArray read_idx_file(const fs::path& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_idx(bytes, path.string());
}

std::string dims_text(const std::vector<uint32_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(dims[i]);
  }
  return text;
}

}  // namespace gpulab::data
