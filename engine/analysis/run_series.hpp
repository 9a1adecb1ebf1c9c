// What the charts show, computed from run records without Qt: each metric of each run as points
// on a chosen x axis with a trailing-mean smoothing, whole charts (built at once for export, or
// extended as a live run appends records), their CSV, and runs compared against a baseline.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/records/run_names.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

enum class XAxis { Step, Time, Epoch };
const char* x_axis_name(XAxis axis);   // "step", "time", "epoch"
const char* x_axis_label(XAxis axis);  // "step", "wall time (s)", "epoch"
XAxis parse_x_axis(const std::string& name);  // throws ConfigError

enum class Metric {
  Loss, TrainAccuracy, StepMs, ImagesPerSecond,  // one point per step (metrics.csv)
  TestLoss, TestAccuracy,                        // one point per evaluation (eval.csv)
  UtilPercent, MemUsedGiB, PowerW, TemperatureC  // one point per device sample (telemetry.csv)
};
const char* metric_label(Metric metric);  // with its unit: "accuracy (%)", "power (W)"

// The parts of a step, in the order the stacked breakdown draws them: kStepPhases.
inline constexpr int kPhaseCount = int(kStepPhases.size());
const char* phase_name(int phase);  // data, copy, forward, backward, all-reduce, optimizer
double phase_ms(const StepTimes& times, int phase);
int phase_index(const std::string& name);  // -1 for none
// The breakdown's last part: the step's time outside every phase (the loop, starting threads).
inline constexpr const char* kOtherPhase = "other";

// What the step-time breakdown shows of a run: the steps around its median step time (the middle
// tenth, at least the median step), their mean time and mean phases, and the rest of their time
// as other_ms, so the phases add up to that step. NaN without steps.
struct MedianStep {
  double step_ms = kNoValue;
  std::vector<double> phases_ms;  // by phase number
  double other_ms = kNoValue;
  int steps = 0;
};
MedianStep median_step(const RunData& run);

// Thins a large record for drawing: at most `max_steps` steps, each the mean of a run of
// consecutive steps (placed at the last of them, so the x axes stay true), and replicas.csv rows
// kept for those steps only. Sets run.steps_per_point. Evaluations and samples stay whole.
void thin_for_drawing(RunData& run, size_t max_steps);

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
  double x_at_time(double time_s) const;
  XAxis axis() const { return axis_; }

 private:
  double x_of_step(double step, int epoch) const;
  XAxis axis_;
  int64_t steps_per_epoch_;
  size_t consumed_ = 0;
  std::vector<double> times_, steps_;
};

// Steps per epoch of a run: run.json's plan, else counted from the steps of its first epoch.
int64_t steps_per_epoch(const RunData& run);

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

enum class ChartKind { Loss, Accuracy, StepTime, Throughput, Gpu, Speedup };
const char* chart_kind_name(ChartKind kind);  // loss, accuracy, step-time, throughput, gpu, speedup
ChartKind parse_chart_kind(const std::string& name);  // throws ConfigError listing the kinds
std::vector<ChartKind> all_chart_kinds();

struct ChartOptions {
  XAxis x = XAxis::Step;
  int smoothing = 25;           // trailing-mean window in steps; 1 draws raw values only. Device
                                // samples (a few a second) and evaluations are never smoothed.
  int baseline = 0;             // index into the runs, for the speedup chart
  double target_accuracy = 0.98;  // for "time to target" in the speedup chart
};

struct LineSeries {
  int run = 0;                  // index into Chart::runs
  Metric metric = Metric::Loss;
  std::string device;           // telemetry only
  bool markers = false;         // evaluations: a few points, drawn as dots joined by a line
  int smoothing = 1;            // the trailing-mean window of points.smoothed; 1: raw
  Points points;
};

struct BarSet {
  std::string label;            // a phase, or the quantity
  int phase = -1;               // the step phase (phase_name's number), for its colour
  std::vector<double> values;   // one per category (run); NaN when unknown
  std::vector<std::string> notes;  // per category: why its value is NaN ("not reached"), or empty
};

struct Panel {
  std::string title;            // above the panel, where the chart's title does not say enough
  std::string y_label;
  bool visible = true;          // telemetry lanes no run has data for are hidden
  bool percent = false;         // a 0-100 % scale, shown whole so small wobbles look small
  std::vector<LineSeries> lines;
  std::vector<BarSet> bars;     // a bar panel: categories are the runs, sets stack in order
  bool is_bars() const { return !bars.empty(); }
};

