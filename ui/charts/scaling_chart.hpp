// The Compare tab's scaling chart: for ticked runs that differ only in their replica count,
// images/s and scaling efficiency against replicas, with the ideal line and the prediction of
// engine/analysis/scaling's model, and its export (PNG, SVG, PDF, CSV).
#pragma once

#include <optional>
#include <vector>

#include <QWidget>

#include "engine/analysis/scaling.hpp"
#include "ui/charts/chart_render.hpp"

class QCPAxis;
class QCPItemText;
class QCPLegend;
class QCustomPlot;
class QLabel;
class QScrollArea;

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
  // `base_flags` false: without the baseline's flags, which the baseline's warning says.
  QString runs_text(bool base_flags = true) const;
  // Takes `run` for its replica count over the automatic choice (from the chart's menu).
  void pick(const RunData* run);
  // The menu's choices: for each replica count with more than one run, the runs not shown.
  std::vector<std::pair<QString, const RunData*>> alternatives() const;
  // The flagged baseline in one sentence ("⚠ baseline (1 replica) measured under outside load:
  // every efficiency ..."), empty when it is not flagged.
  QString baseline_text() const;
  // The chart drawn for a file (PNG, PDF, SVG; the widget's size when 0) with the flagged
  // baseline above the plot and the caption and model below it, or the study's numbers (CSV).
  bool export_to(const QString& path, ExportFormat format, QString* error, int width = 0,
                 int height = 0);
  // As wide as a chart beside it asks: Compare shares its row among three alike.
  QSize sizeHint() const override;

  static constexpr int kDetailLines = 2;  // the model's box, in lines of its type

 private:
  // The plot drawn and fitted to its size; for a file, with the words the window shows beside it.
  void draw(bool file = false);
  void keep_marks_inside();
  QString caption_html() const;  // the flagged baseline, then runs_text()
  void size_details();
  // Drawn again when the plot's size changes (the chart's, or its caption's lines), and the
  // model's box sized again when its type does (presenter mode).
  bool eventFilter(QObject* watched, QEvent* event) override;
  void export_dialog(ExportFormat format);
  void show_menu(const QPoint& at);

  std::vector<const RunData*> runs_;
  std::vector<const RunData*> picked_;  // runs chosen from the menu over the automatic choice
  std::vector<std::string> names_;
  std::optional<ScalingStudy> study_;
  PlotTheme theme_;
  QLabel* title_;
  QLabel* caption_;       // which run stands for each replica count, every ⚠: always whole
  QLabel* model_;         // the model's text, in details_
  QScrollArea* details_;  // kDetailLines high, scrolling
  QCustomPlot* plot_;
  QCPLegend* legend_ = nullptr;                    // the plot's, once drawn
  std::vector<QCPItemText*> marks_;                // the ⚠ over flagged points
  std::vector<std::pair<QCPAxis*, double>> tops_;  // each panel's top from its data alone
  QSize drawn_size_;                               // the plot's size when last drawn
};

}  // namespace gpulab::ui
