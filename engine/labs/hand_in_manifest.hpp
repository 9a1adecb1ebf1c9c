// What makes a hand-in checkable: the runs its tables use, copied in as gpulab wrote them
// (runs/ for the learner's, reference-runs/ for those shipped with gpulab), and manifest.json:
// the learner, the lab file's SHA-256, gpulab's version, which run fills which experiment, and
// the SHA-256 of every other file. engine/classkit reads it back to verify the hand-in.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kManifestFormat = "gpulab-manifest/1";
inline constexpr const char* kHandInRuns = "runs";
inline constexpr const char* kHandInReferenceRuns = "reference-runs";

// "lenet5 cpu" -> "lenet5-cpu": an experiment's run folder, in `lab run`'s runs/ and a hand-in's.
std::string experiment_folder(const std::string& experiment);

// Copies the record files (kRunFiles; never weights) of each result's run into `dir`: the
// learner's under runs/EXPERIMENT/, reference runs under reference-runs/EXPERIMENT/. A run already
// there (`lab run` records into runs/) is left as it is; a folder of an earlier hand-in that no
// result uses any more is removed. Returns, per result, the folder relative to `dir` ("" for a
// result without a run). Throws RecordError when a file cannot be copied.
std::vector<std::string> copy_hand_in_runs(const std::filesystem::path& dir,
                                           const std::vector<LabRunResult>& results);

// Per result, what verify needs to rebuild it: {"experiment", "run" (a folder of the hand-in or
// ""), "reference", "skipped", and a benchmark's "matmul" timings and "outside_load"}.
nlohmann::json manifest_experiments(const std::vector<LabRunResult>& results,
                                    const std::vector<std::string>& folders);

// Every regular file under `dir` but manifest.json, by its path relative to `dir` with "/", to
// its SHA-256. Throws RecordError when one cannot be read.
nlohmann::json hand_in_file_hashes(const std::filesystem::path& dir);

// Writes manifest.json (atomically) over the files `dir` holds now: call it last.
void write_manifest(const std::filesystem::path& dir, const Lab& lab, const std::string& learner,
                    const std::string& date, const nlohmann::json& experiments);

// Refuses (ConfigError naming `flag` and an example) a learner's name that is empty, more than
// one line, longer than 100 characters or not UTF-8; returns it trimmed.
std::string checked_learner(const std::string& name, const std::string& flag);

}  // namespace gpulab
