// A live chart widget.
#include "ui/charts/chart_view.hpp"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QMenu>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <sstream>

#include "engine/analysis/chart_csv.hpp"

namespace gpulab::ui {
namespace {

QString number_text(double v) {
  if (std::abs(v) >= 1000) return QString::number(v, 'f', 0);
  return QString::number(v, 'g', 4);
}

}  // namespace

QToolButton* export_button(QWidget* parent, const std::vector<ExportFormat>& formats,
                           std::function<void(ExportFormat)> chosen) {
  auto* save = new QToolButton(parent);
  save->setText(QObject::tr("Export"));
  save->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(save);
  for (ExportFormat format : formats) {
    const QString label = format == ExportFormat::Csv
                              ? QObject::tr("Data as CSV…")
                              : export_format_name(format).toUpper() + QStringLiteral("…");
    menu->addAction(label, parent, [chosen, format] { chosen(format); });
  }
  save->setMenu(menu);
  return save;
}

ChartView::ChartView(ChartKind kind, QWidget* parent)
    : QWidget(parent), kind_(kind), builder_(kind, ChartOptions{}), plot_(new QCustomPlot(this)) {
  setObjectName(QString("chart-") + chart_kind_name(kind));
  // The least a chart can be: the Live tab takes a column away before its charts get this narrow
  // (ChartGrid). High enough for a panel, a title and the axes: below it the plots scroll.
  plot_->setMinimumSize(180, 200);
  plot_->setMouseTracking(true);

  auto* fit = new QToolButton(this);
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Show all the data again and follow new points (or double-click the plot)"));
  connect(fit, &QToolButton::clicked, this, &ChartView::fit_view);
  auto* save = export_button(
      this, {ExportFormat::Png, ExportFormat::Pdf, ExportFormat::Svg, ExportFormat::Csv},
      [this](ExportFormat format) { emit export_requested(this, format); });

  tools_ = new QWidget(this);
  auto* buttons = new QHBoxLayout(tools_);
  buttons->setContentsMargins(0, 0, 0, 0);
  buttons->addStretch();
  buttons->addWidget(fit);
  buttons->addWidget(save);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(0);
  layout->addWidget(tools_);
  layout->addWidget(plot_, 1);

  // Any zoom or drag by the user stops the autoscroll until Fit.
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent*) { autoscroll_ = false; });
  connect(plot_, &QCustomPlot::mouseWheel, this, [this](QWheelEvent*) { autoscroll_ = false; });
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { fit_view(); });
  connect(plot_, &QCustomPlot::mouseMove, this, &ChartView::show_tooltip);
  // The marks' labels follow the x range: growing with a live run, zoomed or dragged.
  connect(plot_, &QCustomPlot::beforeReplot, this, [this] { place_mark_labels(drawn_.marks); });
}

void ChartView::set_runs(std::vector<const RunData*> runs, std::vector<QColor> colors) {
  runs_ = std::move(runs);
  colors_ = std::move(colors);
  builder_.reset(runs_);
  redraw();
}

void ChartView::set_options(const ChartOptions& options) {
  builder_ = ChartBuilder(kind_, options);
  builder_.reset(runs_);
  redraw();
}

void ChartView::set_theme(const PlotTheme& theme) {
  theme_ = theme;
  // Larger type needs a taller plot before it is crushed: below that, the window scrolls. Presenter
  // type on a 720-line screen (a font scale of about 1.6) still draws in 200 px, so both rows of
  // Live charts stay on a 1280x720 projector; at 1080 lines (about 2.4) a plot takes 300.
  plot_->setMinimumHeight(int(200 * std::max(1.0, theme.font_scale / 1.6)));
  // A room sees the plots, not the tools (as the setup and the runs list leave): their row would
  // push the second row of Live charts off a 720-line projector. Double-click still fits a plot,
  // Live's Fit all fits them all and File → Export all charts… exports.
  tools_->setVisible(!theme.presenter);
  redraw();
}

void ChartView::redraw() {
  drawn_width_ = plot_->width();
  drawn_height_ = plot_->height();
  drawn_ = draw_chart(*plot_, builder_.chart(), colors_, theme_);
  autoscroll_ = true;
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ChartView::refresh(bool refresh_bars) {
  if (builder_.update(refresh_bars)) {
    redraw();
    return;
  }
  size_t before = 0, after = 0;
  for (const DrawnLine& line : drawn_.lines) before += line.drawn;
  append_new_points(drawn_, builder_.chart());
  for (const DrawnLine& line : drawn_.lines) after += line.drawn;
  if (refresh_bars && !drawn_.bar_panels.empty()) {
    update_bars(drawn_, builder_.chart());
    bars_dirty_ = true;
  }
  if (after != before) dirty_ = true;
}

bool ChartView::replot_if_dirty() {
  if ((!dirty_ && !bars_dirty_) || !isVisible()) return false;
  // New points within unchanged axes need only the data layer drawn again: no axes, no text.
  const bool axes_moved = autoscroll_ && grow_axes(drawn_);
  if (axes_moved || bars_dirty_) plot_->replot(QCustomPlot::rpImmediateRefresh);
  else plot_->layer(kDataLayer)->replot();
  dirty_ = bars_dirty_ = false;
  return true;
}

void ChartView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!dirty_ && !bars_dirty_) return;
  dirty_ = bars_dirty_ = false;
  if (autoscroll_) fit_axes(drawn_);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ChartView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // The legend wraps by width, and panels, ticks and labels are fitted to the size: lay it out
  // again when the size changed noticeably.
  if (std::abs(plot_->width() - drawn_width_) > 8 ||
      std::abs(plot_->height() - drawn_height_) > 8) {
    const bool follow = autoscroll_;
    redraw();
    autoscroll_ = follow;
  }
}

