// What a run reports as it goes: per-step metrics, evaluations, device samples and the summary.
// Plain structs, so the training thread hands them to any observer without knowing who listens.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"

namespace gpulab {

struct StepMetrics {
  int64_t step = 0;        // optimizer steps done, from 1
  int epoch = 0;           // from 1
  double time_s = 0;       // wall time since the run started (pauses excluded)
  double loss = 0;         // mean over the batch
  double accuracy = 0;     // batch accuracy in [0, 1]
  double images_per_second = 0;
  float lr = 0;
  double step_ms = 0;
  StepTimes times;
  std::vector<ReplicaTimes> replicas;  // every replica's share of the step (replicas.csv)
};

struct EvalMetrics {
  int64_t step = 0;
  int epoch = 0;
  double time_s = 0;
  Split split = Split::Test;
  double loss = 0;
  double accuracy = 0;
  // Training seconds when it was taken: time_s less the evaluations (this one included) and
  // pauses. Time to a target accuracy is this; NaN in records made before it was kept.
  double train_s = std::numeric_limits<double>::quiet_NaN();
};

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// A learning rate changed while the run trained (RunControl::request_lr): from `step` on the run
// uses `lr` (the schedule, if any, goes on scaling it). run.json's "lr_changes" keeps them, so a
// reloaded run marks its charts where they happened.
struct LrChange {
  int64_t step = 0;   // the first step that uses it
  int epoch = 0;      // that step's epoch
  double time_s = 0;  // wall time since the run started when it took effect (before that step)
  double lr = 0;      // that step's learning rate
};

// One reading of a device's state. Fields a device cannot report are kNoValue.
struct DeviceSample {
  std::string device;      // "cpu", "cuda:0"
  double time_s = 0;       // wall time since the run started
  double util_percent = kNoValue;
  double mem_util_percent = kNoValue;
  double mem_used_bytes = kNoValue;
  double mem_total_bytes = kNoValue;
  double power_w = kNoValue;
  double temperature_c = kNoValue;
  double sm_clock_mhz = kNoValue;
};

struct EpochSummary {
  int epoch = 0;
  double seconds = 0;          // training time of the epoch, evaluation excluded
  int64_t steps = 0;           // fewer than an epoch's when a step budget ended it early
  double images_per_second = 0;
  double train_loss = 0;       // mean over the epoch's steps
  double test_loss = kNoValue;
  double test_accuracy = kNoValue;
};

enum class RunStatus { Running, Finished, Cancelled, Failed };
const char* run_status_name(RunStatus status);

struct RunSummary {
  RunStatus status = RunStatus::Running;
  std::string message;
  int64_t steps = 0;
  int64_t images = 0;
  double train_seconds = 0;    // evaluation and pauses excluded
  double wall_seconds = 0;
  std::vector<EpochSummary> epochs;
  double test_loss = kNoValue;
  double test_accuracy = kNoValue;
  double target_accuracy = kNoValue;
  std::optional<double>
      time_to_target_s;  // EvalMetrics::train_s of the first evaluation at the target
  std::optional<int64_t> step_to_target;
  // Finite losses that went the wrong way (see DivergenceWatch): the run ends as it was asked to,
  // with this flag and what happened in `divergence`.
  bool diverged = false;
  std::string divergence;
};

}  // namespace gpulab
