// Series, charts and comparisons from run records.
#include "engine/analysis/run_series.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "engine/analysis/replica_timeline.hpp"
#include "engine/base/errors.hpp"

namespace gpulab {
namespace {

constexpr int kLanes = 4;
constexpr Metric kLaneMetrics[kLanes] = {Metric::UtilPercent, Metric::MemUsedGiB, Metric::PowerW,
                                         Metric::TemperatureC};

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
  }
  return "?";
}

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
    default: return kNoValue;
  }
}

bool from_evals(Metric m) { return m == Metric::TestLoss || m == Metric::TestAccuracy; }
bool from_samples(Metric m) {
  return m == Metric::UtilPercent || m == Metric::MemUsedGiB || m == Metric::PowerW ||
         m == Metric::TemperatureC;
}

double median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  if (values.empty()) return kNoValue;
  const auto middle = values.begin() + values.size() / 2;
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

const nlohmann::json* find(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

double json_number(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = find(j, path);
  return at && at->is_number() ? at->get<double>() : kNoValue;
}

std::string json_string(const nlohmann::json& j, std::initializer_list<const char*> path,
                        const std::string& fallback = "") {
  const nlohmann::json* at = find(j, path);
  return at && at->is_string() ? at->get<std::string>() : fallback;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// Whether any of the runs can spend time in `phase`: copies to a device need a GPU, all-reduce
// needs more than one replica.
bool phase_applies(int phase, const std::vector<const RunData*>& runs) {
  using Needs = StepPhase::Needs;
  const Needs needs = kStepPhases[phase].needs;
  if (needs == Needs::Nothing) return true;
  for (const RunData* run : runs) {
    const std::string device = json_string(run->info, {"config", "device"}, "cpu");
    const double replicas = json_number(run->info, {"config", "replicas"});
    const double ranks = json_number(run->info, {"config", "ranks"});
    if (needs == Needs::DeviceCopy && device != "cpu") return true;
    if (needs == Needs::SeveralReplicas &&
        ((std::isfinite(replicas) && replicas > 1) || (std::isfinite(ranks) && ranks > 1)))
      return true;
  }
  return false;
}

Panel line_panel(Metric metric) {
  Panel panel;
  panel.y_label = metric_label(metric);
  panel.percent = metric == Metric::TrainAccuracy || metric == Metric::UtilPercent;
  return panel;
}

std::string join_caveats(const std::vector<std::string>& caveats) {
  std::string text;
  for (const std::string& c : caveats) text += (text.empty() ? "" : "; ") + c;
  return text;
}

std::string percent_label(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", 100.0 * fraction);
  return text;
}

}  // namespace

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
  }
  return "?";
}

const char* phase_name(int phase) {
  return phase >= 0 && phase < kPhaseCount ? kStepPhases[phase].name : "?";
}

int phase_index(const std::string& name) {
  for (int p = 0; p < kPhaseCount; ++p)
    if (name == kStepPhases[size_t(p)].name) return p;
  return -1;
}

double phase_ms(const StepTimes& t, int phase) {
  return phase >= 0 && phase < kPhaseCount ? t.*kStepPhases[phase].ms : kNoValue;
}

// --- Thinning large records -------------------------------------------------------------

