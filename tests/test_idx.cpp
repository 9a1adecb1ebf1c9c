// Tests for the IDX parser and file reader: valid files raw and gzipped, and every way a file
// can be wrong (truncated, bad magic, bad type, bad dimensions, overflow, corrupt gzip, missing).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "datasets/idx.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using gpulab::data::DataError;
using gpulab::data::IdxArray;
using gpulab::data::parse_idx;
using gpulab::data::read_file_bytes;
using gpulab::data::read_idx_file;

namespace {

using Bytes = std::vector<uint8_t>;

void append_big_endian(Bytes& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(value >> shift));
}

// An IDX file with the given magic and header dims followed by `data`, with no consistency
// checks, so tests can build broken files as easily as good ones.
Bytes idx_bytes(uint32_t magic, const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes bytes;
  append_big_endian(bytes, magic);
  for (uint32_t dim : dims) append_big_endian(bytes, dim);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

uint32_t ubyte_magic(size_t dim_count) { return 0x00000800u | uint32_t(dim_count); }

// A well-formed unsigned byte IDX file with a recognizable, non-repeating-looking pattern.
Bytes valid_idx(const std::vector<uint32_t>& dims) {
  size_t count = 1;
  for (uint32_t dim : dims) count *= dim;
  Bytes data(count);
  for (size_t i = 0; i < count; ++i) data[i] = uint8_t((i * 131 + (i >> 7) * 17) % 251);
  return idx_bytes(ubyte_magic(dims.size()), dims, data);
}

Bytes gzip(const Bytes& raw) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer, as gzip(1) writes.
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  Bytes out(deflateBound(&stream, uLong(raw.size())) + 32);
  stream.next_in = const_cast<Bytef*>(raw.data());
  stream.avail_in = uInt(raw.size());
  stream.next_out = out.data();
  stream.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

using gpulab::test::TempDir;

fs::path write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

// Runs `action`, expects a DataError for `file` whose message holds every one of `words`.
void expect_data_error(const std::function<void()>& action, const std::string& file,
                       std::initializer_list<std::string> words) {
  try {
    action();
    ADD_FAILURE() << "expected a DataError for " << file;
  } catch (const DataError& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(message.rfind(file + ": ", 0), 0u)
        << "message should start with the file: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    for (const std::string& word : words)
      EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' not in: " << message;
  }
}

void expect_parse_error(const Bytes& bytes, std::initializer_list<std::string> words) {
  const std::string name = "t10k-images-idx3-ubyte";
  expect_data_error([&] { parse_idx(bytes, name); }, name, words);
}

}  // namespace

// ---- parse_idx ---------------------------------------------------------------------------

