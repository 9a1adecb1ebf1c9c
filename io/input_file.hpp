// io, the floor under the engine and the data sets: reading any file a user names as untrusted
// input. Only regular files, up to a stated size that must also fit the memory free now, and
// never an open that blocks (a FIFO). It includes nothing of gpulab's, so both may use it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace gpulab {

// A file that cannot be read as input: the message is one line, naming the file, what is wrong
// and what to do. Callers turn it into their own typed error where they have one.
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Memory the system could give a new program now (MemAvailable), in bytes; 0 when unknown.
int64_t available_memory_bytes();

// "3 GiB", "2.5 MiB", "300 bytes": sizes in messages.
std::string size_text(std::uintmax_t bytes);

// Empty when `bytes` fit the memory free now (or the free memory is unknown), else "needs 48 GiB
// of memory, and this machine has 3 GiB free": for a check before anything is allocated.
std::string memory_shortfall(std::uintmax_t bytes);

// The contents of `path`, which must be a regular file (or a link to one) of at most `limit`
// bytes, and no larger than the memory free now. A FIFO, a device (/dev/zero), a folder or a link
// loop is refused at once, never opened for reading that blocks; a file over the limit is refused
// from its size, before any of it is read. `what` says what the file should be, for messages ("a
// checkpoint"). Returns false when the file does not exist; throws InputFileError otherwise.
bool read_input_file(const std::filesystem::path& path, std::uintmax_t limit,
                     const std::string& what, std::string* text);

// The same, where a missing file is an error too: "<file>: no such file; check the path".
std::string read_input_file(const std::filesystem::path& path, std::uintmax_t limit,
                            const std::string& what);

// A file read in parts, for formats that say in a header how much follows: the header is read
// and checked before the rest is, so a 3 GiB file whose header is wrong is refused at once. Opened
// with read_input_file's checks (a missing file is an error).
class InputFile {
 public:
  InputFile(const std::filesystem::path& path, std::uintmax_t limit, const std::string& what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::uintmax_t size() const { return size_; }
  // `count` bytes from `offset`, after checking that they fit the memory free now; throws
  // InputFileError when the file holds fewer (it shrank) or cannot be read.
  std::string read(std::uintmax_t offset, std::uintmax_t count) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uintmax_t size_ = 0;
};

// Empty when `path` is a regular file (or a link to one) that may be read, else one line saying
// why not: "<file>: no such file; check the path", "<file>: is a FIFO, where <what> is a
// regular file; ...". For checks before the file is read (a window's start).
std::string input_file_problem(const std::filesystem::path& path, const std::string& what);

// Throws InputFileError unless `bytes` (what a file declares it needs) fits the memory free now,
// naming the file, the figure and the free memory. `declared` says what asks for it ("the model
// in its metadata"). Does nothing where the free memory is unknown.
void check_fits_in_memory(const std::filesystem::path& path, std::uintmax_t bytes,
                          const std::string& declared);

}  // namespace gpulab