void thin_for_drawing(RunData& run, size_t max_steps) {
  const size_t count = run.steps.size();
  if (max_steps == 0 || count <= max_steps) return;
  const size_t per = (count + max_steps - 1) / max_steps;
  // The mean of one field over [from, to), missing values left out.
  auto mean = [&](size_t from, size_t to, auto&& field) {
    double sum = 0;
    int n = 0;
    for (size_t i = from; i < to; ++i)
      if (const double v = field(run.steps[i]); std::isfinite(v)) sum += v, ++n;
    return n > 0 ? sum / n : kNoValue;
  };
  std::vector<StepMetrics> thinned;
  thinned.reserve(count / per + 1);
  std::unordered_set<int64_t> kept;
  for (size_t from = 0; from < count; from += per) {
    const size_t to = std::min(count, from + per);
    StepMetrics point = run.steps[to - 1];
    point.replicas.clear();
    point.loss = mean(from, to, [](const StepMetrics& s) { return s.loss; });
    point.accuracy = mean(from, to, [](const StepMetrics& s) { return s.accuracy; });
    point.images_per_second =
        mean(from, to, [](const StepMetrics& s) { return s.images_per_second; });
    point.step_ms = mean(from, to, [](const StepMetrics& s) { return s.step_ms; });
    for (const StepPhase& phase : kStepPhases)
      point.times.*phase.ms =
          mean(from, to, [&](const StepMetrics& s) { return s.times.*phase.ms; });
    point.times.allreduce_hidden_ms =
        mean(from, to, [](const StepMetrics& s) { return s.times.allreduce_hidden_ms; });
    kept.insert(point.step);
    thinned.push_back(std::move(point));
  }
  run.steps = std::move(thinned);
  std::erase_if(run.replica_steps, [&](const ReplicaStep& row) { return !kept.count(row.step); });
  run.steps_per_point = int64_t(per);
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

int64_t steps_per_epoch(const RunData& run) {
  const double planned = json_number(run.info, {"plan", "steps_per_epoch"});
  if (std::isfinite(planned) && planned > 0) return int64_t(planned);
  const double images = json_number(run.info, {"data", "train_images"});
  const double batch = json_number(run.info, {"config", "batch"});
  if (std::isfinite(images) && std::isfinite(batch) && batch > 0)
    return int64_t(std::ceil(images / batch));
  for (const StepMetrics& s : run.steps)
    if (s.epoch > 1) return s.step - 1;
  return 0;
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

// --- Charts -------------------------------------------------------------------------------

const char* chart_kind_name(ChartKind kind) {
  switch (kind) {
    case ChartKind::Loss: return "loss";
    case ChartKind::Accuracy: return "accuracy";
    case ChartKind::StepTime: return "step-time";
    case ChartKind::Throughput: return "throughput";
    case ChartKind::Gpu: return "gpu";
    case ChartKind::Speedup: return "speedup";
  }
  return "?";
}

std::vector<ChartKind> all_chart_kinds() {
  return {ChartKind::Loss,       ChartKind::Accuracy, ChartKind::StepTime,
          ChartKind::Throughput, ChartKind::Gpu,      ChartKind::Speedup};
}

ChartKind parse_chart_kind(const std::string& name) {
  for (ChartKind kind : all_chart_kinds())
    if (name == chart_kind_name(kind)) return kind;
  throw ConfigError("unknown chart \"" + name +
                    "\"; the charts are loss, accuracy, step-time, throughput, gpu, speedup");
}

ChartBuilder::ChartBuilder(ChartKind kind, ChartOptions options)
    : kind_(kind), options_(options) {}

void ChartBuilder::add_line(Panel& panel, int run, Metric metric, const std::string& device,
                            bool markers) {
  LineSeries line;
  line.run = run;
  line.metric = metric;
  line.device = device;
  line.markers = markers;
  line.smoothing = markers || from_samples(metric) ? 1 : std::max(1, options_.smoothing);
  const int panel_index = int(&panel - chart_.panels.data());
  line_index_.emplace_back(panel_index, int(panel.lines.size()));
  panel.lines.push_back(std::move(line));
  builders_.emplace_back(metric, device, panel.lines.back().smoothing);
}

void ChartBuilder::reset(std::vector<const RunData*> runs) {
  runs_ = std::move(runs);
  timelines_.clear();
  builders_.clear();
  line_index_.clear();
  chart_ = Chart{};
  chart_.kind = kind_;
  chart_.runs = display_run_names(runs_);
  for (size_t r = 0; r < runs_.size(); ++r) {
    chart_.runs[r] = flagged_name(chart_.runs[r], *runs_[r]);
    chart_.flags.push_back(join_caveats(run_flags(*runs_[r])));
  }
  chart_.x = options_.x;
  chart_.smoothing = std::max(1, options_.smoothing);
  chart_.x_label = x_axis_label(options_.x);
  for (const RunData* run : runs_) timelines_.emplace_back(options_.x, steps_per_epoch(*run));
  const int count = int(runs_.size());
  auto bar_panel = [&](std::string title, std::string unit, std::vector<std::string> sets) {
    Panel panel;
    panel.title = std::move(title);
    panel.y_label = std::move(unit);
    for (auto& set : sets) {
      BarSet bars;
      bars.label = std::move(set);
      bars.values.assign(count, kNoValue);
      bars.notes.assign(count, "");
      panel.bars.push_back(std::move(bars));
    }
    chart_.panels.push_back(std::move(panel));
  };
  // Panels first (lines keep their panel's index), then the lines.
  switch (kind_) {
    case ChartKind::Loss:
      chart_.title = "Training loss";
      chart_.panels.push_back(line_panel(Metric::Loss));
      for (int r = 0; r < count; ++r) {
        add_line(chart_.panels[0], r, Metric::Loss, "", false);
        add_line(chart_.panels[0], r, Metric::TestLoss, "", true);
      }
      break;
    case ChartKind::Accuracy:
      chart_.title = "Accuracy (dots: test set)";
      chart_.panels.push_back(line_panel(Metric::TrainAccuracy));
      for (int r = 0; r < count; ++r) {
        add_line(chart_.panels[0], r, Metric::TrainAccuracy, "", false);
        add_line(chart_.panels[0], r, Metric::TestAccuracy, "", true);
      }
      break;
    case ChartKind::StepTime: {
      chart_.title = "Time per training step";
      chart_.panels.push_back(line_panel(Metric::StepMs));
      // Only the phases these runs can have: no copy on the CPU, no all-reduce on one device.
      phases_.clear();
      for (int p = 0; p < kPhaseCount; ++p)
        if (phase_applies(p, runs_)) phases_.push_back(p);
      std::vector<std::string> names;
      for (int p : phases_) names.push_back(phase_name(p));
      names.push_back(kOtherPhase);
      // With replicas the phases are the critical path's (engine/backend/step_phases.hpp): say so.
      bar_panel(phase_applies(phase_index("all-reduce"), runs_)
                    ? "Median step, by phase (slowest replica)"
                    : "Median step, by phase",
                "ms", names);
      for (size_t set = 0; set < phases_.size(); ++set) chart_.panels.back().bars[set].phase = phases_[set];
      chart_.panels.back().bars.back().phase = kPhaseCount;
      for (int r = 0; r < count; ++r) add_line(chart_.panels[0], r, Metric::StepMs, "", false);
      break;
    }
    case ChartKind::Throughput:
      chart_.title = "Training throughput";
      chart_.panels.push_back(line_panel(Metric::ImagesPerSecond));
      for (int r = 0; r < count; ++r)
        add_line(chart_.panels[0], r, Metric::ImagesPerSecond, "", false);
      break;
    case ChartKind::Gpu:
      chart_.title = "What the hardware is doing";
      for (Metric lane : kLaneMetrics) chart_.panels.push_back(line_panel(lane));
      break;
    case ChartKind::Speedup: {
      const std::string baseline =
          options_.baseline >= 0 && options_.baseline < count ? chart_.runs[options_.baseline] : "";
      chart_.title = "Compared with " + baseline;
      bar_panel("Throughput (images/s) relative to " + baseline, "×", {"speedup"});
      bar_panel("Epoch-time speedup over " + baseline, "×", {"epoch-time speedup"});
      bar_panel("Time to " + percent_label(options_.target_accuracy) + "% test accuracy", "s",
                {"time to target"});
      break;
    }
  }
  samples_scanned_.assign(count, 0);
  devices_.assign(count, {});
  update(true);
}

bool ChartBuilder::add_device_lines() {
  if (kind_ != ChartKind::Gpu) return false;
  bool added = false;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const auto& samples = runs_[r]->samples;
    for (; samples_scanned_[r] < samples.size(); ++samples_scanned_[r]) {
      const std::string& device = samples[samples_scanned_[r]].device;
      auto& seen = devices_[r];
      if (std::find(seen.begin(), seen.end(), device) != seen.end()) continue;
      seen.push_back(device);
      for (int lane = 0; lane < kLanes; ++lane)
        add_line(chart_.panels[lane], int(r), kLaneMetrics[lane], device, false);
      added = true;
    }
  }
  return added;
}

bool ChartBuilder::update(bool refresh_bars) {
  for (size_t r = 0; r < runs_.size(); ++r) timelines_[r].extend(*runs_[r]);
  bool changed = add_device_lines();
  for (size_t i = 0; i < builders_.size(); ++i) {
    auto [panel, line] = line_index_[i];
    LineSeries& series = chart_.panels[panel].lines[line];
    builders_[i].extend(*runs_[series.run], timelines_[series.run], series.points);
  }
  if (kind_ == ChartKind::Gpu) {
    for (Panel& panel : chart_.panels) {
      const bool has_data = std::any_of(panel.lines.begin(), panel.lines.end(),
                                        [](const LineSeries& l) { return l.points.size() > 0; });
      if (has_data != panel.visible) changed = true;
      panel.visible = has_data;
    }
  }
  if (refresh_bars) refresh_bar_panels();
  return changed;
}

void ChartBuilder::refresh_bar_panels() {
  if (kind_ == ChartKind::StepTime) {
    Panel& panel = chart_.panels[1];
    for (size_t r = 0; r < runs_.size(); ++r) {
      const MedianStep step = median_step(*runs_[r]);
      for (size_t set = 0; set < phases_.size(); ++set)
        panel.bars[set].values[r] = step.phases_ms[size_t(phases_[set])];
      panel.bars.back().values[r] = step.other_ms;
    }
  } else if (kind_ == ChartKind::Speedup) {
    const auto rows = compare_runs(runs_, options_.baseline, options_.target_accuracy);
    const bool baseline_known = options_.baseline >= 0 && options_.baseline < int(rows.size());
    const bool baseline_epochs = baseline_known && rows[size_t(options_.baseline)].full_epochs > 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      chart_.panels[0].bars[0].values[r] = rows[r].speedup;
      chart_.panels[1].bars[0].values[r] = rows[r].epoch_speedup;
      chart_.panels[2].bars[0].values[r] = rows[r].time_to_target_s;
      // An empty place says why it is empty.
      chart_.panels[0].bars[0].notes[r] = std::isfinite(rows[r].speedup) ? "" : "not measured";
      chart_.panels[1].bars[0].notes[r] = std::isfinite(rows[r].epoch_speedup) ? ""
                                          : rows[r].full_epochs == 0           ? "no full epoch"
                                          : !baseline_epochs                   ? "no baseline epoch"
                                                                               : "not measured";
      chart_.panels[2].bars[0].notes[r] = std::isfinite(rows[r].time_to_target_s) ? ""
                                          : options_.target_accuracy > 0          ? "not reached"
                                                                                  : "no target";
    }
  }
}

