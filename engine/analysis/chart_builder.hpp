// engine/analysis: what every chart and table is made of, read from run records and nothing
// else: one run's figures and flags (run_figures), a metric as points with smoothing (series),
// runs against a baseline and time to a target (run_comparison), whole charts (chart_builder),
// their CSV (chart_csv), scaling studies (scaling) and replica timelines. No Qt: the window, the
// chart files and the labs draw what this computes. Over engine/records.
//
// Whole charts from run records, without Qt: the panels of lines or bars each chart kind shows,
// built at once for export or extended as live runs append records, so that the window, the
// exported file and the lab report agree point for point.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/series.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

enum class ChartKind { Loss, Accuracy, StepTime, Throughput, Gpu, Speedup };
const char* chart_kind_name(ChartKind kind);  // loss, accuracy, step-time, throughput, gpu, speedup
// The name of a chart's file in a folder of charts (Export all, the lab report, the Export
// dialog's suggestion): its kind's name, but "hardware" for the hardware chart, which shows the
// CPU where there is no GPU ("gpu.png" of a CPU run misled). `--chart gpu` and lab files keep
// the kind's name.
const char* chart_file_stem(ChartKind kind);
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
  std::string brief_title;      // where the title would not fit on one line: still names it
  std::string y_label;
  bool visible = true;          // telemetry lanes no run has data for are hidden
  bool percent = false;         // a 0-100 % scale, shown whole so small wobbles look small
  bool log_y = false;           // a logarithmic scale: values that span powers of ten
  std::vector<LineSeries> lines;
  std::vector<BarSet> bars;     // a bar panel: categories are the runs, sets stack in order
  bool is_bars() const { return !bars.empty(); }
};

// A moment every line panel of a chart marks (a dashed line with its label at the top): where a
// run's learning rate was changed while it trained.
struct ChartMark {
  int run = 0;        // index into Chart::runs
  double x = 0;       // on the chart's x axis (Timeline::x of the change)
  std::string label;  // "lr 0.1"
  double lr = 0;      // the learning rate from there on, as recorded (the CSV's value)
};
std::string lr_mark_label(double lr);  // "lr 0.1", "lr 0.00025": three significant digits

struct Chart {
  ChartKind kind = ChartKind::Loss;
  XAxis x = XAxis::Step;
  int smoothing = 1;
  std::string title, x_label;
  std::string brief_title;         // where the title would not fit on one line: still names it
  bool log_x = false;              // a logarithmic x axis (the matrix sizes, each a doubling)
  std::vector<std::string> runs;   // display_run_names, made unique, saying what differs; a run
                                   // with run_flags ends in " ⚠"
  std::vector<std::string> flags;  // per run: its run_flags joined, empty when clean
  std::vector<Panel> panels;
  std::vector<ChartMark> marks;  // in the order the runs made them; none on a chart of bars only
};

// Builds a chart and keeps it up to date as its runs grow.
class ChartBuilder {
 public:
  ChartBuilder(ChartKind kind, ChartOptions options);
  // Starts over with these runs; they must stay alive (and in place) until the next reset.
  void reset(std::vector<const RunData*> runs);
  // Takes in what the runs appended since the last call. Returns true when the chart's layout
  // changed (a new series, a lane that became visible, a new mark, a run's name or flags): a
  // view must then redraw it whole rather than append. Bar panels and flags are looked at again
  // only when refresh_bars is set (they cost O(steps)).
  bool update(bool refresh_bars = true);
  const Chart& chart() const { return chart_; }
  const ChartOptions& options() const { return options_; }

 private:
  void add_line(Panel& panel, int run, Metric metric, const std::string& device, bool markers);
  bool add_device_lines();
  bool add_marks();
  void refresh_bar_panels();
  // Each run's display name, with " ⚠" where it has flags, and its flags joined.
  void marked_names(std::vector<std::string>& names, std::vector<std::string>& flags) const;

  ChartKind kind_;
  ChartOptions options_;
  std::vector<const RunData*> runs_;
  std::vector<Timeline> timelines_;
  std::vector<SeriesBuilder> builders_;         // parallel to every line of every panel
  std::vector<std::pair<int, int>> line_index_;  // (panel, line) of each builder
  std::vector<int> phases_;                      // the step phases the bar panel shows
  std::vector<size_t> samples_scanned_;          // per run, for devices seen for the first time
  std::vector<std::vector<std::string>> devices_;
  std::vector<size_t> changes_marked_;           // per run: its lr_changes marked so far
  Chart chart_;
};

Chart build_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const ChartOptions& options);

}  // namespace gpulab
