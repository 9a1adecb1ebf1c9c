// The comparison of the ticked runs against a baseline: speedup bars (throughput, epoch time,
// time to a target accuracy), where each step's time goes, how runs that differ only in replicas
// scale, and a summary table.
#pragma once

#include <vector>

#include <QWidget>

#include "engine/analysis/run_comparison.hpp"
#include "ui/charts/chart_render.hpp"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSplitter;
class QTableWidget;

namespace gpulab::ui {

class ChartView;
class ScalingChart;
struct RunEntry;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  // The runs to compare (the ticked ones, and the baseline), which of them is the baseline (a run
  // id), and every run, which the baseline list offers.
  void set_runs(const std::vector<RunEntry*>& runs, const std::vector<RunEntry*>& every,
                int baseline_id);
  const std::vector<RunEntry*>& runs() const { return runs_; }
  int baseline_index() const { return baseline_index_; }
  void refresh(bool refresh_bars);
  bool replot_if_dirty();
  double target_accuracy() const;  // in [0, 1]; 0: none
  QDoubleSpinBox* target_box() { return target_; }
  QComboBox* baseline_box() { return baseline_; }
  std::vector<RunComparison> rows() const;
  ChartView* speedup_chart() { return speedup_; }
  ChartView* step_time_chart() { return step_time_; }
  ScalingChart* scaling_chart() { return scaling_; }
  // The charts' theme; each names its runs (Compare has no key of the runs above them).
  void set_theme(PlotTheme theme);
  QTableWidget* table() { return table_; }
  QLabel* left_out_label() { return left_out_; }

 signals:
  void baseline_chosen(int id);
  void export_requested(gpulab::ui::ChartView* view, int format);

 private:
  void apply_options();
  void fill_table();
  // Each column as wide as its text; where the table is wider than its view, the device, the
  // all-reduce, the run's name and the epoch time give way in that order, down to 8 characters
  // each (elided, whole in their tips), so the figures stay in view.
  void fit_table_columns();
  void resizeEvent(QResizeEvent* event) override;
  // The charts side by side in equal widths, as their equal stretch means: a splitter keeps the
  // shares it had, and the scaling chart, shown after the others were laid out, kept most of the
  // width (60 % in presenter mode at 1024x768). Done when the scaling chart appears or the theme
  // changes; a width the user dragged stays until then.
  void share_chart_widths();

  std::vector<RunEntry*> runs_;
  std::vector<const RunData*> data_;
  int baseline_index_ = 0;
  QComboBox* baseline_;
  QDoubleSpinBox* target_;
  ChartView* speedup_;
  ChartView* step_time_;
  ScalingChart* scaling_;  // shown for runs that differ only in replicas
  QSplitter* charts_;
  QTableWidget* table_;
  QLabel* left_out_;  // names the columns no run shown has a figure for, left out of the table
};

}  // namespace gpulab::ui