Chart build_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const ChartOptions& options) {
  ChartBuilder builder(kind, options);
  builder.reset(runs);
  return builder.chart();
}

void write_chart_csv(const Chart& chart, std::ostream& out) {
  out << "panel,run,series,device," << (chart.x == XAxis::Time ? "time_s" : x_axis_name(chart.x))
      << ",value,smoothed\n";
  for (const Panel& panel : chart.panels) {
    const std::string panel_name = csv_field(panel.title.empty() ? panel.y_label : panel.title);
    for (const LineSeries& line : panel.lines) {
      const std::string prefix = panel_name + "," + csv_field(chart.runs[line.run]) + "," +
                                 metric_key(line.metric) + "," + csv_field(line.device) + ",";
      for (size_t i = 0; i < line.points.size(); ++i)
        if (std::isfinite(line.points.y[i]))  // not the gaps where the run was evaluating
          out << prefix << csv_number(line.points.x[i]) << ',' << csv_number(line.points.y[i])
              << ',' << (line.smoothing > 1 ? csv_number(line.points.smoothed[i]) : "") << '\n';
    }
    for (const BarSet& set : panel.bars)
      for (size_t r = 0; r < set.values.size(); ++r)
        out << panel_name << ',' << csv_field(chart.runs[r]) << ',' << csv_field(set.label) << ",,,"
            << csv_number(set.values[r]) << ",\n";
  }
}

