// engine/training: the training loop over any Backend, divergence detection, experiments (a
// model and its training settings, as setup files hold them) and the backend factory. The
// first room that knows both backends (engine/cpu, engine/cuda).
//
// The one training loop: epochs or a step budget over any Backend, with evaluation, cancellation,
// pausing, divergence detection and time to a target accuracy.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/metrics.hpp"
#include "engine/model/optimizer.hpp"

namespace gpulab {

// The largest batch the trainer takes; a replica takes at least one image of it, so no run has
// more replicas (or MPI ranks) than this.
inline constexpr int kMaxBatch = 65536;

// A learning rate planned before the run starts: from step `step` (1-based) on, `lr`, taken as a
// change asked for in the window just before that step is (gpulab-cli train --lr-change STEP:LR).
struct PlannedLr {
  int64_t step = 1;
  double lr = 0;
  bool operator==(const PlannedLr&) const = default;
};

// "300:0.05" (a step, a colon, a learning rate), as --lr-change takes it; ConfigError names the
// text and says what is wanted.
PlannedLr parse_planned_lr(const std::string& text);

struct TrainOptions {
  int epochs = 1;
  int64_t max_steps = 0;       // stop after this many optimizer steps; 0: no limit
  int batch = 64;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  uint64_t seed = 1;
  bool shuffle = true;
  int64_t eval_every = 0;      // also evaluate on the test set every N steps; 0: at epoch ends only
  double target_accuracy = 0;  // in [0, 1]; 0: none
  // In [0, 1]; 0: train to the end. The run ends at the first test evaluation (every eval_every
  // steps and at epoch ends) at or above it, as time-to-accuracy benchmarks need.
  double stop_at_accuracy = 0;
  bool eval_at_epoch_end = true;
  // Learning rates changed at planned steps, in increasing step order; run.json's lr_changes
  // records each as it takes effect, as it does a change asked for while the run trains. Every
  // MPI rank has the same plan, so unlike those, these are taken in an MPI job too.
  std::vector<PlannedLr> lr_changes;
};

// Checked by the training thread every step; set from any thread.
struct RunControl {
  std::atomic<bool> cancel{false};
  std::atomic<bool> pause{false};
  // Why cancel was set, when something other than the user's button set it: a literal a signal
  // handler can store ("SIGTERM"); the record's message says it.
  std::atomic<const char*> cancelled_by{nullptr};
  // A learning rate asked for while the run trains (the window's field), NaN when none: the
  // training thread takes it before its next step, which then uses it as its own learning rate;
  // a schedule goes on from there (the base learning rate is rescaled so that the schedule passes
  // through the new value: Step keeps multiplying by gamma, OneCycle keeps its shape). The step
  // it took effect at is reported to TrainObserver::on_lr_change.
  std::atomic<double> requested_lr{std::numeric_limits<double>::quiet_NaN()};
  // Why this run's learning rate cannot change while it trains, set before it starts (an MPI
  // job: every rank would have to take rank 0's value at the same step); null when it can.
  std::atomic<const char*> lr_fixed_because{nullptr};
  // Asks for `lr` from the next step on, from any thread. Throws ConfigError for a value that is
  // not a positive, finite number, or when lr_fixed_because is set.
  void request_lr(double lr);
  // How a run cancelled after `steps` steps says so: "cancelled at step 41 by SIGTERM".
  std::string cancel_message(int64_t steps) const;

  // Where a cancel cannot wait for the run to stop by itself (a step that does not end, and a
  // SIGTERM that must end the program): ends the run's record as cancelled with `message` now,
  // from any thread; later writes of the run leave it so. False when no record is open, or it has
  // ended already. execute_run sets the hook while its record is open.
  bool record_cancel_now(const std::string& message);
  void set_record_cancel(std::function<bool(const std::string&)> hook);

 private:
  std::mutex record_cancel_mutex_;
  std::function<bool(const std::string&)> record_cancel_;
};

// Called on the training thread; implementations must not block for long.
class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void on_step(const StepMetrics&) {}
  virtual void on_eval(const EvalMetrics&) {}
  virtual void on_epoch(const EpochSummary&) {}
  // A learning rate asked for through RunControl::request_lr took effect: before on_step of the
  // step it names.
  virtual void on_lr_change(const LrChange&) {}
};

// Checks options (throws ConfigError with the flag's name) before anything runs; with the
// training set's size, also what depends on it (a planned learning rate after the last step).
void validate(const TrainOptions& options);
void validate(const TrainOptions& options, int train_count);

// The epochs and optimizer steps a run of `options` over `train_count` images will take. With a
// step budget and no epoch count (epochs < 1), as many epochs as the budget needs.
struct StepPlan {
  int epochs = 0;
  int64_t steps_per_epoch = 0;
  int64_t total_steps = 0;
};
// Throws ConfigError when there is no image to train on (train_count < 1).
StepPlan plan_steps(const TrainOptions& options, int train_count);

// The images left to train on once `validation` of the `train_count` are held out; throws
// ConfigError naming --validation and what the set holds when none would be left (or validation
// is negative). Every split of a training set goes through here, the CLI's and the session's.
int training_images_left(int train_count, int validation);

// Runs to the end, a cancel, a failure, or stop_at_accuracy; never throws for a diverging loss
// (status Failed), but lets backend errors (out of memory, a lost device) propagate to the caller.
RunSummary train(Backend& backend, const DataSets& data, const TrainOptions& options,
                 TrainObserver& observer, RunControl& control);

}  // namespace gpulab
