// Reading a named file as untrusted input: regular files only, sizes checked before reading.
#include "io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace gpulab {
namespace fs = std::filesystem;

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string open_problem(const fs::path& path, int error) {
  const std::string why = error == ELOOP ? "a symbolic link that loops" : std::strerror(error);
  return path.string() + ": cannot be read: " + why;
}

std::string kind_problem(const fs::path& path, mode_t mode, const std::string& what) {
  return path.string() + ": is " + file_kind(mode) + ", where " + what +
         " is a regular file; give the path of the file itself";
}

std::string missing_problem(const fs::path& path) {
  return path.string() + ": no such file; check the path";
}

// Opens without blocking (a FIFO would otherwise wait for a writer) and checks what the file is
// and its size; -1 when it does not exist.
int open_checked(const fs::path& path, std::uintmax_t limit, const std::string& what,
                 std::uintmax_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    throw InputFileError(open_problem(path, errno));
  }
  struct stat status {};
  std::string problem;
  if (::fstat(fd, &status) != 0)
    problem = path.string() + ": cannot be read: " + std::strerror(errno);
  else if (!S_ISREG(status.st_mode))
    problem = kind_problem(path, status.st_mode, what);
  else if (std::uintmax_t(status.st_size) > limit)
    problem = path.string() + ": " + size_text(std::uintmax_t(status.st_size)) +
              " is larger than " + what + " may be (" + size_text(limit) +
              "); check that this is the right file";
  if (!problem.empty()) {
    ::close(fd);
    throw InputFileError(problem);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  *size = std::uintmax_t(status.st_size);
  return fd;
}

}  // namespace

int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

std::string size_text(std::uintmax_t bytes) {
  // Whole where it is whole ("16 MiB"), else to a tenth ("3.0 GiB" for 3 GiB less a header).
  for (const auto& [shift, unit] : {std::pair{30, " GiB"}, std::pair{20, " MiB"}}) {
    const std::uintmax_t one = std::uintmax_t(1) << shift;
    if (bytes < one) continue;
    if (bytes % one == 0) return std::to_string(bytes / one) + unit;
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%s", double(bytes) / double(one), unit);
    return text;
  }
  return std::to_string(bytes) + " bytes";
}

std::string memory_shortfall(std::uintmax_t bytes) {
  const int64_t available = available_memory_bytes();
  if (available <= 0 || bytes <= std::uintmax_t(available)) return {};
  return "needs " + size_text(bytes) + " of memory, and this machine has " +
         size_text(std::uintmax_t(available)) + " free";
}

void check_fits_in_memory(const fs::path& path, std::uintmax_t bytes, const std::string& declared) {
  const std::string shortfall = memory_shortfall(bytes);
  if (!shortfall.empty())
    throw InputFileError(path.string() + ": " + declared + " " + shortfall +
                         "; give a smaller file or free some memory");
}

std::string input_file_problem(const fs::path& path, const std::string& what) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    return errno == ENOENT ? missing_problem(path) : open_problem(path, errno);
  if (!S_ISREG(status.st_mode)) return kind_problem(path, status.st_mode, what);
  return {};
}

bool read_input_file(const fs::path& path, std::uintmax_t limit, const std::string& what,
                     std::string* text) {
  std::uintmax_t size = 0;
  const int fd = open_checked(path, limit, what, &size);
  if (fd < 0) return false;
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  check_fits_in_memory(path, size, "reading it");
  text->clear();
  text->reserve(size_t(size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputFileError(path.string() + ": cannot be read: " + std::strerror(errno));
    if (n == 0) break;
    // A file still growing (a live run) is read up to the limit, never without end.
    if (text->size() + size_t(n) > limit)
      throw InputFileError(path.string() + ": grew past " + size_text(limit) + " while being read");
    text->append(buffer, size_t(n));
  }
  return true;
}

std::string read_input_file(const fs::path& path, std::uintmax_t limit, const std::string& what) {
  std::string text;
  if (!read_input_file(path, limit, what, &text)) throw InputFileError(missing_problem(path));
  return text;
}

InputFile::InputFile(const fs::path& path, std::uintmax_t limit, const std::string& what)
    : path_(path) {
  fd_ = open_checked(path, limit, what, &size_);
  if (fd_ < 0) throw InputFileError(missing_problem(path));
}

InputFile::~InputFile() { ::close(fd_); }

std::string InputFile::read(std::uintmax_t offset, std::uintmax_t count) const {
  if (offset > size_ || count > size_ - offset)
    throw InputFileError(path_.string() + ": " + std::to_string(count) + " bytes at offset " +
                         std::to_string(offset) + " lie past its end (" + size_text(size_) +
                         "); the file is truncated");
  check_fits_in_memory(path_, count, "reading it");
  std::string text(size_t(count), '\0');
  std::uintmax_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(fd_, text.data() + done, size_t(count - done), off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputFileError(path_.string() + ": cannot be read: " + std::strerror(errno));
    if (n == 0)
      throw InputFileError(path_.string() + ": shrank while being read; the file is truncated");
    done += std::uintmax_t(n);
  }
  return text;
}

}  // namespace gpulab