MedianStep median_step(const RunData& run) {
  MedianStep out;
  out.phases_ms.assign(kPhaseCount, kNoValue);
  std::vector<const StepMetrics*> steps;
  for (const StepMetrics& s : run.steps)
    if (std::isfinite(s.step_ms)) steps.push_back(&s);
  if (steps.empty()) return out;
  std::sort(steps.begin(), steps.end(),
            [](const StepMetrics* a, const StepMetrics* b) { return a->step_ms < b->step_ms; });
  // The middle tenth (at least the median step itself): one step alone would be noisy.
  const size_t half_band = steps.size() / 20, mid = steps.size() / 2;
  const size_t first = mid - std::min(mid, half_band),
               last = std::min(steps.size(), mid + half_band + 1);
  out.phases_ms.assign(kPhaseCount, 0.0);
  out.step_ms = 0;
  for (size_t i = first; i < last; ++i) {
    out.step_ms += steps[i]->step_ms;
    for (int p = 0; p < kPhaseCount; ++p) out.phases_ms[size_t(p)] += phase_ms(steps[i]->times, p);
  }
  const double count = double(last - first);
  out.step_ms /= count;
  double phases = 0;
  for (double& ms : out.phases_ms) phases += ms /= count;
  out.other_ms = std::max(0.0, out.step_ms - phases);
  out.steps = int(last - first);
  return out;
}

