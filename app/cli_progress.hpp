// The CLI's view of a run: a progress bar on a terminal, plain lines otherwise.
#pragma once

#include <chrono>
#include <cstdio>

#include "engine/session/session.hpp"

namespace gpulab::cli {

// A finished run's pace for its last line: "N images/s", the figure the window and the lab tables
// give (run_images_per_second, at the median step), read back from its record in `run_dir`;
// where that cannot be read, the summary's images over its training seconds, named "over the
// whole run".
std::string pace_text(const std::filesystem::path& run_dir, const RunSummary& summary);

class ProgressPrinter final : public RunObserver {
 public:
  ProgressPrinter(std::FILE* out, bool quiet);
  void on_start(const std::filesystem::path& run_dir, const std::string& device,
                const StepPlan& plan) override;
  void on_step(const StepMetrics& m) override;
  void on_eval(const EvalMetrics& e) override;
  void on_epoch(const EpochSummary& e) override;
  void finish_line();
  const std::filesystem::path& run_dir() const { return run_dir_; }  // empty until the run starts

 private:
  std::FILE* out_;
  std::filesystem::path run_dir_;
  bool terminal_;
  bool quiet_;
  int epochs_ = 0;
  int64_t total_steps_ = 0;
  int64_t last_plain_step_ = 0;
  bool bar_shown_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
  double smoothed_images_per_second_ = 0;
  // This epoch's data-parallel reduction, summed over its steps and replicas.
  int64_t epoch_steps_ = 0;
  double allreduce_ms_ = 0, exposed_ms_ = 0, hidden_ms_ = 0;
};

}  // namespace gpulab::cli
