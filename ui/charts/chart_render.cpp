// Charts into QCustomPlot: the theme, colours, a chart's layout and lines, and appending points.
// Legends and keys (chart_legend), bars (chart_bars), fitting to a size (chart_fit) and files
// (chart_files) are pieces of their own that the window and every export share.
#include "ui/charts/chart_render.hpp"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/analysis/run_figures.hpp"
#include "engine/telemetry/telemetry.hpp"
#include "ui/charts/chart_bars.hpp"
#include "ui/charts/chart_fit.hpp"
#include "ui/charts/chart_legend.hpp"

namespace gpulab::ui {
namespace {

QColor lighter(const QColor& c, double toward_white) {
  auto mix = [&](int v) { return int(v + (255 - v) * toward_white); };
  return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

}  // namespace

QFont scaled_font(double scale, bool bold) {
  QFont font = QApplication::font();
  font.setPointSizeF(font.pointSizeF() * scale);
  font.setBold(bold);
  return font;
}

void style_axis(QCPAxis* axis, const PlotTheme& theme) {
  axis->setLabelFont(scaled_font(theme.font_scale));
  axis->setTickLabelFont(scaled_font(theme.font_scale * 0.9));
  // QCustomPlot's own pens, or thicker ones for a room.
  const QPen pen(Qt::black, theme.presenter ? 2 : 0, Qt::SolidLine, Qt::SquareCap);
  axis->setBasePen(pen);
  axis->setTickPen(pen);
  axis->setSubTickPen(QPen(Qt::black, theme.presenter ? 1 : 0, Qt::SolidLine, Qt::SquareCap));
}

PlotTheme presenter_theme(int height) {
  constexpr double kSmallest = 0.85;  // the numbered bars' key; tick labels are 0.9
  const double normal_px = QFontMetricsF(scaled_font(kSmallest)).height();
  const double wanted_px = kPresenterTextPx * height / 1080.0;
  return {std::max(1.4, wanted_px / std::max(1.0, normal_px)), true, true};
}

void DataBounds::add(double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y)) return;  // a gap in a line
  if (empty) {
    x_lo = x_hi = x;
    y_lo = y_hi = y;
    empty = false;
    return;
  }
  x_lo = std::min(x_lo, x);
  x_hi = std::max(x_hi, x);
  y_lo = std::min(y_lo, y);
  y_hi = std::max(y_hi, y);
}

QColor run_color(int index) {
  // Tableau 10 (distinct hues that read on white, in print and for most colour-blind readers),
  // then darker and stronger hues from Kelly's colours of maximum contrast.
  static const QColor palette[kRunColorCount] = {
      QColor(0x4E, 0x79, 0xA7), QColor(0xF2, 0x8E, 0x2B), QColor(0xE1, 0x57, 0x59),
      QColor(0x59, 0xA1, 0x4F), QColor(0xB0, 0x7A, 0xA1), QColor(0x76, 0xB7, 0xB2),
      QColor(0xED, 0xC9, 0x48), QColor(0xFF, 0x9D, 0xA7), QColor(0x9C, 0x75, 0x5F),
      QColor(0x79, 0x70, 0x6E), QColor(0x1F, 0x2A, 0x44), QColor(0x00, 0x88, 0x56),
      QColor(0xBE, 0x00, 0x32), QColor(0x00, 0x67, 0xA5), QColor(0x60, 0x4E, 0x97),
      QColor(0x8D, 0xB6, 0x00), QColor(0x88, 0x2D, 0x17), QColor(0xC2, 0xB2, 0x80),
      QColor(0x5E, 0x3C, 0x00), QColor(0x9A, 0xCD, 0xF0), QColor(0xB8, 0x00, 0x8A),
      QColor(0x00, 0xB5, 0xD8)};
  return palette[((index % kRunColorCount) + kRunColorCount) % kRunColorCount];
}

QColor phase_color(int phase) {
  static const QColor colors[kPhaseCount] = {QColor(0x9A, 0x9A, 0x9A), QColor(0xF2, 0x8E, 0x2B),
                                             QColor(0x4E, 0x79, 0xA7), QColor(0x59, 0xA1, 0x4F),
                                             QColor(0xB0, 0x7A, 0xA1), QColor(0xE1, 0x57, 0x59)};
  // Past the phases: the step's other time (kOtherPhase), lighter than data's grey.
  return phase >= 0 && phase < kPhaseCount ? colors[phase] : QColor(0xD4, 0xD4, 0xD4);
}