LiveFigures live_figures(const RunData& run, int64_t total_steps) {
  LiveFigures figures;
  if (run.steps.empty()) return figures;
  const StepMetrics& last = run.steps.back();
  figures.step = last.step;
  // Images over time across the last steps: each step's images are its rate times its time.
  double images = 0, seconds = 0;
  for (size_t i = run.steps.size() - std::min(run.steps.size(), kLiveSteps); i < run.steps.size();
       ++i) {
    const StepMetrics& s = run.steps[i];
    if (!(s.step_ms > 0) || !std::isfinite(s.images_per_second)) continue;
    images += s.images_per_second * s.step_ms / 1000.0;
    seconds += s.step_ms / 1000.0;
  }
  if (seconds > 0) figures.images_per_second = images / seconds;
  if (total_steps > 0 && last.step > 0 && last.time_s > 0)
    figures.eta_s =
        last.time_s / double(last.step) * double(std::max<int64_t>(0, total_steps - last.step));
  return figures;
}

// --- Comparisons --------------------------------------------------------------------------

double time_to_target_s(const RunData& run, double target_accuracy) {
  if (!(target_accuracy > 0)) return kNoValue;
  double evaluating_s = 0;  // for records without train_s: the evaluations so far
  for (const EvalMetrics& e : run.evals) {
    double train_s = e.train_s;
    if (!std::isfinite(train_s)) {
      // The step the evaluation followed ended when the evaluation began.
      const auto step =
          std::lower_bound(run.steps.begin(), run.steps.end(), e.step,
                           [](const StepMetrics& s, int64_t at) { return s.step < at; });
      const double began =
          step != run.steps.end() && step->step == e.step ? step->time_s : e.time_s;
      evaluating_s += std::max(0.0, e.time_s - began);
      train_s = e.time_s - evaluating_s;
    }
    if (e.split == Split::Test && e.accuracy >= target_accuracy) return train_s;
  }
  return kNoValue;
}

