// Replacing files and folders atomically, for every file gpulab writes that a reader may be
// reading, and so that a full disk or a kill never leaves a file cut short in its place.
#include "engine/base/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "engine/base/errors.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

// Named by process and call, so two writers of one file never share a temporary.
fs::path temporary_beside(const fs::path& path, const char* kind) {
  static std::atomic<int> writes{0};
  return path.string() + "." + std::to_string(::getpid()) + "-" + std::to_string(writes++) + kind;
}

// `text` in a new file at `temporary`, flushed to the disk; throws naming `path` when any of it
// could not be written (a full disk fails here, before anything replaces the old file).
void write_temporary(const fs::path& temporary, const fs::path& path, const std::string& text) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw RecordError(temporary.string() + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  int failure = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = n < 0 ? errno : ENOSPC;
      break;
    }
    done += size_t(n);
  }
  if (failure == 0 && ::fsync(fd) != 0) failure = errno;
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure != 0) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw RecordError(path.string() + ": write failed (" + std::strerror(failure) + ", after " +
                      std::to_string(done) + " of " + std::to_string(text.size()) +
                      " bytes), so nothing was replaced; free some disk space or write elsewhere");
  }
}

bool process_alive(const std::string& pid) {
  char* end = nullptr;
  const long id = std::strtol(pid.c_str(), &end, 10);
  if (end == pid.c_str() || (*end != '\0' && *end != '-') || id <= 0) return false;
  return ::kill(pid_t(id), 0) == 0 || errno != ESRCH;
}

}  // namespace

void write_file_atomically(const fs::path& requested, const std::string& text, AtLink at_link) {
  std::error_code error;
  fs::path path = requested;
  if (at_link == AtLink::follow && fs::is_symlink(fs::symlink_status(requested, error))) {
    path = fs::weakly_canonical(requested, error);
    if (error)
      throw RecordError(requested.string() + ": cannot follow the link: " + error.message());
  }
  const fs::file_status status =
      at_link == AtLink::follow ? fs::status(path, error) : fs::symlink_status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_symlink(status))
    throw RecordError(path.string() +
                      ": is not a regular file (a folder, device or FIFO) and is never replaced");
  const fs::path temporary = temporary_beside(path, ".tmp");
  write_temporary(temporary, path, text);
  // rename() replaces a link itself, never its target.
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw RecordError(path.string() + ": cannot be replaced: " + error.message());
  }
}

bool create_file_atomically(const fs::path& path, const std::string& text) {
  std::error_code error;
  if (fs::exists(fs::symlink_status(path, error))) return false;
  const fs::path temporary = temporary_beside(path, ".tmp");
  write_temporary(temporary, path, text);
  // link() fails when `path` exists, however close another writer comes: an exclusive claim that
  // is never seen half written.
  const int linked = ::link(temporary.c_str(), path.c_str());
  const int saved_errno = errno;
  fs::remove(temporary, error);
  if (linked == 0) return true;
  if (saved_errno == EEXIST) return false;
  throw RecordError(path.string() + ": cannot create: " + std::strerror(saved_errno));
}

void replace_folder_atomically(const fs::path& dir,
                               const std::function<void(const fs::path&)>& fill) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error).lexically_normal();
  const fs::path folder = absolute.filename().empty() ? absolute.parent_path() : absolute;
  const fs::path parent = folder.parent_path();
  std::string prefix = ".";  // one append at a time: GCC 12 misreads "." + a temporary
  prefix += folder.filename().string();
  prefix += ".new-";
  fs::create_directories(parent, error);  // a new folder's parents, as for any output folder
  // A killed replacement leaves its new set (or the old one, swapped out) under prefix + pid.
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && !process_alive(name.substr(prefix.size())))
      fs::remove_all(entry.path(), error);
  }
  const fs::path staging = parent / (prefix + std::to_string(::getpid()));
  std::error_code ignored;
  fs::remove_all(staging, ignored);
  if (!fs::create_directory(staging, error))
    throw RecordError(dir.string() + ": cannot make the new set beside it in " + parent.string() +
                      " (" + error.message() + "); choose a folder in a writable folder");
  try {
    fill(staging);
  } catch (const RecordError& e) {
    fs::remove_all(staging, ignored);
    // Named as the folder the user gave, not the hidden one beside it.
    std::string message = e.what();
    for (size_t at; (at = message.find(staging.string())) != std::string::npos;)
      message.replace(at, staging.string().size(), folder.string());
    throw RecordError(message);
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
  // Swapped in one step where the folder exists; renamed into place where it does not.
  int done = ::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE);
  if (done != 0 && errno == ENOENT) done = ::rename(staging.c_str(), folder.c_str());
  if (done != 0 && errno == EINVAL) {  // a file system that cannot swap: two renames
    const fs::path old = staging.string() + "-old";
    if (::rename(folder.c_str(), old.c_str()) == 0) {
      done = ::rename(staging.c_str(), folder.c_str());
      const int rename_errno = errno;
      if (done == 0)
        fs::remove_all(old, ignored);
      else
        ::rename(old.c_str(), folder.c_str());
      errno = rename_errno;
    }
  }
  const int saved_errno = errno;
  fs::remove_all(staging, ignored);  // the old set, once swapped out
  if (done != 0)
    throw RecordError(dir.string() + ": cannot be replaced: " + std::strerror(saved_errno));
}

FolderWriteLock::FolderWriteLock(const fs::path& dir, const std::string& flag) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error).lexically_normal();
  const fs::path folder = absolute.filename().empty() ? absolute.parent_path() : absolute;
  std::string name = ".";  // one append at a time: GCC 12 misreads "." + a temporary
  name += folder.filename().string();
  name += ".lock";
  lock_file_ = folder.parent_path() / name;
  fs::create_directories(folder.parent_path(), error);
  for (;;) {
    const int fd = ::open(lock_file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw RecordError(lock_file_.string() + ": cannot make the lock for writing " + dir.string() +
                        " (" + std::strerror(errno) + "); choose a folder in a writable folder");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int saved_errno = errno;
      ::close(fd);
      if (saved_errno == EWOULDBLOCK)
        throw ConfigError(flag + " " + dir.string() +
                          ": another program is writing into it now (it holds " +
                          lock_file_.string() + "); wait for it to finish, or give another folder");
      throw RecordError(lock_file_.string() + ": cannot be locked (" + std::strerror(saved_errno) +
                        ")");
    }
    // The holder before may have removed the file between our open and lock: hold the one there.
    struct stat held, there;
    if (::fstat(fd, &held) == 0 && ::stat(lock_file_.c_str(), &there) == 0 &&
        held.st_dev == there.st_dev && held.st_ino == there.st_ino) {
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
}

FolderWriteLock::~FolderWriteLock() {
  ::unlink(lock_file_.c_str());  // before the lock goes, so no one locks a file removed after
  ::close(fd_);
}

}  // namespace gpulab
