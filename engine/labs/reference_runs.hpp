// Reference runs: run folders recorded on a real GPU and shipped with gpulab
// (resources/reference-runs/<name>/), shown in a lab's row where this machine cannot run the
// experiment, always marked "recorded on <device>, <date>" and never as the learner's own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/output_kind.hpp"
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

// A benchmark's timings recorded on a real GPU, shipped as a file beside the reference runs
// (LAB.EXPERIMENT.matmul.json, kBenchReferenceFormat): a benchmark keeps no run folder, so its
// file says itself where, when and how it was recorded.
struct BenchReference {
  std::filesystem::path file;
  std::string lab, experiment;  // the lab's name and the experiment it stands in for
  std::string gpu, driver, cuda, recorded, command, commit;  // "NVIDIA H200", ..., "2026-11-27"
  std::vector<MatmulTiming> timings;
  // "NVIDIA H200, 2026-11-27": as a reference run's recorded_on, so one note marks both.
  std::string recorded_on() const { return gpu + ", " + recorded; }
};
inline constexpr const char* kBenchReferenceFormat = "gpulab-bench-reference/1";
inline constexpr const char* kBenchReferenceSuffix = ".matmul.json";

// The benchmark reference in `file`; throws ConfigError naming the file, what is wrong and what
// to do, for a file that cannot be read or is not one.
BenchReference read_bench_reference(const std::filesystem::path& file);

// A benchmark reference's file name: "LAB.EXPERIMENT.matmul.json", the experiment as its run
// folder is named ("cnn-on-gpu.inference-gpu.matmul.json").
std::string bench_reference_file_name(const std::string& lab, const std::string& experiment);
// A file of kBenchReferenceFormat: what write_bench_reference may replace.
const OutputKind& bench_reference_kind();
// Writes `reference` as read_bench_reference reads it ("source" when not empty), atomically, over
// nothing but an earlier benchmark reference (check_output_file with bench_reference_kind);
// throws OutputRefused or RecordError naming the file.
// `gpulab-cli lab run` writes one for each benchmark it ran on a GPU, so that the lab's output
// folder ships as it is, as its run folders do.
void write_bench_reference(const std::filesystem::path& file, const BenchReference& reference,
                           const std::string& source = "");

struct ReferenceRuns {
  std::vector<RunData> runs;               // newest first, each recorded_on() a GPU
  std::vector<BenchReference> benchmarks;  // the *.matmul.json files, by file name
  std::vector<std::string>
      problems;  // the folders and files left out, each "PATH: why; what to do"
};

// The run folders directly under `dir` (none when it does not exist), and its benchmark files
// (read_bench_reference). A folder that cannot be read, did not finish, or whose run.json names
// no GPU device or no date is left out, as is a damaged benchmark file, said in `problems`: only
// what was recorded on a real GPU stands in for a learner's figures.
ReferenceRuns load_reference_runs(const std::filesystem::path& dir);

// "NVIDIA H200, 2026-11-20": the GPUs run.json's devices name ("2× NVIDIA H100" for two of one
// kind) and the day it was created. "" when it names no GPU or no date.
std::string recorded_on(const RunData& run);

// The reference of an experiment, with its figures marked recorded_on: a training experiment's
// reference run, found as the learner's own runs are (experiment_run: the run named
// lab_run_name), or a benchmark's file of the same lab and experiment. Empty when none matches.
std::optional<LabRunResult> reference_result(const Lab& lab, const LabExperiment& e,
                                             const ReferenceRuns& references);

// A run that ships with gpulab (a reference run), recognised in a learner's runs.
struct ShippedRunMatch {
  std::string name;          // its folder among the shipped runs ("cnn-on-gpu.lenet5-gpu")
  std::string recorded_on;   // "NVIDIA H100 80GB HBM3, 2026-11-27" (recorded_on)
  std::string host;          // run.json's process host where it was recorded
  std::string how;           // "its metrics.csv is the shipped run's, byte for byte", ...
  std::string text() const;  // "the reference run NAME that ships with gpulab (recorded on ...)"
};

// The shipped run `run` is, or nothing: a record file (run.json, metrics.csv, eval.csv,
// telemetry.csv, replicas.csv) of the same bytes as a shipped run's; the same run.json "created"
// time, host and process; or the same losses, step for step, where `machine_gpus` (the GPUs of
// the machine handing in) has none of the shipped run's GPU model: with one, the same seed gives
// the same losses honestly. The shipped runs are gpulab's own and $GPULAB_REFERENCE_RUNS's, read
// once per process (each file's digest and identity kept, not the runs).
std::optional<ShippedRunMatch> shipped_run_of(const RunData& run,
                                              const std::vector<std::string>& machine_gpus);

}  // namespace gpulab
