// The live per-replica timeline of a data-parallel run: one lane per replica, each recent step
// drawn as compute, waiting for the slowest replica and communication on the run's wall clock,
// like a profiler's trace while the run goes, with the overlap of communication and computation.
#pragma once

#include <vector>

#include <QWidget>

#include "engine/analysis/replica_timeline.hpp"
#include "ui/charts/chart_render.hpp"

class QCustomPlot;
class QLabel;
class QToolButton;

namespace gpulab::ui {

class ReplicaTimeline : public QWidget {
  Q_OBJECT

 public:
  static constexpr size_t kSteps = 50;  // the steps shown: enough to see a rhythm, few to draw

  explicit ReplicaTimeline(QWidget* parent = nullptr);

  // The ticked runs (they must stay alive until the next call); the timeline follows the newest
  // one with two or more replicas, and is a one-line hint when there is none.
  void set_runs(std::vector<const RunData*> runs, std::vector<QString> names);
  // Redraws from its run's newest steps when they changed since the last draw and the timeline is
  // visible. Returns whether it drew.
  bool refresh();

  const RunData* run() const { return run_; }
  int lanes() const { return lanes_; }  // replicas drawn
  const std::vector<ReplicaStepSpan>& steps() const { return steps_; }
  double overlap_percent() const { return overlap_; }  // NaN: no communication measured
  QString overlap_text() const;
  QCustomPlot* plot() { return plot_; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  void set_theme(const PlotTheme& theme);  // presenter mode's large type
  // PNG, PDF or SVG of the timeline as drawn (the widget's size when 0). Returns false with a
  // message naming the file.
  bool export_to(const QString& path, ExportFormat format, QString* error, int width = 0,
                 int height = 0);

 signals:
  void export_requested(gpulab::ui::ExportFormat format);  // its Export menu: the window asks where

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  int hint_height() const;  // the hint's lines at the width the widget has
  void draw();

  std::vector<const RunData*> runs_;
  std::vector<QString> names_;
  const RunData* run_ = nullptr;
  QString run_name_;
  std::vector<ReplicaStepSpan> steps_;
  int lanes_ = 0;
  int64_t drawn_step_ = -1;
  size_t drawn_steps_ = 0;
  double overlap_;
  QLabel* hint_;
  QLabel* title_;
  QLabel* overlap_label_;
  QToolButton* export_;
  QCustomPlot* plot_;
};

// The timeline's colours: compute and communication as the step breakdown's backward and
// all-reduce, waiting a light grey (time nobody works).
QColor replica_phase_color(int replica_phase);  // index into kReplicaPhases

}  // namespace gpulab::ui
