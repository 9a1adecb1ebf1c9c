// Progress output for gpulab-cli train.
#include "app/cli_progress.hpp"

#include <unistd.h>

#include <cmath>
#include <string>

#include "engine/analysis/run_figures.hpp"

namespace gpulab::cli {
namespace {

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

}  // namespace

std::string pace_text(const std::filesystem::path& run_dir, const RunSummary& summary) {
  char text[96];
  double pace = kNoValue;
  if (!run_dir.empty()) try {
      pace = run_images_per_second(load_run(run_dir));
    } catch (const std::exception&) {  // said below: the figure it has instead
    }
  if (std::isfinite(pace)) {
    std::snprintf(text, sizeof text, "%.0f images/s", pace);
  } else {
    std::snprintf(text, sizeof text, "%.0f images/s over the whole run",
                  summary.train_seconds > 0 ? double(summary.images) / summary.train_seconds : 0.0);
  }
  return text;
}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool quiet)
    : out_(out), terminal_(isatty(fileno(out)) != 0), quiet_(quiet) {}

void ProgressPrinter::on_start(const std::filesystem::path& run_dir, const std::string& device,
                               const StepPlan& plan) {
  run_dir_ = run_dir;
  total_steps_ = plan.total_steps;
  epochs_ = plan.epochs;
  if (quiet_) return;
  std::fprintf(out_, "training on %s, %lld steps; recording to %s\n", device.c_str(),
               static_cast<long long>(total_steps_), run_dir.c_str());
  std::fflush(out_);
}

void ProgressPrinter::on_step(const StepMetrics& m) {
  if (quiet_) return;
  if (m.replicas.size() > 1) {
    ++epoch_steps_;
    allreduce_ms_ += m.times.allreduce_ms;
    for (const ReplicaTimes& r : m.replicas) {
      exposed_ms_ += r.communication_ms;
      hidden_ms_ += r.hidden_ms;
    }
  }
  smoothed_images_per_second_ = smoothed_images_per_second_ == 0
                                    ? m.images_per_second
                                    : 0.9 * smoothed_images_per_second_ + 0.1 * m.images_per_second;
  const double eta = total_steps_ > m.step && m.step > 0
                         ? m.time_s / double(m.step) * double(total_steps_ - m.step)
                         : 0.0;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && m.step != total_steps_) return;
    last_draw_ = now;
    const int width = 24;
    const int filled = total_steps_ > 0 ? int(width * m.step / total_steps_) : 0;
    std::string bar(filled, '#');
    bar.resize(width, '.');
    std::fprintf(out_, "\r[%s] step %lld/%lld  epoch %d/%d  loss %.4f  %.0f img/s  ETA %s  ",
                 bar.c_str(), static_cast<long long>(m.step), static_cast<long long>(total_steps_),
                 m.epoch, epochs_, m.loss, smoothed_images_per_second_, duration_text(eta).c_str());
    bar_shown_ = true;
  } else {
    // Plain lines: about twenty per run, and the last step.
    const int64_t every = std::max<int64_t>(1, total_steps_ / 20);
    if (m.step - last_plain_step_ < every && m.step != total_steps_) return;
    last_plain_step_ = m.step;
    std::fprintf(out_, "step %lld/%lld epoch %d loss %.4f accuracy %.3f %.0f img/s ETA %s\n",
                 static_cast<long long>(m.step), static_cast<long long>(total_steps_), m.epoch,
                 m.loss, m.accuracy, smoothed_images_per_second_, duration_text(eta).c_str());
  }
  std::fflush(out_);
}

void ProgressPrinter::finish_line() {
  if (bar_shown_) std::fprintf(out_, "\n");
  bar_shown_ = false;
}

void ProgressPrinter::on_eval(const EvalMetrics& e) {
  if (quiet_) return;
  finish_line();
  std::fprintf(out_, "eval at step %lld: %s loss %.4f, accuracy %.2f%%\n",
               static_cast<long long>(e.step), split_name(e.split), e.loss, 100.0 * e.accuracy);
  std::fflush(out_);
}

void ProgressPrinter::on_epoch(const EpochSummary& e) {
  if (quiet_) return;
  finish_line();
  std::fprintf(out_, "epoch %d: %.1f s, %.0f images/s, train loss %.4f\n", e.epoch, e.seconds,
               e.images_per_second, e.train_loss);
  if (epoch_steps_ > 0) {
    const double all = exposed_ms_ + hidden_ms_;
    std::fprintf(out_,
                 "  all-reduce: %.2f ms a step waited for; %.0f%% of the replicas' communication "
                 "hidden under backward (--bucket-mb)\n",
                 allreduce_ms_ / double(epoch_steps_), all > 0 ? 100.0 * hidden_ms_ / all : 0.0);
  }
  epoch_steps_ = 0;
  allreduce_ms_ = exposed_ms_ = hidden_ms_ = 0;
  std::fflush(out_);
}

}  // namespace gpulab::cli
