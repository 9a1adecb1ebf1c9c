// Checks of output paths before a run or an export starts.
#include "engine/records/output_paths.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "datasets/mnist_files.hpp"
#include "engine/base/errors.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& flag, const fs::path& path, const std::string& why) {
  throw OutputRefused(flag + " " + path.string() + ": " + why);
}

// How to get past a refusal that --force lifts: a flag of the command line has --force beside
// it; the window's dialogs ("Export") choose another file.
std::string force_hint(const std::string& flag) {
  return flag.starts_with("--") ? "name another file, or add --force to replace it"
                                : "choose another file";
}

// The same file, whether or not either exists yet.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
  return fs::weakly_canonical(fs::absolute(a, error), error) ==
         fs::weakly_canonical(fs::absolute(b, error), error);
}

fs::path folder_of(const fs::path& path) {
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

void check_writable_folder(const fs::path& folder, const std::string& flag, const fs::path& path) {
  std::error_code error;
  if (!fs::exists(folder, error))
    refuse(flag, path, "the folder " + folder.string() + " does not exist; create it first");
  if (!fs::is_directory(folder, error)) refuse(flag, path, folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    refuse(flag, path,
           "the folder " + folder.string() + " is not writable (" + std::strerror(errno) +
               "); choose a folder you can write to");
}

}  // namespace

bool is_run_record_file(const fs::path& path, const fs::path& run_dir) {
  const std::string name = path.filename().string();
  auto of_record = [&](const std::string& file) {  // the file or a temporary of it
    return name == file || (name.starts_with(file + ".") && name.ends_with(".tmp"));
  };
  if (std::none_of(kRunFiles.begin(), kRunFiles.end(), of_record)) return false;
  const fs::path folder = folder_of(path);
  return holds_run(folder) || (!run_dir.empty() && same_file(folder, run_dir));
}

void refuse_foreign_file(const fs::path& path, const std::string& flag, const OutputKind& kind) {
  refuse(flag, path,
         "is " + describe_file(path) + ", not " + kind.what +
             " that gpulab wrote, and is never replaced by one; " + force_hint(flag));
}

void check_output_file(const fs::path& path, const std::string& flag, const OutputKind& kind,
                       bool force, const std::vector<fs::path>& inputs, const fs::path& run_dir) {
  if (path.empty()) throw ConfigError(flag + ": give a file name");
  std::error_code error;
  const fs::file_status status = fs::status(path, error);  // through a symbolic link
  if (fs::is_directory(status))
    refuse(
        flag, path,
        "is a folder; name a file (" + (path / "weights.safetensors").string() + ", for example)");
  if (fs::exists(status) && !fs::is_regular_file(status))
    refuse(flag, path,
           "is not a regular file (a device, FIFO or socket) and is never replaced; name a "
           "regular file");
  for (const fs::path& input : inputs)
    if (!input.empty() && same_file(path, input))
      refuse(flag, path, "is also an input of this command; write to another file");
  if (is_run_record_file(path, run_dir))
    refuse(flag, path,
           "is a file of the run folder " + folder_of(path).string() +
               " and would overwrite its record; write to another file");
  // A link is written through (engine/base/files.hpp): the file it names is what is replaced.
  if (fs::is_symlink(fs::symlink_status(path, error))) {
    const fs::path target = fs::weakly_canonical(fs::absolute(path, error), error);
    if (is_run_record_file(target, run_dir))
      refuse(flag, path,
             "is a link to " + target.string() +
                 ", a file of a run's record, which it would overwrite; write to another file");
  }
  // A file in the run folder this run is about to make is checked with that folder.
  const fs::path folder = folder_of(fs::absolute(path, error));
  if (run_dir.empty() || fs::exists(folder, error) || !same_file(folder, run_dir))
    check_writable_folder(folder, flag, path);
  if (fs::exists(status) && ::access(path.c_str(), W_OK) != 0)
    refuse(flag, path, std::string("is not writable (") + std::strerror(errno) + ")");
  // Only gpulab's own output of this kind is replaced: a lab's .md given to --save, or MNIST's
  // data given to --json, was overwritten before.
  if (fs::is_regular_file(status) && !force && !kind.is_own(path))
    refuse_foreign_file(path, flag, kind);
}

namespace {

// The folders of `dir` that do not exist yet are made; the nearest one that exists must take them.
void check_new_folder(const fs::path& dir, const std::string& flag) {
  std::error_code error;
  fs::path parent = fs::absolute(dir, error).parent_path();
  while (!parent.empty() && !fs::exists(parent, error) && parent != parent.root_path())
    parent = parent.parent_path();
  check_writable_folder(parent, flag, dir);
}

}  // namespace

void check_output_folder(const fs::path& dir, const std::string& flag,
                         const std::function<bool(const std::string&)>& own) {
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (!fs::exists(status)) return check_new_folder(dir, flag);
  if (!fs::is_directory(status))
    refuse(flag, dir, "is " + describe_file(dir) + ", not a folder; name a new or empty folder");
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error) || !own(name))
      refuse(flag, dir,
             "holds " + name + ", which this command does not write; name a new or empty folder");
  }
  if (error) refuse(flag, dir, "cannot be read (" + error.message() + ")");
  // The new set is made beside the folder and swapped in whole (replace_folder_atomically).
  fs::path whole = fs::absolute(dir, error).lexically_normal();
  if (whole.filename().empty()) whole = whole.parent_path();
  check_writable_folder(whole.parent_path(), flag, dir);
}

