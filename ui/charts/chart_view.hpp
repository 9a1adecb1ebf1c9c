// One live chart in the window: QCustomPlot showing a ChartBuilder's chart of the ticked runs,
// appended to as runs grow, with zoom and pan, a fit button, autoscroll while the user has not
// moved the view, a hover tooltip with exact values, and export.
#pragma once

#include <functional>
#include <vector>

#include <QWidget>

#include "engine/analysis/chart_builder.hpp"
#include "ui/charts/chart_render.hpp"

class QCustomPlot;
class QMouseEvent;
class QToolButton;

namespace gpulab::ui {

class ChartView : public QWidget {
  Q_OBJECT

 public:
  explicit ChartView(ChartKind kind, QWidget* parent = nullptr);

  ChartKind kind() const { return kind_; }
  // The runs must stay alive, in place, until the next call.
  void set_runs(std::vector<const RunData*> runs, std::vector<QColor> colors);
  void set_options(const ChartOptions& options);
  void set_theme(const PlotTheme& theme);
  // Takes in what the runs appended since the last call; the plot is redrawn by replot_if_dirty,
  // so the window decides how often drawing may cost. Bars (medians, comparisons) are
  // recomputed only when refresh_bars is set.
  void refresh(bool refresh_bars);
  // Draws now if anything changed since the last draw and the chart is visible; returns whether
  // it drew.
  bool replot_if_dirty();
  // Back to all the data, and autoscroll on.
  void fit_view();
  bool autoscroll() const { return autoscroll_; }

  QCustomPlot* plot() { return plot_; }
  const Chart& chart() const { return builder_.chart(); }
  // Writes the chart (PNG, PDF, SVG drawn anew at the given size, or the widget's when 0, with
  // the view's zoom: save_chart) or its data (CSV). Returns false with a message naming the file.
  bool export_to(const QString& path, ExportFormat format, QString* error, int width = 0,
                 int height = 0);

 signals:
  void export_requested(gpulab::ui::ChartView* view, gpulab::ui::ExportFormat format);

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void redraw();
  void show_tooltip(QMouseEvent* event);
  QString bar_tooltip(int rect_index, double key) const;

  ChartKind kind_;
  ChartBuilder builder_;
  std::vector<const RunData*> runs_;
  std::vector<QColor> colors_;
  PlotTheme theme_;
  DrawnChart drawn_;
  QCustomPlot* plot_;
  QWidget* tools_;  // Fit and Export, above the plot; hidden in presenter mode
  bool autoscroll_ = true;
  bool dirty_ = false;        // points arrived since the last draw
  bool bars_dirty_ = false;   // bar heights changed: they are not on the data layer
  int drawn_width_ = 0, drawn_height_ = 0;  // the size the chart was fitted to
};

// An "Export" button whose menu offers `formats` ("PNG…", "Data as CSV…"): every chart's.
QToolButton* export_button(QWidget* parent, const std::vector<ExportFormat>& formats,
                           std::function<void(ExportFormat)> chosen);

}  // namespace gpulab::ui
