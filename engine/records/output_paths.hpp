// Where a run or an export may write, checked before any work: a path that cannot be written, is
// not a regular file, or would overwrite a run's record or one of the inputs is refused up front,
// so a bad target never costs a finished run its weights or another run its record.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace gpulab {

// Throws ConfigError ("<flag> <path>: <why>; <what to do>") unless `path` can be replaced by a
// new file: its folder exists and is writable; it is not a folder, device, FIFO or socket; it is
// not one of `inputs` nor a file of a run folder's record (run.json, metrics.csv, ...) in a
// folder that holds a run or in `run_dir`, the folder this run will record into.
void check_output_file(const std::filesystem::path& path, const std::string& flag,
                       const std::vector<std::filesystem::path>& inputs = {},
                       const std::filesystem::path& run_dir = {});

// Throws ConfigError unless `dir` can become a new run folder: it is a folder holding no run,
// or it does not exist yet and its nearest existing parent is a writable folder.
void check_run_folder(const std::filesystem::path& dir, const std::string& flag);

// Throws ConfigError unless `dir` can take a command's set of output files: a folder holding
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