namespace {

// Whether an epoch of run.json's summary ran all its steps: its own count where the record keeps
// one, else the steps metrics.csv has for it (an older record without either counts as full).
bool full_epoch(const RunData& run, const nlohmann::json& epoch, int64_t steps_per_epoch) {
  if (steps_per_epoch <= 0) return true;
  if (epoch.contains("steps") && epoch["steps"].is_number())
    return epoch["steps"].get<int64_t>() >= steps_per_epoch;
  if (run.steps.empty() || !epoch.contains("epoch") || !epoch["epoch"].is_number()) return true;
  const int number = epoch["epoch"].get<int>();
  int64_t last = 0;
  for (const StepMetrics& s : run.steps)
    if (s.epoch == number) last = std::max(last, s.step);
  return last >= int64_t(number) * steps_per_epoch;
}

void full_epoch_time(const RunData& run, RunComparison& row) {
  const int64_t per_epoch = steps_per_epoch(run);
  double sum = 0;
  if (const auto* epochs = find(run.info, {"summary", "epochs"}); epochs && epochs->is_array())
    for (const auto& e : *epochs)
      if (e.is_object() && e.contains("seconds") && e["seconds"].is_number() &&
          full_epoch(run, e, per_epoch)) {
        sum += e["seconds"].get<double>();
        ++row.full_epochs;
      }
  if (row.full_epochs > 0) {
    row.epoch_seconds = sum / row.full_epochs;
    return;
  }
  // No full epoch: the steps it did, at their mean time, times an epoch's steps.
  double step_ms = 0;
  for (const StepMetrics& s : run.steps) step_ms += s.step_ms;
  if (run.steps.empty() || per_epoch <= 0 || !(step_ms > 0)) return;
  row.epoch_seconds = step_ms / double(run.steps.size()) * double(per_epoch) / 1000.0;
  row.epoch_extrapolated = true;
}

}  // namespace

std::vector<std::string> run_caveats(const RunData& run) {
  std::vector<std::string> caveats;
  if (const auto* shared = find(run.info, {"shared_hardware", "concurrent_with"});
      shared && shared->is_array() && !shared->empty()) {
    std::string names;
    for (const auto& name : *shared)
      if (name.is_string()) names += (names.empty() ? "" : ", ") + name.get<std::string>();
    caveats.push_back("shared its hardware with " + names + " while it ran");
  }
  if (const auto* load = find(run.info, {"outside_load"});
      load && load->is_object() && load->value("under_load", false)) {
    std::ostringstream text;
    text.setf(std::ios::fixed);
    text.precision(1);
    text << "measured under outside load: other programs kept " << load->value("mean_cores", 0.0)
         << " of " << load->value("cores", 0) << " cores busy on average";
    caveats.push_back(text.str());
  }
  return caveats;
}

std::vector<std::string> run_flags(const RunData& run) {
  std::vector<std::string> flags;
  const auto* diverged = find(run.info, {"summary", "diverged"});
  if (diverged && diverged->is_boolean() && diverged->get<bool>()) flags.push_back("diverged");
  const std::string status = run.status();
  if (status == "cancelled")
    flags.push_back("cancelled after " + std::to_string(run.steps.size()) + " steps");
  else if (status == "failed")
    flags.push_back("failed");
  for (std::string& caveat : run_caveats(run)) flags.push_back(std::move(caveat));
  return flags;
}

std::string flag_headline(const std::string& flag) { return flag.substr(0, flag.find(':')); }

std::string flagged_name(const std::string& name, const RunData& run) {
  return run_flags(run).empty() ? name : name + " ⚠";
}

