// The training thread's side of the hand-off to the window.
#include "ui/runs/run_feed.hpp"

#include <utility>

namespace gpulab::ui {

void RunFeed::on_start(const std::filesystem::path& dir, const std::string& device,
                       const StepPlan& plan) {
  std::lock_guard lock(mutex_);
  pending_.start = RunStart{dir, device, plan};
}

void RunFeed::on_step(const StepMetrics& metrics) {
  std::lock_guard lock(mutex_);
  pending_.steps.push_back(metrics);
}

void RunFeed::on_eval(const EvalMetrics& eval) {
  std::lock_guard lock(mutex_);
  pending_.evals.push_back(eval);
}

void RunFeed::on_epoch(const EpochSummary& epoch) {
  std::lock_guard lock(mutex_);
  pending_.epochs.push_back(epoch);
}

void RunFeed::on_sample(const DeviceSample& sample) {
  std::lock_guard lock(mutex_);
  pending_.samples.push_back(sample);
}

void RunFeed::on_lr_change(const LrChange& change) {
  std::lock_guard lock(mutex_);
  pending_.lr_changes.push_back(change);
}

FeedBatch RunFeed::take() {
  FeedBatch taken;
  std::lock_guard lock(mutex_);
  std::swap(taken, pending_);
  return taken;
}

}  // namespace gpulab::ui