TEST(IdxParse, ValidImagesFile) {
  const Bytes bytes = valid_idx({3, 4, 5});
  const IdxArray array = parse_idx(bytes, "images");
  EXPECT_EQ(array.type_code, 0x08);
  EXPECT_EQ(array.dims, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(array.element_count(), 60u);
  EXPECT_EQ(array.data, Bytes(bytes.begin() + 16, bytes.end()));
}

TEST(IdxParse, ValidLabelsAndFourDimensionalFiles) {
  EXPECT_EQ(parse_idx(valid_idx({7}), "labels").dims, (std::vector<uint32_t>{7}));
  const IdxArray four = parse_idx(valid_idx({2, 3, 1, 4}), "four");
  EXPECT_EQ(four.dims, (std::vector<uint32_t>{2, 3, 1, 4}));
  EXPECT_EQ(four.data.size(), 24u);
}

TEST(IdxParse, DefaultArrayHasNoElements) { EXPECT_EQ(IdxArray{}.element_count(), 0u); }

TEST(IdxParse, EmptyInputIsTruncated) {
  expect_parse_error({}, {"truncated", "4-byte magic", "found 0"});
}

TEST(IdxParse, HeaderCutInMagic) {
  expect_parse_error({0x00, 0x00, 0x08}, {"truncated", "found 3"});
}

TEST(IdxParse, HeaderCutInDimensions) {
  Bytes bytes = valid_idx({10, 28, 28});
  bytes.resize(10);  // magic, first dim and half of the second
  expect_parse_error(bytes, {"truncated", "3 dimensions", "needs 16 bytes", "found 10"});
}

TEST(IdxParse, DataCut) {
  Bytes bytes = valid_idx({10000, 28, 28});
  bytes.resize(16 + 1234);
  expect_parse_error(bytes, {"file is truncated", "header says 10000x28x28 = 7840000 bytes of data",
                             "found 1234"});
}

TEST(IdxParse, HeaderOnlyIsTruncated) {
  Bytes bytes = valid_idx({5, 2, 2});
  bytes.resize(16);
  expect_parse_error(bytes, {"truncated", "5x2x2 = 20", "found 0"});
}

TEST(IdxParse, DataTooLong) {
  Bytes bytes = valid_idx({3, 2, 2});
  bytes.push_back(0);
  expect_parse_error(bytes, {"extra data", "3x2x2 = 12 bytes", "found 13"});
}

TEST(IdxParse, WrongMagic) {
  Bytes bytes = valid_idx({3, 2, 2});
  bytes[0] = 0x12;
  bytes[1] = 0x34;
  expect_parse_error(bytes, {"not an IDX file", "0x12340803", "two zero bytes"});
}

TEST(IdxParse, TextFileIsNotIdx) {
  const std::string text = "<html>not found</html>";
  expect_parse_error(Bytes(text.begin(), text.end()), {"not an IDX file", "magic number"});
}

TEST(IdxParse, GzipBytesAreNamedAsSuch) {
  expect_parse_error(gzip(valid_idx({2})), {"gzip-compressed", "expected an IDX header"});
}

TEST(IdxParse, FloatTypeCodeRejected) {
  const Bytes bytes = idx_bytes(0x00000D01, {2}, Bytes(8));
  expect_parse_error(bytes, {"unsupported data type 0x0D", "32-bit float", "0x08 (unsigned byte)"});
}

TEST(IdxParse, UnknownTypeCodeRejected) {
  expect_parse_error(idx_bytes(0x00000501, {2}, Bytes(2)),
                     {"unknown data type 0x05", "0x00000501", "expected 0x08"});
}

TEST(IdxParse, ZeroDimensionsRejected) {
  expect_parse_error(idx_bytes(0x00000800, {}, Bytes(1)),
                     {"expected 1 to 4 dimensions", "found 0"});
}

TEST(IdxParse, FiveDimensionsRejected) {
  expect_parse_error(idx_bytes(0x00000805, {1, 1, 1, 1, 1}, Bytes(1)),
                     {"expected 1 to 4 dimensions", "found 5"});
}

TEST(IdxParse, ZeroSizedDimensionRejected) {
  expect_parse_error(idx_bytes(ubyte_magic(3), {4, 0, 28}, {}),
                     {"dimension 1 is 0", "4x0x28", "at least 1"});
}

TEST(IdxParse, DimensionsOverTheCapRejected) {
  expect_parse_error(idx_bytes(ubyte_magic(3), {10, 65537, 1}, {}),
                     {"dimension 1 is 65537", "at most 65536"});
  expect_parse_error(idx_bytes(ubyte_magic(1), {100'000'001}, {}),
                     {"dimension 0 is 100000001", "at most 100000000"});
}

TEST(IdxParse, HugeDimensionsThatOverflowSizeT) {
  // Every dimension is within its cap, but the product (about 2.8e22) does not fit 64 bits.
  expect_parse_error(idx_bytes(ubyte_magic(4), {100'000'000, 65536, 65536, 65536}, Bytes(64)),
                     {"100000000x65536x65536x65536", "overflows"});
}

TEST(IdxParse, LargeButRepresentableHeaderIsTruncatedNotAllocated) {
  // 1e8 * 65536 * 65536 fits in 64 bits: the parser must compare, not try to allocate it.
  expect_parse_error(idx_bytes(ubyte_magic(3), {100'000'000, 65536, 65536}, Bytes(3)),
                     {"truncated", "found 3"});
}

// ---- files: raw, gzip, missing, corrupt --------------------------------------------------

TEST(IdxFile, ReadsRawAndGzipToTheSameArray) {
  TempDir dir;
  const Bytes bytes = valid_idx({50, 28, 28});
  const fs::path raw = write_file(dir.path() / "train-images-idx3-ubyte", bytes);
  const fs::path gz = write_file(dir.path() / "train-images-idx3-ubyte.gz", gzip(bytes));
  ASSERT_LT(fs::file_size(gz), fs::file_size(raw));

  EXPECT_EQ(read_file_bytes(raw), bytes);
  EXPECT_EQ(read_file_bytes(gz), bytes);
  const IdxArray from_raw = read_idx_file(raw);
  const IdxArray from_gz = read_idx_file(gz);
  EXPECT_EQ(from_raw.dims, (std::vector<uint32_t>{50, 28, 28}));
  EXPECT_EQ(from_gz.dims, from_raw.dims);
  EXPECT_EQ(from_gz.data, from_raw.data);
}

TEST(IdxFile, ReadsConcatenatedGzipMembers) {
  // `cat a.gz b.gz` is a valid gzip file whose content is a followed by b.
  TempDir dir;
  const Bytes whole = valid_idx({4, 3, 3});
  const Bytes first(whole.begin(), whole.begin() + 20), second(whole.begin() + 20, whole.end());
  Bytes joined = gzip(first);
  const Bytes tail = gzip(second);
  joined.insert(joined.end(), tail.begin(), tail.end());
  EXPECT_EQ(read_idx_file(write_file(dir.path() / "joined.gz", joined)).data,
            Bytes(whole.begin() + 16, whole.end()));
}

TEST(IdxFile, MissingFile) {
  TempDir dir;
  const fs::path path = dir.path() / "t10k-labels-idx1-ubyte";
  expect_data_error([&] { read_idx_file(path); }, path.string(), {"no such file"});
}

TEST(IdxFile, DirectoryIsNotAFile) {
  TempDir dir;
  expect_data_error([&] { read_idx_file(dir.path()); }, dir.path().string(),
                    {"is a folder, where an IDX data file is a regular file"});
}

TEST(IdxFile, TruncatedRawFileNamesThePath) {
  TempDir dir;
  Bytes bytes = valid_idx({20, 28, 28});
  bytes.resize(bytes.size() - 100);
  const fs::path path = write_file(dir.path() / "t10k-images-idx3-ubyte", bytes);
  expect_data_error([&] { read_idx_file(path); }, path.string(),
                    {"file is truncated", "20x28x28 = 15680", "found 15580"});
}

TEST(IdxFile, TruncatedIdxInsideValidGzip) {
  TempDir dir;
  Bytes bytes = valid_idx({20, 28, 28});
  bytes.resize(bytes.size() - 1);
  const fs::path path = write_file(dir.path() / "t10k-images-idx3-ubyte.gz", gzip(bytes));
  expect_data_error([&] { read_idx_file(path); }, path.string(),
                    {"file is truncated", "found 15679"});
}

TEST(IdxFile, CorruptGzipBytesInTheMiddle) {
  TempDir dir;
  Bytes compressed = gzip(valid_idx({200, 28, 28}));
  ASSERT_GT(compressed.size(), 200u);
  for (size_t i = compressed.size() / 2; i < compressed.size() / 2 + 8; ++i) compressed[i] ^= 0xA5;
  const fs::path path = write_file(dir.path() / "train-images-idx3-ubyte.gz", compressed);
  expect_data_error([&] { read_idx_file(path); }, path.string(), {"corrupt gzip data: "});
}

TEST(IdxFile, CorruptGzipChecksum) {
  // Flipping the stored CRC leaves the deflate stream intact: only the check can catch it.
  TempDir dir;
  Bytes compressed = gzip(valid_idx({30, 28, 28}));
  compressed[compressed.size() - 8] ^= 0xFF;
  const fs::path path = write_file(dir.path() / "images.gz", compressed);
  expect_data_error([&] { read_idx_file(path); }, path.string(),
                    {"corrupt gzip data", "incorrect data check"});
}

TEST(IdxFile, TruncatedGzip) {
  TempDir dir;
  Bytes compressed = gzip(valid_idx({100, 28, 28}));
  compressed.resize(compressed.size() / 2);
  const fs::path path = write_file(dir.path() / "train-images-idx3-ubyte.gz", compressed);
  expect_data_error([&] { read_idx_file(path); }, path.string(),
                    {"corrupt gzip data", "unexpected end"});
}

TEST(IdxFile, GzipCutInItsTrailer) {
  TempDir dir;
  Bytes compressed = gzip(valid_idx({10}));
  compressed.resize(compressed.size() - 3);
  const fs::path path = write_file(dir.path() / "labels.gz", compressed);
  expect_data_error([&] { read_idx_file(path); }, path.string(), {"corrupt gzip data"});
}

TEST(IdxFile, GzipWithTrailingGarbage) {
  TempDir dir;
  Bytes compressed = gzip(valid_idx({10}));
  compressed.insert(compressed.end(), {'j', 'u', 'n', 'k'});
  const fs::path path = write_file(dir.path() / "labels.gz", compressed);
  expect_data_error([&] { read_idx_file(path); }, path.string(),
                    {"corrupt gzip data", "4 bytes of unexpected data"});
}

TEST(IdxFile, GzipBombRefused) {
  // 4 MiB of zeros compress to a few KiB; with a 1 MiB cap the reader must stop, not allocate.
  TempDir dir;
  const fs::path path = write_file(dir.path() / "bomb.gz", gzip(Bytes(4 << 20)));
  ASSERT_LT(fs::file_size(path), 64u << 10);
  expect_data_error([&] { read_file_bytes(path, 1 << 20); }, path.string(),
                    {"decompressed data is larger than the 1 MiB limit"});
}

TEST(IdxFile, GzipExactlyAtTheCapIsAccepted) {
  TempDir dir;
  const fs::path path = write_file(dir.path() / "exact.gz", gzip(Bytes(1 << 20, 7)));
  EXPECT_EQ(read_file_bytes(path, 1 << 20).size(), size_t{1} << 20);
}

TEST(IdxFile, RawFileOverTheCapRefused) {
  TempDir dir;
  const fs::path path = write_file(dir.path() / "big", Bytes(5000, 1));
  EXPECT_EQ(read_file_bytes(path, 5000).size(), 5000u);
  expect_data_error([&] { read_file_bytes(path, 4999); }, path.string(),
                    {"5000 bytes is larger than an IDX data file may be (4999 bytes)"});
}
