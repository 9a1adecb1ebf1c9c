// What the tests of gpulab's outputs need: a full disk (a small tmpfs mounted over a fresh folder,
// filled to the last byte; mounting needs root where the container allows it, elsewhere
// skip_reason() says why and the test skips with it), and a snapshot of a folder's files to show
// that nothing that existed before changed.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace gpulab::test {

class SmallDisk {
 public:
  explicit SmallDisk(size_t bytes = 256 * 1024) {
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
      skip_reason_ = std::string("cannot mount a small tmpfs to fill (") + std::strerror(errno) +
                     "): full-disk tests need root where mount is allowed";
    else
      mounted_ = true;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  const std::string& skip_reason() const { return skip_reason_; }
  const std::filesystem::path& path() const { return dir_.path(); }

  // Takes every byte left with one file, so the next write fails with ENOSPC; free() gives
  // them back.
  void fill() {
    const int fd = ::open(filler().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    const std::vector<char> block(4096, 'x');
    for (ssize_t n = 1; n > 0;) n = ::write(fd, block.data(), block.size());
    for (ssize_t n = 1; n > 0;) n = ::write(fd, block.data(), 1);  // the last partial block
    ::close(fd);
  }
  void free() {
    std::error_code ignored;
    std::filesystem::remove(filler(), ignored);
  }

 private:
  std::filesystem::path filler() const { return dir_.path() / ".filler"; }

  TempDir dir_;
  bool mounted_ = false;
  std::string skip_reason_;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;  // whole: a character at a time is slow under the sanitizers
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

// Every file under `dir` (links as links: "-> target"), by its path below `dir`, with its bytes.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::string name = std::filesystem::relative(it->path(), dir, error).string();
    if (it->is_symlink(error))
      files[name] = "-> " + std::filesystem::read_symlink(it->path(), error).string();
    else if (it->is_regular_file(error))
      files[name] = read_text(it->path());
  }
  return files;
}

}  // namespace gpulab::test