DrawnChart draw_chart(QCustomPlot& plot, const Chart& chart, const std::vector<QColor>& colors,
                      const PlotTheme& theme) {
  plot.clearItems();
  plot.clearPlottables();
  plot.plotLayout()->clear();
  plot.setAutoAddPlottableToLegend(false);
  // Antialiased lines cost several times more to draw; dense training curves gain nothing.
  plot.setNotAntialiasedElements(QCP::aePlottables);
  plot.setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  if (!plot.layer(kDataLayer)) {
    plot.addLayer(kDataLayer, plot.layer(QStringLiteral("main")), QCustomPlot::limAbove);
    plot.layer(kDataLayer)->setMode(QCPLayer::lmBuffered);
  }

  DrawnChart drawn;
  int row = 0;
  auto* title = new QCPTextElement(&plot, QString::fromStdString(chart.title),
                                   scaled_font(theme.font_scale * 1.15, true));
  title->setProperty(kBriefTitle, QString::fromStdString(chart.brief_title));
  plot.plotLayout()->addElement(row++, 0, title);

  std::vector<QCPAbstractPlottable*> legend;  // one entry per run, then per bar set
  const std::vector<QString> run_legend =
      legend_names(chart.runs, scaled_font(theme.font_scale * 0.95), plot.width() - 10);
  auto* margins = new QCPMarginGroup(&plot);
  const double raw_toward_white = theme.presenter ? 0.45 : 0.6;
  const int smooth_width = theme.presenter ? 3 : 2;
  std::vector<QCPAxisRect*> line_rects;
  std::vector<bool> run_in_legend(chart.runs.size(), false);
  std::set<std::pair<int, QString>> device_in_legend;  // (run, "other programs" or a GPU)
  const bool fold = fold_legend(chart, theme);
  std::vector<const LineSeries*> shared_in_legend;  // folded: one line of each kind

  // A chart with a stacked bar panel names its runs under the bars; its legend names the runs of
  // its lines, then the stacks' parts.
  const std::vector<bool> shown = panels_that_fit(plot, chart, theme);
  bool stacked_bars = false, numbered = false;
  int last_line_rect = -1;
  for (size_t p = 0; p < chart.panels.size(); ++p) {
    if (shown[p] && chart.panels[p].bars.size() > 1) stacked_bars = true;
    if (shown[p] && !chart.panels[p].is_bars()) last_line_rect = int(p);
  }

  // The runs and the stack's parts in one legend: two runs anywhere, more on a file's page (an
  // export is 1200x750); a narrow Compare column would crush its panels under them.
  const bool runs_beside_parts =
      chart.runs.size() <= 2 || (plot.width() >= 1000 && plot.height() >= 600 && !theme.presenter);
  const bool one_panel = std::count(shown.begin(), shown.end(), true) == 1;
  for (size_t p = 0; p < chart.panels.size(); ++p) {
    const Panel& panel = chart.panels[p];
    if (!shown[p]) continue;
    if (one_panel && !panel.title.empty()) {
      title->setText(QString::fromStdString(panel.title));  // it says more, and saves a row
      title->setProperty(kBriefTitle, QString::fromStdString(panel.brief_title));
    } else if (!panel.title.empty()) {
      auto* heading = new QCPTextElement(&plot, QString::fromStdString(panel.title),
                                         scaled_font(theme.font_scale * 0.95, true));
      heading->setProperty(kBriefTitle, QString::fromStdString(panel.brief_title));
      plot.plotLayout()->addElement(row, 0, heading);
      plot.plotLayout()->setRowStretchFactor(row++, 0.001);
    }
    auto* rect = new QCPAxisRect(&plot);
    plot.plotLayout()->addElement(row++, 0, rect);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    for (QCPAxis* axis : rect->axes()) style_axis(axis, theme);
    rect->axis(QCPAxis::atLeft)->setLabel(QString::fromStdString(panel.y_label));
    rect->setRangeZoomAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    rect->setRangeDragAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    drawn.rects.push_back(rect);
    drawn.rect_panel.push_back(int(p));
    drawn.bounds.emplace_back();
    drawn.percent.push_back(panel.percent);
    drawn.fitted.push_back(false);
    if (panel.is_bars()) {
      drawn.bar_panels.push_back(draw_bars(plot, rect, chart, int(p), colors, theme,
                                           panel.bars.size() > 1 ? &legend : nullptr));
      numbered |= drawn.bar_panels.back().numbered;
      continue;
    }
    line_rects.push_back(rect);
    if (int(p) == last_line_rect)
      rect->axis(QCPAxis::atBottom)->setLabel(QString::fromStdString(chart.x_label));
    for (size_t l = 0; l < panel.lines.size(); ++l) {
      const LineSeries& line = panel.lines[l];
      const QColor run_colour = line.run < int(colors.size()) ? colors[line.run] : run_color(line.run);
      const DeviceStyle device = device_style(chart, line, run_colour);
      const QColor color = device.color;
      const QString run = QString::fromStdString(chart.runs[line.run]);
      DrawnLine out;
      out.panel = int(p);
      out.line = int(l);
      const QString which = line.device == kOtherProgramsDevice ? " · " + device.legend
                            : line.device.empty()               ? QString()
                                                  : " " + QString::fromStdString(line.device);
      out.label = run + which + ": " + metric_label(line.metric);
      out.raw = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      out.raw->setLayer(kDataLayer);
      out.raw->setName(run);
      if (line.markers) {
        out.raw->setPen(QPen(color, theme.presenter ? 2 : 1, Qt::DashLine));
        out.raw->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, theme.presenter ? 10 : 7));
      } else {
        const bool smoothing = line.smoothing > 1;
        out.raw->setPen(QPen(smoothing ? lighter(color, raw_toward_white) : color,
                             smoothing ? 1 : smooth_width, device.style));
        if (smoothing) {
          out.smooth = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
          out.smooth->setLayer(kDataLayer);
          out.smooth->setName(run);
          out.smooth->setPen(QPen(color, smooth_width));
        }
      }
      if (fold && !device.legend.isEmpty() && line.points.size() > 0 && !stacked_bars &&
          std::none_of(shared_in_legend.begin(), shared_in_legend.end(), [&](const LineSeries* l) {
            return shared_legend_label(*l) == shared_legend_label(line);
          }))
        shared_in_legend.push_back(&line);
      if (fold && line.device == kOtherProgramsDevice) {
        // In the shared entry.
      } else if (!device.legend.isEmpty() && !fold) {
        // Named once per run, where the line has points (a lane with none is not its own).
        if (line.points.size() > 0 && device_in_legend.insert({line.run, device.legend}).second) {
          out.raw->setName(run_legend[size_t(line.run)] + " · " + device.legend);
          legend.push_back(out.raw);
        }
      } else if (!run_in_legend[line.run] && !line.markers && theme.run_legend &&
                 (!stacked_bars || runs_beside_parts)) {
        // Beside a stacked bar panel too, where there is room: its bars are coloured by phase, so
        // the lines' colours are named nowhere else (the step-time chart's lines had no key).
        run_in_legend[line.run] = true;
        (out.smooth ? out.smooth : out.raw)->setName(run_legend[size_t(line.run)]);
        legend.push_back(out.smooth ? out.smooth : out.raw);
      }
      drawn.lines.push_back(out);
    }
  }
  // The folded legend's shared entries: a grey sample of each kind, on a graph with no points.
  for (const LineSeries* line : shared_in_legend) {
    const DeviceStyle device = device_style(chart, *line, QColor(0x50, 0x50, 0x50));
    QCPGraph* sample = plot.addGraph(line_rects.front()->axis(QCPAxis::atBottom),
                                     line_rects.front()->axis(QCPAxis::atLeft));
    const bool darker =
        line->device != kOtherProgramsDevice && line->metric != Metric::MemBusyPercent;
    sample->setPen(QPen(darker ? QColor(0x50, 0x50, 0x50).darker(150) : QColor(0x50, 0x50, 0x50),
                        smooth_width, device.style));
    sample->setName(shared_legend_label(*line));
    legend.push_back(sample);
  }
  drawn.marks = draw_marks(plot, chart, line_rects, colors, theme);
  // Line panels move together along x.
  for (QCPAxisRect* a : line_rects)
    for (QCPAxisRect* b : line_rects)
      if (a != b)
        QObject::connect(a->axis(QCPAxis::atBottom),
                         qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
                         b->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));

  if (drawn.rects.empty()) {
    // Nothing to draw: say why, rather than show empty axes.
    auto* hint = new QCPTextElement(
        &plot,
        chart.runs.empty() ? QObject::tr("No runs shown: press ▶ Train, or tick runs in the list")
                           : QObject::tr("No device samples in these runs yet"),
        scaled_font(theme.font_scale));
    hint->setTextColor(QColor(0x70, 0x70, 0x70));
    plot.plotLayout()->addElement(row++, 0, hint);
  }
  if (!legend.empty()) {
    drawn.legend = add_legend(plot, row, legend, theme);
    plot.plotLayout()->setRowStretchFactor(row++, 0.001);
  }
  if (numbered && theme.run_legend) {  // else the window's key above the charts numbers them
    add_bar_key(plot, row, chart, theme);
    plot.plotLayout()->setRowStretchFactor(row++, 0.001);
  }
  plot.plotLayout()->setRowStretchFactor(0, 0.001);
  append_new_points(drawn, chart);
  update_bars(drawn, chart);
  fit_axes(drawn);
  fit_text(plot, drawn);
  return drawn;
}

void append_new_points(DrawnChart& drawn, const Chart& chart) {
  for (DrawnLine& line : drawn.lines) {
    const Points& points = chart.panels[line.panel].lines[line.line].points;
    if (line.drawn >= points.size()) continue;
    const size_t from = line.drawn, count = points.size() - from;
    const auto rect = std::find(drawn.rect_panel.begin(), drawn.rect_panel.end(), line.panel);
    DataBounds& bounds = drawn.bounds[size_t(rect - drawn.rect_panel.begin())];
    for (size_t i = from; i < points.size(); ++i) {
      bounds.add(points.x[i], points.y[i]);
      if (line.smooth) bounds.add(points.x[i], points.smoothed[i]);
    }
    const QVector<double> x(points.x.begin() + from, points.x.end());
    line.raw->addData(x, QVector<double>(points.y.begin() + from, points.y.end()), true);
    if (line.smooth)
      line.smooth->addData(x, QVector<double>(points.smoothed.begin() + from, points.smoothed.end()),
                           true);
    line.drawn += count;
  }
}

}  // namespace gpulab::ui
