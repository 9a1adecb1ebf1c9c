// The Compare tab's scaling chart: for ticked runs that differ only in their replica count,
// images/s and scaling efficiency against replicas, with the ideal line and the prediction of
// engine/analysis/scaling's model, and its export (PNG, SVG, PDF, CSV).
#pragma once

#include <optional>
#include <vector>

#include <QWidget>

#include "engine/analysis/scaling.hpp"
#include "ui/charts/chart_render.hpp"

class QCPLegend;
class QCustomPlot;
class QLabel;
class QToolButton;

namespace gpulab::ui {

class ScalingChart : public QWidget {
  Q_OBJECT

 public:
  explicit ScalingChart(QWidget* parent = nullptr);

  // The ticked runs (alive until the next call) and their display names. Hidden when no two of
  // them differ only in replicas.
  void set_runs(const std::vector<const RunData*>& runs, std::vector<std::string> names);
  // Recomputes the study (the runs may have grown) and redraws.
  void refresh();
  void set_theme(const PlotTheme& theme);  // presenter mode's large type
  const std::optional<ScalingStudy>& study() const { return study_; }
  QCustomPlot* plot() { return plot_; }
  QString model_text() const;
  // Which run stands for each replica count and why not another: "1 replica: <name> ⚠ (measured
  // under outside load)"; the chart's menu lets the user take another.
  QString runs_text() const;
  // Takes `run` for its replica count over the automatic choice (from the chart's menu).
  void pick(const RunData* run);
  // The menu's choices: for each replica count with more than one run, the runs not shown.
  std::vector<std::pair<QString, const RunData*>> alternatives() const;
  // The chart as drawn (PNG, PDF, SVG; the widget's size when 0) or the study's numbers (CSV).
  bool export_to(const QString& path, ExportFormat format, QString* error, int width = 0,
                 int height = 0);

 private:
  void draw();
  void resizeEvent(QResizeEvent* event) override;
  void export_dialog(ExportFormat format);
  void show_menu(const QPoint& at);

  std::vector<const RunData*> runs_;
  std::vector<const RunData*> picked_;  // runs chosen from the menu over the automatic choice
  std::vector<std::string> names_;
  std::optional<ScalingStudy> study_;
  PlotTheme theme_;
  QLabel* title_;
  QLabel* model_;
  QCustomPlot* plot_;
  QCPLegend* legend_ = nullptr;  // the plot's, once drawn
};

}  // namespace gpulab::ui
