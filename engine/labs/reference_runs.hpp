// Reference runs: run folders recorded on a real GPU and shipped with gpulab
// (resources/reference-runs/<name>/), shown in a lab's row where this machine cannot run the
// experiment, always marked "recorded on <device>, <date>" and never as the learner's own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

// Names another folder of reference runs (the tests' fixtures, a course's own recordings).
inline constexpr const char* kReferenceRunsVariable = "GPULAB_REFERENCE_RUNS";

// $GPULAB_REFERENCE_RUNS when set and not empty, else the installed copy beside the program
// (<prefix>/share/gpulab/reference-runs) when there is one, else the source tree's
// resources/reference-runs (a program run from its build folder). Throws ConfigError
// ("GPULAB_REFERENCE_RUNS=DIR: not a folder; ...") when the variable names no folder.
std::filesystem::path reference_runs_dir();

struct ReferenceRuns {
  std::vector<RunData> runs;          // newest first, each recorded_on() a GPU
  std::vector<std::string> problems;  // the folders left out, each "DIR: why; what to do"
};

// The run folders directly under `dir` (none when it does not exist). A folder that cannot be
// read, did not finish, or whose run.json names no GPU device or no date is left out, said in
// `problems`: only a finished run recorded on a real GPU stands in for a learner's.
ReferenceRuns load_reference_runs(const std::filesystem::path& dir);

// "NVIDIA H200, 2026-11-20": the GPUs run.json's devices name ("2× NVIDIA H100" for two of one
// kind) and the day it was created. "" when it names no GPU or no date.
std::string recorded_on(const RunData& run);

// The reference run of a training experiment, found as the learner's own runs are
// (experiment_run: the run named lab_run_name), with its figures marked recorded_on. Empty when
// none matches, and for a benchmark, which records no run folder.
std::optional<LabRunResult> reference_result(const Lab& lab, const LabExperiment& e,
                                             const std::vector<RunData>& references);

}  // namespace gpulab