struct Chart {
  ChartKind kind = ChartKind::Loss;
  XAxis x = XAxis::Step;
  int smoothing = 1;
  std::string title, x_label;
  std::vector<std::string> runs;   // display_run_names, made unique, saying what differs; a run
                                   // with run_flags ends in " ⚠"
  std::vector<std::string> flags;  // per run: its run_flags joined, empty when clean
  std::vector<Panel> panels;
};

// Builds a chart and keeps it up to date as its runs grow.
class ChartBuilder {
 public:
  ChartBuilder(ChartKind kind, ChartOptions options);
  // Starts over with these runs; they must stay alive (and in place) until the next reset.
  void reset(std::vector<const RunData*> runs);
  // Takes in what the runs appended since the last call. Returns true when the chart's layout
  // changed (a new series or a lane that became visible): a view must then redraw it whole rather
  // than append. Bar panels are recomputed only when refresh_bars is set (they cost O(steps)).
  bool update(bool refresh_bars = true);
  const Chart& chart() const { return chart_; }
  const ChartOptions& options() const { return options_; }

 private:
  void add_line(Panel& panel, int run, Metric metric, const std::string& device, bool markers);
  bool add_device_lines();
  void refresh_bar_panels();

  ChartKind kind_;
  ChartOptions options_;
  std::vector<const RunData*> runs_;
  std::vector<Timeline> timelines_;
  std::vector<SeriesBuilder> builders_;         // parallel to every line of every panel
  std::vector<std::pair<int, int>> line_index_;  // (panel, line) of each builder
  std::vector<int> phases_;                      // the step phases the bar panel shows
  std::vector<size_t> samples_scanned_;          // per run, for devices seen for the first time
  std::vector<std::vector<std::string>> devices_;
  Chart chart_;
};

Chart build_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const ChartOptions& options);

// One row per point: panel,run,series,device,x,value,smoothed (x is empty for bars).
void write_chart_csv(const Chart& chart, std::ostream& out);

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
  double images_per_second = kNoValue;  // the run's summary, else the median of its steps
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
};
std::vector<RunComparison> compare_runs(const std::vector<const RunData*>& runs, int baseline,
                                        double target_accuracy);
void write_comparison_csv(const std::vector<RunComparison>& rows, std::ostream& out);

// The epoch time as every view writes it: "27.70 s"; for a run with no full epoch
// "≈ 41.20 s, from 66 steps" (extrapolated); a dash without steps.
std::string epoch_time_text(const RunComparison& row);

// Why a run's figures may not be what it gets alone, one short sentence each: it ran at the same
// time as other runs on its hardware (run.json "shared_hardware"), or other programs loaded the
// CPU while it ran ("outside_load"). Empty for a clean measurement.
std::vector<std::string> run_caveats(const RunData& run);

// Everything that marks a run's figures with ⚠ wherever they are shown: its run_caveats, and a
// status that cuts its figures short ("cancelled after 44 steps", "failed", "diverged"). Empty for
// a clean measurement, finished or still running.
std::vector<std::string> run_flags(const RunData& run);
// A flag's headline, where room is short: the part before its first colon ("measured under
// outside load").
std::string flag_headline(const std::string& flag);
// A run's name as charts show it: with " ⚠" when it has flags.
std::string flagged_name(const std::string& name, const RunData& run);

// A live run's figures, one source for its status line and the presenter's headline: images/s
// over its last kLiveSteps steps (NaN before the first step is measured) and the time left at its
// pace so far, evaluations included (NaN without a plan or a step).
inline constexpr size_t kLiveSteps = 20;
struct LiveFigures {
  int64_t step = 0;
  double images_per_second = kNoValue;
  double eta_s = kNoValue;
};
LiveFigures live_figures(const RunData& run, int64_t total_steps);

// Time to a target test accuracy, one definition for every view: the training seconds
// (evaluations and pauses excluded, as EvalMetrics::train_s) at the first test evaluation at or
// above the target; NaN when none reached it. Records from before train_s was kept get it from
// the evaluation's wall time less the time spent in evaluations up to it.
double time_to_target_s(const RunData& run, double target_accuracy);

}  // namespace gpulab