namespace {

// Folders no run or hand-in is ever written into, whatever --force says: the root of the file
// system, MNIST's data folder, a runs folder (whose runs are each in a folder of their own).
void refuse_shared_folder(const fs::path& dir, const std::string& flag) {
  std::error_code error;
  const fs::path whole = fs::weakly_canonical(fs::absolute(dir, error), error);
  if (!whole.empty() && whole == whole.root_path())
    refuse(flag, dir, "is the root of the file system; name a new folder");
  for (const data::MnistFile& file : data::mnist_files())
    for (const char* ending : {"", ".gz"})
      if (const std::string name = file.name + std::string(ending); fs::exists(dir / name, error))
        refuse(flag, dir,
               "is a data folder (it holds MNIST's " + name +
                   "), which a run never writes into; name a new folder");
  if (!whole.empty() && fs::exists(default_runs_dir(), error) &&
      fs::equivalent(whole, default_runs_dir(), error))
    refuse(flag, dir,
           "is the runs folder itself, whose runs are each in a folder of their own; name a new "
           "folder (or leave --out out: a run gets a new folder there)");
  for (const fs::path& run : run_folders(dir))
    refuse(flag, dir,
           "is a runs folder (it holds the run " + run.filename().string() +
               "); name a new folder for the run");
}

}  // namespace

void check_run_folder(const fs::path& dir, const std::string& flag) {
  if (dir.empty()) return;  // a new folder under the runs folder
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      refuse(flag, dir, "is " + describe_file(dir) + ", not a folder; name a new folder");
    if (holds_run(dir)) refuse(flag, dir, "already holds a run; choose another --out folder");
    refuse_shared_folder(dir, flag);
    check_writable_folder(dir, flag, dir);
    return;
  }
  check_new_folder(dir, flag);
}

void check_new_run_folder(const fs::path& dir, const std::string& flag, bool force) {
  check_run_folder(dir, flag);
  std::error_code error;
  if (dir.empty() || !fs::is_directory(dir, error)) return;
  for (const char* hand_in_file : {"manifest.json", "answers.json"})
    if (fs::exists(dir / hand_in_file, error))
      refuse(flag, dir,
             std::string("is a hand-in (it holds ") + hand_in_file +
                 "), which a run never writes into; name a new folder");
  if (force) return;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (!is_run_record_file(entry.path(), dir))  // what a run that never started left
      refuse(flag, dir,
             "holds " + entry.path().filename().string() + " (" + describe_file(entry.path()) +
                 "), and a run's folder holds only the run; name a new or empty folder, or add "
                 "--force to record the run beside it");
}

}  // namespace gpulab
