// engine/records: run folders written as a run trains and read back, with their limits, the
// automatic names of runs and the checks that keep outputs from overwriting inputs. Over
// engine/training and engine/telemetry; it knows nothing of charts.
//
// Run records: the folder every run writes as it goes (run.json, metrics.csv, replicas.csv,
// eval.csv, telemetry.csv), and reading them back for comparisons and charts.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/backend/metrics.hpp"
#include "engine/base/files.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {

inline constexpr const char* kRunFormat = "gpulab-run/1";

// The files of a run folder's record: RunRecorder writes them, and nothing else may.
inline constexpr std::array<const char*, 5> kRunFiles = {"run.json", "metrics.csv", "replicas.csv",
                                                         "eval.csv", "telemetry.csv"};

// Writes a run folder. CSV rows are appended and flushed as they come, and run.json is replaced
// atomically (temporary file, then rename), so a killed run leaves readable files.
class RunRecorder final : public TrainObserver {
 public:
  // Creates `dir` and claims it by creating run.json exclusively (status running), so of two
  // runs given the same folder exactly one gets it; the other gets a RecordError at once, as
  // does a folder that already holds a run or any file of a record.
  RunRecorder(std::filesystem::path dir, nlohmann::json run_info);
  ~RunRecorder() override;
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  void on_step(const StepMetrics& metrics) override;
  void on_eval(const EvalMetrics& eval) override;
  void on_epoch(const EpochSummary& epoch) override;
  // Appended to run.json's "lr_changes" ({"step", "epoch", "time_s", "lr"} each).
  void on_lr_change(const LrChange& change) override;
  void on_sample(const DeviceSample& sample);  // any thread
  // Adds or replaces top-level fields of run.json (devices found once the backend starts).
  void update_info(const nlohmann::json& fields);
  void finish(const RunSummary& summary);
  // Ends the record as cancelled with `message` at once, from any thread, while the run may still
  // be inside a step; every later write leaves the record as it is. False when it had ended.
  bool end_cancelled_now(const std::string& message);

 private:
  void write_json();
  std::filesystem::path dir_;
  nlohmann::json info_;
  std::FILE* metrics_ = nullptr;
  std::FILE* replicas_ = nullptr;  // one row per replica per step
  std::FILE* evals_ = nullptr;
  std::FILE* telemetry_ = nullptr;
  std::mutex mutex_;  // telemetry arrives from the sampler thread
  std::vector<EpochSummary> epochs_;
  double others_percent_sum_ = 0, others_percent_max_ = 0;  // kOtherProgramsDevice samples
  int others_samples_ = 0;
  bool ended_now_ = false;  // end_cancelled_now wrote the record's end
};

// A run counts as measured under outside load when other programs took, on average over the
// run, at least this many of the machine's cores.
inline constexpr double kUnderLoadCores = 0.5;

// run.json's "outside_load": the mean and peak share of the CPU (percent of all cores) that other
// programs took during the run, the mean in cores, and whether that reaches kUnderLoadCores.
nlohmann::json outside_load_json(double mean_percent, double max_percent, int samples, int cores);

nlohmann::json summary_to_json(const RunSummary& summary);

// An entry of run.json's "lr_changes", and the list read back (empty when the run has none).
nlohmann::json lr_change_json(const LrChange& change);
std::vector<LrChange> lr_changes_from(const nlohmann::json& info);

// A row of replicas.csv.
struct ReplicaStep {
  int64_t step = 0;
  ReplicaTimes times;
};

// A run read back from its folder.
struct RunData {
  std::filesystem::path dir;
  nlohmann::json info;                 // run.json
  std::vector<StepMetrics> steps;
  std::vector<ReplicaStep> replica_steps;  // empty for runs recorded before replicas.csv
  std::vector<EvalMetrics> evals;
  std::vector<DeviceSample> samples;
  // Learning rates changed while it trained, in step order: run.json's "lr_changes" for a
  // recorded run, the feed's for a live one.
  std::vector<LrChange> lr_changes;
  // 1, or how many steps each of `steps` stands for in a large record thinned for drawing
  // (thin_for_drawing).
  int64_t steps_per_point = 1;
  // The name every view shows for it, where the runs it is shown among were named together
  // (name_runs: the window's run store); empty where display_run_names names it from the runs
  // shown with it.
  std::string display_name;
  // A reference run's "NVIDIA H200, 2026-11-27" (engine/labs/reference_runs): recorded on that
  // GPU elsewhere, so every chart that draws it says so in its name. Empty for the learner's own.
  std::string recorded_on;
  std::string name() const;            // info["name"], else the folder's name
  // run.json's status, except that a record left at "running" by a process of this machine that
  // is gone (killed, crashed) is "interrupted".
  std::string status() const;
  // Whether another process may still be writing the record: it says "running" and its process
  // is alive, or on another machine, where this one cannot tell.
  bool written_elsewhere() const;
};

// run.json's "process": the host and process id of the run's writer, recorded when it starts.
nlohmann::json this_process_json();

// Whether `dir` holds a run record: run.json in any form (a damaged one too, so that it is
// reported rather than passed over). Never throws.
bool holds_run(const std::filesystem::path& dir);

// Throws RecordError naming the file and line when a record cannot be read. A last line cut off
// by a killed run is skipped.
RunData load_run(const std::filesystem::path& dir);
// Only run.json, checked as load_run checks it: the status and summary of a run whose steps are
// already known.
nlohmann::json load_run_info(const std::filesystem::path& dir);
// The folders directly under `root` that hold a run (holds_run); a link loop among them or as
// `root` is a problem.
std::vector<std::filesystem::path> run_folders(const std::filesystem::path& root,
                                               std::vector<std::string>* problems = nullptr);
// The bytes of a run folder's CSV files (regular files only): what loading it will read.
std::uintmax_t record_bytes(const std::filesystem::path& dir);
// Every run folder directly under `root`, newest first; folders that fail to load are skipped and
// their errors returned in `problems` when given.
std::vector<RunData> load_runs(const std::filesystem::path& root,
                               std::vector<std::string>* problems = nullptr);

// Newest first, by run.json's "created".
void sort_newest_first(std::vector<RunData>& runs);

// Now, as run.json's "created" holds it: 2026-11-22T19:08:15Z.
std::string iso_time_now();

// Where runs are kept when no --out is given: $GPULAB_RUNS, else $XDG_DATA_HOME/gpulab/runs.
std::filesystem::path default_runs_dir();
// Makes and returns a new, empty folder under root named from the time and model
// (2026-11-22_190815_lenet5_cpu, then _2, _3 ... when taken). Throws RecordError.
std::filesystem::path new_run_dir(const std::filesystem::path& root, const std::string& label);

}  // namespace gpulab
