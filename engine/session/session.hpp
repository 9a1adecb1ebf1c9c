// engine/session: a whole run from request to record, the one path every front end starts a
// run by, and which runs share hardware in a fair race, and other programs' load on the CPU. Over
// engine/records.
//
// A whole run as the CLI and the GUI start it: load the data, build the model and the backend,
// record the run folder, sample telemetry, train, save weights. One path for every front end.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/backend/backend.hpp"
#include "engine/backend/metrics.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {

struct RunRequest {
  std::string name;  // shown in comparisons; auto_run_name when empty
  ModelConfig model;
  TrainOptions train;
  BackendOptions backend;
  std::optional<std::filesystem::path> data_dir;   // default_data_dir() when empty
  std::filesystem::path out_dir;          // the run folder; new_run_dir(default_runs_dir()) when empty
  std::optional<std::filesystem::path> init_weights;
  std::optional<std::filesystem::path> save_weights;
  // --force: save_weights may replace a file that is no checkpoint of gpulab's, and out_dir may
  // hold other files (never a run, a hand-in, data or a runs folder).
  bool force_outputs = false;
  int validation = 0;                     // images held out of the training set
  double telemetry_hz = 10;               // device samples per second; the first at the start
  // Runs started at the same time on hardware this run uses too (a race run at once): recorded
  // in run.json as "shared_hardware", so comparisons say its times are not this run's alone.
  std::vector<std::string> concurrent_with;
  // Why its figures are no measurement to compare (`lab run --quick`: "a few steps each, not for
  // comparison"): recorded in run.json as "not_for_comparison", so every table, chart and export
  // marks it with ⚠ as they mark a run that shared its hardware.
  std::string not_for_comparison;
};

// Observes a run from the outside (a progress bar, the GUI). Called on the training thread,
// except on_sample, which comes from the telemetry thread.
class RunObserver : public TrainObserver {
 public:
  virtual void on_start(const std::filesystem::path& /*run_dir*/, const std::string& /*device*/,
                        const StepPlan& /*plan*/) {}
  virtual void on_sample(const DeviceSample&) {}
};

// Refuses, before any work, a run folder or weights file that cannot be written or would
// overwrite what was not named as an output (engine/records/output_paths.hpp). `inputs`: files the run
// reads (a setup file) that --save must not replace. Throws ConfigError.
void check_outputs(const RunRequest& request,
                   const std::vector<std::filesystem::path>& inputs = {});

// Already-loaded data may be passed in (tests, the GUI's cache); otherwise it is loaded from
// request.data_dir. Never throws for a run that fails once its folder exists: the summary has
// status Failed and the message, and run.json says the same. Throws ConfigError for outputs
// check_outputs refuses and RecordError when the run folder itself cannot be created or claimed.
RunSummary execute_run(const RunRequest& request, RunObserver& observer, RunControl& control,
                       const data::MnistData* preloaded = nullptr);

// What a run without a name is called: its settings, as engine/records/run_names.hpp reads them
// ("lenet5 cpu, 4 threads, b64, adam, lr 0.001, fp32"); an MPI job's name also says its number of
// ranks ("lenet5 cpu, 1 thread, 2 MPI ranks, b256, ...").
std::string auto_run_name(const RunRequest& request, int ranks = 1);

// The label used for run folder names: "pytorch-example_cpu". Short; the run's name says more.
std::string run_label(const RunRequest& request);

}  // namespace gpulab
