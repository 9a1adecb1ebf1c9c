// Runs compared, without Qt: each run's epoch time, images/s, test accuracy and time to a target
// accuracy next to a baseline's (the comparison table, comparison.csv, the speedup chart).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// One run's figures next to a baseline's, for the comparison table and the speedup chart.
struct RunComparison {
  // status: run.json's, but "diverged" for a finished run whose loss diverged; note: why, and
  // what to try.
  std::string name, device, precision, status, note;
  int batch = 0;
  // Mean over the run's full epochs only (an epoch a step budget cut short is left out). A run
  // with no full epoch gets its mean step time times an epoch's steps, epoch_extrapolated set.
  double epoch_seconds = kNoValue;
  int full_epochs = 0;
  bool epoch_extrapolated = false;
  int64_t steps = 0;                    // steps recorded
  double images_per_second = kNoValue;  // run_images_per_second: at the median step
  double test_accuracy = kNoValue;
  double time_to_target_s = kNoValue;   // time_to_target_s(run, target)
  double speedup = kNoValue;            // images/s over the baseline's
  double epoch_speedup = kNoValue;      // the baseline's epoch time over this run's, when both
                                        // come from full epochs
  std::vector<std::string> caveats;     // run_caveats: why its times may not be its own
  std::vector<std::string> flags;       // run_flags: the caveats and a status that cut it short
  // Data parallel runs (NaN else), medians over the steps: the all-reduce a step waited for, the
  // all-reduce hidden under the backward pass, and the hidden share of the replicas' reduction
  // (communication_overlap_percent over every step).
  double allreduce_ms = kNoValue, allreduce_hidden_ms = kNoValue, overlap_percent = kNoValue;
  // Energy to solution from run.json's "energy" (engine/telemetry/energy.hpp): joules over the
  // devices the run computed on and images per joule, NaN when not measured, with energy_text's
  // line (how it was measured, or why not) in energy_note.
  double energy_j = kNoValue, images_per_joule = kNoValue;
  std::string energy_note;
  // Of forward and backward, the share in matrix products, % (run_figures' matmul_share; the
  // CPU's runs measure it, NaN else), with matmul_share_text's line in matmul_note.
  double matmul_percent = kNoValue;
  std::string matmul_note;
};
std::vector<RunComparison> compare_runs(const std::vector<const RunData*>& runs, int baseline,
                                        double target_accuracy);

// The epoch time as every view writes it: "27.70 s"; for a run with no full epoch
// "≈ 41.20 s, from 66 steps" (extrapolated); a dash without steps.
std::string epoch_time_text(const RunComparison& row);

// The run a comparison of `runs` is against when the user chose none (an index; -1 for none): the
// first that finished with no flag (run_flags) and trains the model most of them train, else the
// first finished with no flag, else the first. A cancelled or flagged run picked by itself made
// "8.0× the baseline" a ratio against a figure that is no measurement of its own.
int default_baseline(const std::vector<const RunData*>& runs);

// Time to a target test accuracy, one definition for every view: the training seconds
// (evaluations and pauses excluded, as EvalMetrics::train_s) at the first test evaluation at or
// above the target; NaN when none reached it. Records from before train_s was kept get it from
// the evaluation's wall time less the time spent in evaluations up to it.
double time_to_target_s(const RunData& run, double target_accuracy);

}  // namespace gpulab
