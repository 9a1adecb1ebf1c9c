// Replaying a CPU run: its first steps trained again on this machine with the recorded seed and
// settings, and the losses compared, so figures a learner typed in cannot pass as a run.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/mnist.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

struct RunControl;

// The largest relative difference between a recorded and a replayed loss that still agrees: a
// different BLAS kernel set (another CPU, another OpenBLAS build) rounds sums in another order.
inline constexpr double kReplayLossTolerance = 2e-3;

// How much faster than its replay a run's recorded steps may be, on the same CPU model, before the
// pace is flagged: a busy machine slows the replay, never the record.
inline constexpr double kReplayPaceTolerance = 2.0;

struct ReplayVerdict {
  bool agrees = false;
  int64_t steps = 0;            // compared
  double worst_difference = 0;  // the largest relative difference of a loss
  int64_t worst_step = 0;
  std::string text;  // one line: the verdict, the steps, the kernels on each side
  // The median step time of the compared steps (the first left out where there are more: it holds
  // the set-up), as recorded and as replayed; and, where the run was recorded on this machine's
  // CPU model and its steps were more than kReplayPaceTolerance times faster than here, a flag
  // for a person saying both ("" otherwise). `pace` says what was compared, or why not.
  double recorded_step_ms = 0, replayed_step_ms = 0;
  std::string pace, pace_flag;
};

// Trains the first `steps` steps of `run` (a CPU run) again with its model, seed and settings,
// in a temporary folder, and compares each step's loss with metrics.csv's. `recorded_blas` is
// the recorder's BLAS (machine.json), said beside this machine's; `recorded_cpu` its CPU model,
// against which the pace is compared. Throws ConfigError when the run cannot be replayed (not a
// CPU run, settings that do not read, no steps recorded).
ReplayVerdict replay_run(const RunData& run, int64_t steps, const data::MnistData& mnist,
                         const std::string& recorded_blas, RunControl& control,
                         const std::string& recorded_cpu = "");

}  // namespace gpulab
