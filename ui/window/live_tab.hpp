// The Live tab: the five live charts of the ticked runs (in three columns, or fewer where the tab
// is narrow), their x axis and smoothing, a key of the runs when there are many, and the replica
// timeline of a data-parallel run.
#pragma once

#include <QColor>
#include <QWidget>
#include <vector>

#include "ui/charts/chart_render.hpp"

class QComboBox;
class QLabel;
class QSlider;

namespace gpulab::ui {

class ChartGrid;
class ChartView;
class ReplicaTimeline;

class LiveTab : public QWidget {
  Q_OBJECT

 public:
  explicit LiveTab(QWidget* parent = nullptr);

  // The runs must stay alive, in place, until the next call.
  void set_runs(const std::vector<const RunData*>& runs, const std::vector<QColor>& colors);
  void set_theme(const PlotTheme& theme);
  bool run_key_shown() const;  // the runs are named above the charts, not in each legend
  // In presenter mode the runs are named above the charts however few they are: a legend of run
  // names in each chart took the plots' height on a 720-line projector and was cut.
  void set_presenter(bool on);
  const std::vector<ChartView*>& charts() const { return charts_; }
  ChartView* chart(ChartKind kind) const;
  ReplicaTimeline* timeline() const { return timeline_; }
  ChartGrid* chart_grid() const { return grid_; }
  ChartOptions options() const;  // the x axis and smoothing chosen
  void fit_all();
  // Takes in what the runs appended; bars (medians) only when `refresh_bars`.
  void refresh(bool refresh_bars);
  void replot();  // draws what changed

 signals:
  void export_requested(gpulab::ui::ChartView* view, gpulab::ui::ExportFormat format);
  void timeline_export_requested(gpulab::ui::ExportFormat format);

 private:
  void apply_options();
  void update_key();  // the run key, from the charts' names
  void show_key();    // or not: many runs, or any in presenter mode

  std::vector<ChartView*> charts_;
  std::vector<QColor> colors_;  // the shown runs'

  ChartGrid* grid_;  // three columns, or fewer where the tab is narrow
  ReplicaTimeline* timeline_;
  QComboBox* x_axis_;
  QSlider* smoothing_;
  QLabel* smoothing_label_;
  QLabel* run_key_;  // the shown runs' colours and names, once for all charts, when many
  bool presenter_ = false;
};

}  // namespace gpulab::ui
