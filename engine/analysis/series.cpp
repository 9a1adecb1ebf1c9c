// A metric of a run as points on an x axis, and its trailing-mean smoothing.
#include "engine/analysis/series.hpp"

#include <algorithm>
#include <cmath>

#include "engine/base/errors.hpp"

namespace gpulab {
namespace {

double step_value(Metric metric, const StepMetrics& s) {
  switch (metric) {
    case Metric::Loss: return s.loss;
    case Metric::TrainAccuracy: return 100.0 * s.accuracy;
    case Metric::StepMs: return s.step_ms;
    case Metric::ImagesPerSecond: return s.images_per_second;
    default: return kNoValue;
  }
}

double sample_value(Metric metric, const DeviceSample& s) {
  switch (metric) {
    case Metric::UtilPercent: return s.util_percent;
    case Metric::MemUsedGiB: return s.mem_used_bytes / double(1 << 30);
    case Metric::PowerW: return s.power_w;
    case Metric::TemperatureC: return s.temperature_c;
    // The CPU's mem_util_percent is its share of host memory, not a controller's busy time.
    case Metric::MemBusyPercent:
      return s.device.rfind("cuda", 0) == 0 ? s.mem_util_percent : kNoValue;
    case Metric::SmClockMhz:
      return s.sm_clock_mhz;
    default: return kNoValue;
  }
}

}  // namespace

const char* metric_key(Metric metric) {
  switch (metric) {
    case Metric::Loss: return "loss";
    case Metric::TrainAccuracy: return "train_accuracy";
    case Metric::StepMs: return "step_ms";
    case Metric::ImagesPerSecond: return "images_per_second";
    case Metric::TestLoss: return "test_loss";
    case Metric::TestAccuracy: return "test_accuracy";
    case Metric::UtilPercent: return "util_percent";
    case Metric::MemUsedGiB: return "mem_used_gib";
    case Metric::PowerW: return "power_w";
    case Metric::TemperatureC: return "temperature_c";
    case Metric::MemBusyPercent:
      return "mem_busy_percent";
    case Metric::SmClockMhz:
      return "sm_clock_mhz";
  }
  return "?";
}

bool from_evals(Metric m) { return m == Metric::TestLoss || m == Metric::TestAccuracy; }
bool from_samples(Metric m) {
  return m == Metric::UtilPercent || m == Metric::MemUsedGiB || m == Metric::PowerW ||
         m == Metric::TemperatureC || m == Metric::MemBusyPercent || m == Metric::SmClockMhz;
}

const char* x_axis_name(XAxis axis) {
  switch (axis) {
    case XAxis::Step: return "step";
    case XAxis::Time: return "time";
    case XAxis::Epoch: return "epoch";
  }
  return "?";
}

const char* x_axis_label(XAxis axis) {
  switch (axis) {
    case XAxis::Step: return "step";
    case XAxis::Time: return "wall time (s)";
    case XAxis::Epoch: return "epoch";
  }
  return "?";
}

XAxis parse_x_axis(const std::string& name) {
  for (XAxis axis : {XAxis::Step, XAxis::Time, XAxis::Epoch})
    if (name == x_axis_name(axis)) return axis;
  throw ConfigError("unknown x axis \"" + name + "\"; use step, time or epoch");
}

const char* metric_label(Metric metric) {
  switch (metric) {
    case Metric::Loss: return "loss";
    case Metric::TrainAccuracy: return "accuracy (%)";
    case Metric::StepMs: return "step time (ms)";
    case Metric::ImagesPerSecond: return "throughput (images/s)";
    case Metric::TestLoss: return "test loss";
    case Metric::TestAccuracy: return "test accuracy (%)";
    case Metric::UtilPercent: return "utilization (%)";
    case Metric::MemUsedGiB: return "memory used (GiB)";
    case Metric::PowerW: return "power (W)";
    case Metric::TemperatureC: return "temperature (°C)";
    case Metric::MemBusyPercent:
      return "memory busy (%)";
    case Metric::SmClockMhz:
      return "SM clock (MHz)";
  }
  return "?";
}

// --- TrailingMean -------------------------------------------------------------------------

TrailingMean::TrailingMean(int window) : window_(std::max(1, window)), ring_(window_, 0.0) {}

double TrailingMean::add(double value) {
  if (filled_ == ring_.size()) sum_ -= ring_[next_];
  else ++filled_;
  ring_[next_] = value;
  sum_ += value;
  next_ = (next_ + 1) % ring_.size();
  largest_ = std::max(largest_, std::abs(value));
  // A running sum keeps the rounding error of the largest value it has held: once one loss of
  // 1e17 has left the window, what remains is noise around the true sum, even below zero. When
  // the sum is small beside the largest value it has held (or not finite), and now and then
  // against slow drift, it is summed afresh from the window.
  if (!(std::abs(sum_) >= largest_ * 0x1p-20) || ++since_resum_ >= (1 << 20)) {
    since_resum_ = 0;
    sum_ = 0;
    largest_ = 0;
    for (size_t i = 0; i < filled_; ++i) {
      sum_ += ring_[i];
      largest_ = std::max(largest_, std::abs(ring_[i]));
    }
  }
  return sum_ / double(filled_);
}

// --- Timeline -----------------------------------------------------------------------------

Timeline::Timeline(XAxis axis, int64_t steps_per_epoch)
    : axis_(axis), steps_per_epoch_(steps_per_epoch) {}

void Timeline::extend(const RunData& run) {
  for (; consumed_ < run.steps.size(); ++consumed_) {
    times_.push_back(run.steps[consumed_].time_s);
    steps_.push_back(double(run.steps[consumed_].step));
  }
}

double Timeline::x_of_step(double step, int epoch) const {
  if (axis_ == XAxis::Step) return step;
  return steps_per_epoch_ > 0 ? step / double(steps_per_epoch_) : double(epoch);
}

double Timeline::x(const StepMetrics& s) const {
  return axis_ == XAxis::Time ? s.time_s : x_of_step(double(s.step), s.epoch);
}

double Timeline::x(const EvalMetrics& e) const {
  return axis_ == XAxis::Time ? e.time_s : x_of_step(double(e.step), e.epoch);
}

double Timeline::x(const LrChange& c) const {
  return axis_ == XAxis::Time ? c.time_s : x_of_step(double(c.step), c.epoch);
}

double Timeline::x_at_time(double time_s) const {
  if (axis_ == XAxis::Time) return time_s;
  // The step reached at time_s, interpolated between the steps around it.
  const auto after = std::upper_bound(times_.begin(), times_.end(), time_s);
  double step = 0;
  if (after == times_.end()) {
    step = steps_.empty() ? 0.0 : steps_.back();
  } else if (after != times_.begin()) {
    const size_t i = size_t(after - times_.begin());
    const double t0 = times_[i - 1], t1 = times_[i];
    const double f = t1 > t0 ? (time_s - t0) / (t1 - t0) : 0.0;
    step = steps_[i - 1] + f * (steps_[i] - steps_[i - 1]);
  } else if (!times_.empty() && times_.front() > 0) {
    step = steps_.front() * std::max(0.0, time_s) / times_.front();
  }
  return x_of_step(step, 0);
}

// --- SeriesBuilder ------------------------------------------------------------------------

SeriesBuilder::SeriesBuilder(Metric metric, std::string device, int smoothing)
    : metric_(metric), device_(std::move(device)), mean_(smoothing) {}

void SeriesBuilder::extend(const RunData& run, const Timeline& timeline, Points& out) {
  auto push = [&](double x, double y) {
    if (!std::isfinite(y) || !std::isfinite(x)) return;
    out.x.push_back(x);
    out.y.push_back(y);
    out.smoothed.push_back(mean_.add(y));
  };
  if (from_evals(metric_)) {
    for (; consumed_ < run.evals.size(); ++consumed_) {
      const EvalMetrics& e = run.evals[consumed_];
      if (e.split != Split::Test) continue;
      push(timeline.x(e), metric_ == Metric::TestLoss ? e.loss : 100.0 * e.accuracy);
    }
  } else if (from_samples(metric_)) {
    for (; consumed_ < run.samples.size(); ++consumed_) {
      const DeviceSample& s = run.samples[consumed_];
      if (s.device == device_) push(timeline.x_at_time(s.time_s), sample_value(metric_, s));
    }
  } else {
    const bool gaps = timeline.axis() == XAxis::Time;
    for (; consumed_ < run.steps.size(); ++consumed_) {
      const StepMetrics& s = run.steps[consumed_];
      bool evaluated = false;  // between the step before and this one
      for (; gaps && evals_seen_ < run.evals.size() && run.evals[evals_seen_].step < s.step;
           ++evals_seen_)
        evaluated |= run.evals[evals_seen_].step == s.step - 1;
      if (evaluated && !out.x.empty()) {
        out.x.push_back(out.x.back());
        out.y.push_back(kNoValue);
        out.smoothed.push_back(kNoValue);
      }
      push(timeline.x(s), step_value(metric_, s));
    }
  }
}

}  // namespace gpulab