std::vector<RunComparison> compare_runs(const std::vector<const RunData*>& runs, int baseline,
                                        double target_accuracy) {
  std::vector<RunComparison> rows;
  const auto names = display_run_names(runs);
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunData& run = *runs[r];
    RunComparison row;
    row.name = names[r];
    row.status = run.status();
    row.note = run.info.value("message", "");
    if (const auto* diverged = find(run.info, {"summary", "diverged"});
        diverged && diverged->is_boolean() && diverged->get<bool>()) {
      row.status = "diverged";
      row.note = json_string(run.info, {"summary", "divergence"}, "diverged");
    }
    row.device = json_string(run.info, {"config", "device"}, "?");
    if (const auto* devices = find(run.info, {"devices"}); devices && devices->is_array() &&
                                                           !devices->empty())
      row.device = json_string((*devices)[0], {"description"}, row.device);
    row.precision = json_string(run.info, {"config", "precision"}, "fp32");
    const double batch = json_number(run.info, {"config", "batch"});
    row.batch = std::isfinite(batch) ? int(batch) : 0;
    row.steps = int64_t(run.steps.size());
    full_epoch_time(run, row);
    row.images_per_second = json_number(run.info, {"summary", "images_per_second"});
    if (!(row.images_per_second > 0)) {
      std::vector<double> rates;
      for (const StepMetrics& s : run.steps) rates.push_back(s.images_per_second);
      row.images_per_second = median(rates);
    }
    row.caveats = run_caveats(run);
    row.flags = run_flags(run);
    row.test_accuracy = json_number(run.info, {"summary", "test_accuracy"});
    for (const EvalMetrics& e : run.evals) {
      if (e.split != Split::Test) continue;
      if (!std::isfinite(row.test_accuracy) || row.status == "running")
        row.test_accuracy = e.accuracy;
    }
    row.time_to_target_s = time_to_target_s(run, target_accuracy);
    if (replica_count(run) > 1) {
      std::vector<double> exposed, hidden;
      for (const StepMetrics& s : run.steps) {
        exposed.push_back(s.times.allreduce_ms);
        hidden.push_back(s.times.allreduce_hidden_ms);
      }
      row.allreduce_ms = median(exposed);
      row.allreduce_hidden_ms = median(hidden);
      row.overlap_percent = communication_overlap_percent(recent_replica_steps(run, run.steps.size()));
    }
    rows.push_back(row);
  }
  if (baseline >= 0 && baseline < int(rows.size()))
    for (auto& row : rows) {
      row.speedup = row.images_per_second / rows[baseline].images_per_second;
      if (!rows[baseline].epoch_extrapolated && !row.epoch_extrapolated)
        row.epoch_speedup = rows[baseline].epoch_seconds / row.epoch_seconds;
    }
  return rows;
}

std::string epoch_time_text(const RunComparison& row) {
  if (!std::isfinite(row.epoch_seconds)) return row.steps > 0 ? "–" : "– (no steps)";
  char text[96];
  if (!row.epoch_extrapolated) {
    std::snprintf(text, sizeof text, "%.2f s", row.epoch_seconds);
  } else {
    std::snprintf(text, sizeof text, "≈ %.2f s, from %lld step%s", row.epoch_seconds,
                  static_cast<long long>(row.steps), row.steps == 1 ? "" : "s");
  }
  return text;
}

void write_comparison_csv(const std::vector<RunComparison>& rows, std::ostream& out) {
  out << "run,device,batch,precision,status,epoch_seconds,images_per_second,test_accuracy,"
         "time_to_target_s,speedup,epoch_speedup,caveats,allreduce_ms,allreduce_hidden_ms,"
         "overlap_percent,epoch_seconds_from\n";
  for (const auto& r : rows)
    out << csv_field(r.name) << ',' << csv_field(r.device) << ',' << r.batch << ','
        << csv_field(r.precision) << ',' << csv_field(r.status) << ','
        << csv_number(r.epoch_seconds) << ',' << csv_number(r.images_per_second) << ','
        << csv_number(r.test_accuracy) << ',' << csv_number(r.time_to_target_s) << ','
        << csv_number(r.speedup) << ',' << csv_number(r.epoch_speedup) << ','
        << csv_field(join_caveats(r.caveats)) << ',' << csv_number(r.allreduce_ms) << ','
        << csv_number(r.allreduce_hidden_ms) << ',' << csv_number(r.overlap_percent) << ','
        << (!std::isfinite(r.epoch_seconds) ? ""
            : r.epoch_extrapolated          ? "extrapolated from steps"
                                            : "full epochs")
        << '\n';
}

}  // namespace gpulab
