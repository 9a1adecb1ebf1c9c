// A metric of a run as points on a chosen x axis (step, wall time, epoch), extended as a live run
// appends records, with a trailing-mean smoothing; without Qt. Charts are made of these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

enum class XAxis { Step, Time, Epoch };
const char* x_axis_name(XAxis axis);   // "step", "time", "epoch"
const char* x_axis_label(XAxis axis);  // "step", "wall time (s)", "epoch"
XAxis parse_x_axis(const std::string& name);  // throws ConfigError

enum class Metric {
  // One point per step (metrics.csv).
  Loss,
  TrainAccuracy,
  StepMs,
  ImagesPerSecond,
  // One point per evaluation (eval.csv).
  TestLoss,
  TestAccuracy,
  // One point per device sample (telemetry.csv).
  UtilPercent,
  MemUsedGiB,
  PowerW,
  TemperatureC,
  // A GPU's only: its memory controller's busy % (NVML's memory utilization) and its SM clock.
  MemBusyPercent,
  SmClockMhz
};
const char* metric_label(Metric metric);  // with its unit: "accuracy (%)", "power (W)"
// The metric's name in a chart's CSV: "loss", "images_per_second", "power_w".
const char* metric_key(Metric metric);
// Whether its points come from the test evaluations (eval.csv) or the device samples
// (telemetry.csv); the others from the steps.
bool from_evals(Metric metric);
bool from_samples(Metric metric);

// Mean of the last `window` values added (fewer at the start); window 1 passes values through.
class TrailingMean {
 public:
  explicit TrailingMean(int window);
  double add(double value);
  int window() const { return window_; }

 private:
  int window_;
  std::vector<double> ring_;
  size_t next_ = 0, filled_ = 0;
  double sum_ = 0;
  double largest_ = 0;  // the largest magnitude in the sum since it was last summed afresh
  int64_t since_resum_ = 0;
};

// Places a run's records on an x axis. Device samples are placed by time, so on the step and
// epoch axes they are mapped through the steps seen so far: a live sample newer than the last
// step sits at that step (during an evaluation, where the step count stands still, that is right).
class Timeline {
 public:
  Timeline(XAxis axis, int64_t steps_per_epoch);
  void extend(const RunData& run);  // takes the steps appended since the last call
  double x(const StepMetrics& step) const;
  double x(const EvalMetrics& eval) const;
  // Where a learning rate changed: at its step on the step and epoch axes, at the moment it took
  // effect on the time axis.
  double x(const LrChange& change) const;
  double x_at_time(double time_s) const;
  XAxis axis() const { return axis_; }

 private:
  double x_of_step(double step, int epoch) const;
  XAxis axis_;
  int64_t steps_per_epoch_;
  size_t consumed_ = 0;
  std::vector<double> times_, steps_;
};

struct Points {
  std::vector<double> x, y, smoothed;
  size_t size() const { return x.size(); }
};

// One metric of one run (of one device, for telemetry), extended incrementally: each call adds
// the points of the records appended since the previous call. Missing values are skipped. On the
// time axis a step after a test evaluation follows a gap point (x of the step before, y and
// smoothed NaN), so that lines break where the run was evaluating rather than cross the gap.
class SeriesBuilder {
 public:
  SeriesBuilder(Metric metric, std::string device, int smoothing);
  void extend(const RunData& run, const Timeline& timeline, Points& out);

 private:
  Metric metric_;
  std::string device_;
  TrailingMean mean_;
  size_t consumed_ = 0;
  size_t evals_seen_ = 0;  // for the gaps on the time axis
};

}  // namespace gpulab
