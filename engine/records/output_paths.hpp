// Where a run or an export may write, checked before any work: the one check of every flag that
// writes a file (and of the window's file dialogs). A path that cannot be written, is not a
// regular file, would overwrite a run's record or one of the inputs, or holds a file of another
// kind than the output (a Markdown file given to --save, MNIST's data given to --json) is refused
// up front, so a bad target never costs anyone a file. Each refusal is an OutputRefused.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/output_kind.hpp"

namespace gpulab {

// Throws OutputRefused ("<flag> <path>: <why>; <what to do>") unless `path` can be replaced by a
// new file of `kind`: its folder exists and is writable; it is not a folder, device, FIFO or
// socket; it is not one of `inputs` nor a file of a run folder's record (run.json, metrics.csv,
// ...) in a folder that holds a run or in `run_dir`, the folder this run will record into; and
// a file already there is one of `kind` that gpulab wrote (judged by its content), unless `force`
// (--force) says that replacing it is meant. Nothing else is ever forced.
void check_output_file(const std::filesystem::path& path, const std::string& flag,
                       const OutputKind& kind, bool force = false,
                       const std::vector<std::filesystem::path>& inputs = {},
                       const std::filesystem::path& run_dir = {});

// The refusal of a file that is not of `kind`: "<flag> <path>: is a Markdown file, not <kind>
// that gpulab wrote; ...". For the writers that check a file themselves.
[[noreturn]] void refuse_foreign_file(const std::filesystem::path& path, const std::string& flag,
                                      const OutputKind& kind);

// Throws OutputRefused unless `dir` can take a run's or a hand-in's files: it is a folder holding
// no run, or it does not exist yet and its nearest existing parent is a writable folder; and it is
// not the root of the file system, a folder of MNIST's data files or a runs folder (one holding
// runs in folders of their own).
void check_run_folder(const std::filesystem::path& dir, const std::string& flag);

// check_run_folder for a new run's --out, and more: the folder is not a hand-in, and holds
// nothing (what a run that never started left, its record's files, aside) unless `force`.
void check_new_run_folder(const std::filesystem::path& dir, const std::string& flag, bool force);

// Throws OutputRefused unless `dir` can take a command's set of output files: a folder holding
// nothing but files `own` says the command wrote before (by their names; the new set replaces
// the folder whole, made beside it, so its parent must be writable), or one that does not exist
// yet whose nearest existing parent is a writable folder. A folder
// holding anything else (a run, the user's files) is refused, naming one of them.
void check_output_folder(const std::filesystem::path& dir, const std::string& flag,
                         const std::function<bool(const std::string&)>& own);

// Whether `path` is a file of a run's record: one of kRunFiles (or its temporary) in `run_dir`
// or in a folder that holds run.json.
bool is_run_record_file(const std::filesystem::path& path,
                        const std::filesystem::path& run_dir = {});

}  // namespace gpulab