void ChartView::fit_view() {
  autoscroll_ = true;
  fit_axes(drawn_);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool ChartView::export_to(const QString& path, ExportFormat format, QString* error, int width,
                          int height) {
  if (format == ExportFormat::Csv) {
    std::ostringstream out;
    write_chart_csv(builder_.chart(), out);
    return save_text(path, out.str(), error);
  }
  // Drawn anew at the file's size: the window's plot is fitted to its own (titles shortened,
  // bar values left out where the panel is narrow), and a file names its runs itself. The
  // view's zoom, where the user moved it, is kept.
  return save_chart(builder_.chart(), colors_, path, format, width > 0 ? width : plot_->width(),
                    height > 0 ? height : plot_->height(), error, autoscroll_ ? nullptr : &drawn_);
}

QString ChartView::bar_tooltip(int rect_index, double key) const {
  const Chart& chart = builder_.chart();
  const int run = int(std::lround(key)) - 1;
  if (run < 0 || run >= int(chart.runs.size())) return {};
  const Panel& panel = chart.panels[drawn_.rect_panel[rect_index]];
  QString text = QString::fromStdString(chart.runs[run]) + "\n";
  double total = 0;
  for (const BarSet& set : panel.bars) {
    const double v = set.values[run];
    text += QString::fromStdString(set.label) + ": " +
            (std::isfinite(v) ? number_text(v) : QStringLiteral("n/a")) + "\n";
    if (std::isfinite(v)) total += v;
  }
  if (panel.bars.size() > 1) text += tr("total: %1").arg(number_text(total));
  const std::string what = panel.title.empty() ? panel.y_label : panel.title + " (" + panel.y_label + ")";
  return text.trimmed() + "\n" + QString::fromStdString(what);
}

void ChartView::show_tooltip(QMouseEvent* event) {
  const QPointF pos = event->position();
  for (size_t i = 0; i < drawn_.rects.size(); ++i) {
    QCPAxisRect* rect = drawn_.rects[i];
    if (!rect->rect().contains(pos.toPoint())) continue;
    const double key = rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x());
    const bool bars = std::any_of(drawn_.bar_panels.begin(), drawn_.bar_panels.end(),
                                  [&](const auto& b) { return b.panel == drawn_.rect_panel[i]; });
    if (bars) {
      QToolTip::showText(event->globalPosition().toPoint(), bar_tooltip(int(i), key), plot_);
      return;
    }
    // The nearest point, in pixels, of any line in this rect.
    double best = 24.0 * 24.0;
    QString text;
    for (const DrawnLine& line : drawn_.lines) {
      if (line.raw->keyAxis()->axisRect() != rect || line.raw->data()->isEmpty()) continue;
      for (QCPGraph* graph : {line.smooth, line.raw}) {
        if (!graph) continue;
        auto it = graph->data()->findBegin(key);
        for (auto at : {it, it == graph->data()->constBegin() ? it : it - 1, it + 1 < graph->data()->constEnd() ? it + 1 : it}) {
          if (at == graph->data()->constEnd()) continue;
          const double dx = graph->keyAxis()->coordToPixel(at->key) - pos.x();
          const double dy = graph->valueAxis()->coordToPixel(at->value) - pos.y();
          if (dx * dx + dy * dy >= best) continue;
          best = dx * dx + dy * dy;
          const Points& points = builder_.chart().panels[line.panel].lines[line.line].points;
          const size_t index = size_t(at - graph->data()->constBegin());
          text = line.label + "\n" + QString::fromStdString(builder_.chart().x_label) + " " +
                 number_text(at->key) + ": " +
                 number_text(index < points.size() ? points.y[index] : at->value);
          if (line.smooth && index < points.size())
            text += tr("  (smoothed over %1: %2)")
                        .arg(builder_.chart().smoothing)
                        .arg(number_text(points.smoothed[index]));
        }
      }
    }
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
    return;
  }
  QToolTip::hideText();
}

}  // namespace gpulab::ui
