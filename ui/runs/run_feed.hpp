// The hand-off from a training thread to the window: the run's observer appends under a short
// lock, and the window's timer swaps everything out at once. The training thread never waits for
// the window beyond that lock. No Qt, so benchmarks and tests can drive it without a window.
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/session/session.hpp"

namespace gpulab::ui {

struct RunStart {
  std::filesystem::path dir;
  std::string device;
  StepPlan plan;
};

struct FeedBatch {
  std::optional<RunStart> start;
  std::vector<StepMetrics> steps;
  std::vector<EvalMetrics> evals;
  std::vector<EpochSummary> epochs;
  std::vector<DeviceSample> samples;
  std::vector<LrChange> lr_changes;
  bool empty() const {
    return !start && steps.empty() && evals.empty() && epochs.empty() && samples.empty() &&
           lr_changes.empty();
  }
};

class RunFeed final : public RunObserver {
 public:
  void on_start(const std::filesystem::path& dir, const std::string& device,
                const StepPlan& plan) override;
  void on_step(const StepMetrics& metrics) override;
  void on_eval(const EvalMetrics& eval) override;
  void on_epoch(const EpochSummary& epoch) override;
  void on_sample(const DeviceSample& sample) override;
  void on_lr_change(const LrChange& change) override;
  // Everything appended since the last call.
  FeedBatch take();

 private:
  std::mutex mutex_;
  FeedBatch pending_;
};

}  // namespace gpulab::ui
