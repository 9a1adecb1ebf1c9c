// The panels and lines of each chart kind, built from run records and kept current as they grow.
#include "engine/analysis/chart_builder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/records/run_names.hpp"

namespace gpulab {
namespace {

// The hardware chart's lanes, top to bottom; a window too short for all of them drops the lower
// ones first (ui/charts' panels_that_fit), so the SM clock, read beside power to see throttling,
// comes last.
constexpr int kLanes = 5;
constexpr Metric kLaneMetrics[kLanes] = {Metric::UtilPercent, Metric::MemUsedGiB, Metric::PowerW,
                                         Metric::TemperatureC, Metric::SmClockMhz};
// A GPU's memory-controller busy % shares the utilization lane: both are NVML's share of its
// sample period, so one scale reads both, and "busy kernels, idle memory" shows at a glance.
constexpr int kUtilLane = 0;

// Whether any of the runs can spend time in `phase`: copies to a device need a GPU, all-reduce
// needs more than one replica.
bool phase_applies(int phase, const std::vector<const RunData*>& runs) {
  using Needs = StepPhase::Needs;
  const Needs needs = kStepPhases[phase].needs;
  if (needs == Needs::Nothing) return true;
  for (const RunData* run : runs) {
    const std::string device = info_string(run->info, {"config", "device"}, "cpu");
    const double replicas = info_number(run->info, {"config", "replicas"});
    const double ranks = info_number(run->info, {"config", "ranks"});
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

std::string percent_label(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", 100.0 * fraction);
  return text;
}

}  // namespace

std::string lr_mark_label(double lr) {
  char text[32];
  std::snprintf(text, sizeof text, "lr %.3g", lr);
  return text;
}

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

const char* chart_file_stem(ChartKind kind) {
  return kind == ChartKind::Gpu ? "hardware" : chart_kind_name(kind);
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
  marked_names(chart_.runs, chart_.flags);
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
      chart_.brief_title = "Accuracy";
      chart_.panels.push_back(line_panel(Metric::TrainAccuracy));
      for (int r = 0; r < count; ++r) {
        add_line(chart_.panels[0], r, Metric::TrainAccuracy, "", false);
        add_line(chart_.panels[0], r, Metric::TestAccuracy, "", true);
      }
      break;
    case ChartKind::StepTime: {
      chart_.title = "Time per training step";
      chart_.brief_title = "Step time";
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
      for (size_t set = 0; set < phases_.size(); ++set)
        chart_.panels.back().bars[set].phase = phases_[set];
      chart_.panels.back().bars.back().phase = kPhaseCount;
      chart_.panels.back().brief_title = "Step by phase";
      for (int r = 0; r < count; ++r) add_line(chart_.panels[0], r, Metric::StepMs, "", false);
      break;
    }
    case ChartKind::Throughput:
      chart_.title = "Training throughput";
      chart_.brief_title = "Throughput";
      chart_.panels.push_back(line_panel(Metric::ImagesPerSecond));
      for (int r = 0; r < count; ++r)
        add_line(chart_.panels[0], r, Metric::ImagesPerSecond, "", false);
      break;
    case ChartKind::Gpu:
      chart_.title = "What the hardware is doing";
      chart_.brief_title = "Hardware";
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
  changes_marked_.assign(count, 0);
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
      const bool gpu = device.rfind("cuda", 0) == 0;  // the CPU has no SM clock nor controller
      for (int lane = 0; lane < kLanes; ++lane)
        if (gpu || kLaneMetrics[lane] != Metric::SmClockMhz)
          add_line(chart_.panels[lane], int(r), kLaneMetrics[lane], device, false);
      if (gpu) add_line(chart_.panels[kUtilLane], int(r), Metric::MemBusyPercent, device, false);
      added = true;
    }
  }
  return added;
}

bool ChartBuilder::add_marks() {
  if (kind_ == ChartKind::Speedup) return false;  // bars: no x axis to mark
  bool added = false;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const std::vector<LrChange>& changes = runs_[r]->lr_changes;
    for (; changes_marked_[r] < changes.size(); ++changes_marked_[r]) {
      const LrChange& change = changes[changes_marked_[r]];
      const double x = timelines_[r].x(change);
      if (!std::isfinite(x)) continue;
      chart_.marks.push_back({int(r), x, lr_mark_label(change.lr), change.lr});
      added = true;
    }
  }
  return added;
}

void ChartBuilder::marked_names(std::vector<std::string>& names,
                                std::vector<std::string>& flags) const {
  names = display_run_names(runs_);
  flags.clear();
  for (size_t r = 0; r < runs_.size(); ++r) {
    const std::vector<std::string> run = run_flags(*runs_[r]);
    // A reference run drawn beside the learner's is never taken for theirs.
    if (!runs_[r]->recorded_on.empty())
      names[r] += " (reference, recorded on " + runs_[r]->recorded_on + ")";
    names[r] = flagged_name(names[r], run);
    flags.push_back(join_flags(run));
  }
}

bool ChartBuilder::update(bool refresh_bars) {
  if (refresh_bars) {
    // A run flagged since the chart was made (it finished cancelled, under load, diverged) or
    // renamed: the chart starts over, so its legend, key and title say so.
    std::vector<std::string> names, flags;
    marked_names(names, flags);
    if (names != chart_.runs || flags != chart_.flags) {
      reset(runs_);
      return true;
    }
  }
  for (size_t r = 0; r < runs_.size(); ++r) timelines_[r].extend(*runs_[r]);
  bool changed = add_device_lines();
  changed |= add_marks();
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

}  // namespace gpulab
