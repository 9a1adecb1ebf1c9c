// Writing files so that a reader never sees half of one: every file gpulab writes (records,
// checkpoints, exports, hand-ins, mistakes) goes through here.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace gpulab {

// What a write does with a symbolic link standing where the file goes.
enum class AtLink {
  follow,   // its target is replaced and the link kept (a user's own link to a chart)
  replace,  // the link itself is replaced by the new file; its target is never touched
};

// Replaces `path` with `text` atomically: write a temporary file beside it, flush, rename. Never
// replaces anything but a regular file (or a link, per `at_link`), and leaves no temporary file
// behind when it fails: the old file stays whole, and RecordError says why (a full disk among
// others), so no caller reports a file that was not completely written.
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           AtLink at_link = AtLink::follow);

// Creates `path` holding `text`, all of it or nothing: written to a temporary beside it, flushed,
// then linked into place, which fails when anything is already there. Returns false (leaving
// nothing behind) when `path` exists; throws RecordError when it cannot be written.
bool create_file_atomically(const std::filesystem::path& path, const std::string& text);

// Replaces the folder `dir` (made when missing) by a folder that `fill` writes: `fill` gets a new
// folder beside `dir`, and the two are swapped in one step, so a reader or a kill finds the old
// set or the new one, never a mix. What a killed earlier replacement left beside `dir` is removed
// first. Throws RecordError (and leaves `dir` as it was) when the new set cannot be made.
void replace_folder_atomically(const std::filesystem::path& dir,
                               const std::function<void(const std::filesystem::path&)>& fill);

// Held while one program writes the folder `dir` (a hand-in, a lab's results): an exclusive lock
// on ".NAME.lock" beside it, so a second writer is refused at once instead of mixing its files
// with the first's. The lock goes with its holder when that is killed; the holder removes the
// file when it is done.
class FolderWriteLock {
 public:
  // Throws ConfigError ("<flag> DIR: another program is writing into it now ...") when another
  // holds it, RecordError when the lock file cannot be made.
  FolderWriteLock(const std::filesystem::path& dir, const std::string& flag);
  ~FolderWriteLock();
  FolderWriteLock(const FolderWriteLock&) = delete;
  FolderWriteLock& operator=(const FolderWriteLock&) = delete;

 private:
  std::filesystem::path lock_file_;
  int fd_ = -1;
};

}  // namespace gpulab
