// Replacing a file atomically, for every file gpulab writes that a reader may be reading.
#include "engine/base/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "engine/base/errors.hpp"

namespace gpulab {
namespace fs = std::filesystem;

void write_file_atomically(const fs::path& requested, const std::string& text) {
  std::error_code error;
  // Through a symbolic link its target is replaced and the link kept.
  fs::path path = requested;
  if (fs::is_symlink(fs::symlink_status(requested, error))) {
    path = fs::weakly_canonical(requested, error);
    if (error)
      throw RecordError(requested.string() + ": cannot follow the link: " + error.message());
  }
  const fs::file_status status = fs::status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw RecordError(path.string() +
                      ": is not a regular file (a folder, device or FIFO) and is never replaced");
  // Named by process and call, so two writers of one file never share a temporary.
  static std::atomic<int> writes{0};
  const fs::path temporary =
      path.string() + "." + std::to_string(::getpid()) + "-" + std::to_string(writes++) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw RecordError(temporary.string() + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  const bool written = done == text.size() && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ::close(fd);
  if (!written) {
    fs::remove(temporary, error);
    throw RecordError(path.string() + ": write failed: " + std::strerror(saved_errno) +
                      " (is the disk full?)");
  }
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw RecordError(path.string() + ": cannot be replaced: " + error.message());
  }
}

}  // namespace gpulab
