// Charts into QCustomPlot: layout, styles, incremental appends and file export.
#include "ui/chart_render.hpp"

#include <algorithm>
#include <cmath>

#include <QFileInfo>
#include <QSvgGenerator>
#include <qcustomplot.h>

namespace gpulab::ui {
namespace {

QColor lighter(const QColor& c, double toward_white) {
  auto mix = [&](int v) { return int(v + (255 - v) * toward_white); };
  return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

QFont scaled_font(double scale, bool bold = false) {
  QFont font = QApplication::font();
  font.setPointSizeF(font.pointSizeF() * scale);
  font.setBold(bold);
  return font;
}

void style_axis(QCPAxis* axis, const PlotTheme& theme) {
  axis->setLabelFont(scaled_font(theme.font_scale));
  axis->setTickLabelFont(scaled_font(theme.font_scale * 0.9));
  if (theme.presenter) {
    const QPen pen(Qt::black, 2);
    axis->setBasePen(pen);
    axis->setTickPen(pen);
    axis->setSubTickPen(QPen(Qt::black, 1));
  }
}

QString bar_label(const QString& unit, double value) {
  if (unit == QStringLiteral("×")) return QString::number(value, 'f', 2) + "×";
  if (unit == QStringLiteral("s")) return QString::number(value, 'g', 3) + " s";
  return QString::number(value, 'g', 3);
}

// Bars of one panel: stacked phases in their colours, or one bar per run in the run's colour.
DrawnChart::BarPanel draw_bars(QCustomPlot& plot, QCPAxisRect* rect, const Chart& chart,
                               int panel_index, const std::vector<QColor>& colors,
                               const PlotTheme& theme, std::vector<QCPAbstractPlottable*>* legend) {
  const Panel& panel = chart.panels[panel_index];
  DrawnChart::BarPanel drawn;
  drawn.panel = panel_index;
  QCPAxis* x = rect->axis(QCPAxis::atBottom);
  QCPAxis* y = rect->axis(QCPAxis::atLeft);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (size_t r = 0; r < chart.runs.size(); ++r)
    ticker->addTick(double(r + 1), QString::fromStdString(chart.runs[r]));
  x->setTicker(ticker);
  x->setSubTicks(false);
  x->grid()->setVisible(false);
  x->setRange(0.4, chart.runs.size() + 0.6);
  const bool stacked = panel.bars.size() > 1;
  if (stacked) {
    QCPBars* below = nullptr;
    for (size_t set = 0; set < panel.bars.size(); ++set) {
      auto* bars = new QCPBars(x, y);
      bars->setName(QString::fromStdString(panel.bars[set].label));
      bars->setWidth(0.6);
      bars->setPen(Qt::NoPen);
      const int phase = panel.bars[set].phase;
      bars->setBrush(phase_color(phase >= 0 ? phase : int(set)));
      if (below) bars->moveAbove(below);
      below = bars;
      drawn.bars.push_back(bars);
      if (legend) legend->push_back(bars);
    }
  } else {
    for (size_t r = 0; r < chart.runs.size(); ++r) {
      auto* bars = new QCPBars(x, y);
      bars->setName(QString::fromStdString(chart.runs[r]));
      bars->setWidth(0.6);
      bars->setPen(Qt::NoPen);
      bars->setBrush(r < colors.size() ? colors[r] : run_color(int(r)));
      drawn.bars.push_back(bars);
      auto* label = new QCPItemText(&plot);
      label->setClipAxisRect(rect);
      label->position->setAxes(x, y);
      label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
      label->setFont(scaled_font(theme.font_scale * 0.9, true));
      label->setPadding(QMargins(0, 0, 0, 3));
      drawn.labels.push_back(label);
    }
  }
  return drawn;
}

// A bar panel's value axis: from zero to above its tallest stack, with room for the labels.
void fit_bar_axis(QCPAxis* y) {
  y->rescale(true);
  y->setRange(0, y->range().upper > 0 ? y->range().upper * 1.18 : 1.0);
}

}  // namespace

void DataBounds::add(double x, double y) {
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
  // Tableau 10: distinct hues that read on white, in print and for most colour-blind readers.
  static const QColor palette[] = {QColor(0x4E, 0x79, 0xA7), QColor(0xF2, 0x8E, 0x2B),
                                   QColor(0xE1, 0x57, 0x59), QColor(0x59, 0xA1, 0x4F),
                                   QColor(0xB0, 0x7A, 0xA1), QColor(0x76, 0xB7, 0xB2),
                                   QColor(0xED, 0xC9, 0x48), QColor(0xFF, 0x9D, 0xA7),
                                   QColor(0x9C, 0x75, 0x5F), QColor(0x79, 0x70, 0x6E)};
  constexpr int size = int(sizeof palette / sizeof palette[0]);
  return palette[((index % size) + size) % size];
}

QColor phase_color(int phase) {
  static const QColor colors[kPhaseCount] = {QColor(0x9A, 0x9A, 0x9A), QColor(0xF2, 0x8E, 0x2B),
                                             QColor(0x4E, 0x79, 0xA7), QColor(0x59, 0xA1, 0x4F),
                                             QColor(0xB0, 0x7A, 0xA1), QColor(0xE1, 0x57, 0x59)};
  return phase >= 0 && phase < kPhaseCount ? colors[phase] : Qt::gray;
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
  plot.plotLayout()->addElement(row++, 0, title);

  std::vector<QCPAbstractPlottable*> legend;  // one entry per run, then per bar set
  auto* margins = new QCPMarginGroup(&plot);
  const double raw_toward_white = theme.presenter ? 0.45 : 0.6;
  const int smooth_width = theme.presenter ? 3 : 2;
  std::vector<QCPAxisRect*> line_rects;
  std::vector<bool> run_in_legend(chart.runs.size(), false);

  // A chart with a stacked bar panel names its runs under the bars, and its legend keeps to the
  // stacks' parts, so that it stays small.
  const bool stacked_bars = std::any_of(chart.panels.begin(), chart.panels.end(), [](const Panel& p) {
    return p.visible && p.bars.size() > 1;
  });
  int last_line_rect = -1;
  for (size_t p = 0; p < chart.panels.size(); ++p)
    if (chart.panels[p].visible && !chart.panels[p].is_bars()) last_line_rect = int(p);

  for (size_t p = 0; p < chart.panels.size(); ++p) {
    const Panel& panel = chart.panels[p];
    if (!panel.visible) continue;
    if (!panel.title.empty()) {
      auto* heading = new QCPTextElement(&plot, QString::fromStdString(panel.title),
                                         scaled_font(theme.font_scale * 0.95, true));
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
      continue;
    }
    line_rects.push_back(rect);
    if (int(p) == last_line_rect)
      rect->axis(QCPAxis::atBottom)->setLabel(QString::fromStdString(chart.x_label));
    for (size_t l = 0; l < panel.lines.size(); ++l) {
      const LineSeries& line = panel.lines[l];
      const QColor color = line.run < int(colors.size()) ? colors[line.run] : run_color(line.run);
      const QString run = QString::fromStdString(chart.runs[line.run]);
      DrawnLine out;
      out.panel = int(p);
      out.line = int(l);
      out.label = run + (line.device.empty() ? "" : " " + QString::fromStdString(line.device)) +
                  ": " + metric_label(line.metric);
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
                             smoothing ? 1 : smooth_width));
        if (smoothing) {
          out.smooth = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
          out.smooth->setLayer(kDataLayer);
          out.smooth->setName(run);
          out.smooth->setPen(QPen(color, smooth_width));
        }
      }
      if (!run_in_legend[line.run] && !line.markers && !stacked_bars) {
        run_in_legend[line.run] = true;
        legend.push_back(out.smooth ? out.smooth : out.raw);
      }
      drawn.lines.push_back(out);
    }
  }
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
    // In the layout first: a legend gets its plot from there, and its items need the plot.
    auto* box = new QCPLegend;
    plot.plotLayout()->addElement(row, 0, box);
    box->setLayer(QStringLiteral("legend"));
    box->setBorderPen(Qt::NoPen);
    box->setFont(scaled_font(theme.font_scale * 0.95));
    box->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    // As many entries a row as the width holds, so none is cut short.
    box->setWrap(std::clamp(int(plot.width() / (150 * theme.font_scale)), 1, 6));
    for (QCPAbstractPlottable* entry : legend) box->addItem(new QCPPlottableLegendItem(box, entry));
    plot.plotLayout()->setRowStretchFactor(row, 0.001);
    drawn.legend = box;
  }
  plot.plotLayout()->setRowStretchFactor(0, 0.001);
  append_new_points(drawn, chart);
  update_bars(drawn, chart);
  fit_axes(drawn);
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

void update_bars(DrawnChart& drawn, const Chart& chart) {
  for (auto& bar_panel : drawn.bar_panels) {
    const auto rect = std::find(drawn.rect_panel.begin(), drawn.rect_panel.end(), bar_panel.panel);
    QCPAxis* value_axis = drawn.rects[size_t(rect - drawn.rect_panel.begin())]->axis(QCPAxis::atLeft);
    const Panel& panel = chart.panels[bar_panel.panel];
    const QString y_label = QString::fromStdString(panel.y_label);
    if (panel.bars.size() > 1) {
      for (size_t set = 0; set < panel.bars.size(); ++set) {
        QVector<double> keys, values;
        for (size_t r = 0; r < panel.bars[set].values.size(); ++r) {
          const double v = panel.bars[set].values[r];
          keys.push_back(double(r + 1));
          values.push_back(std::isfinite(v) ? v : 0.0);
        }
        bar_panel.bars[set]->setData(keys, values, true);
      }
      fit_bar_axis(value_axis);
      continue;
    }
    const auto& values = panel.bars[0].values;
    for (size_t r = 0; r < values.size() && r < bar_panel.bars.size(); ++r) {
      const double v = values[r];
      if (std::isfinite(v)) {
        bar_panel.bars[r]->setData(QVector<double>{double(r + 1)}, QVector<double>{v}, true);
        bar_panel.labels[r]->position->setCoords(double(r + 1), v);
        bar_panel.labels[r]->setText(bar_label(y_label, v));
        bar_panel.labels[r]->setVisible(true);
      } else {
        bar_panel.bars[r]->data()->clear();
        bar_panel.labels[r]->position->setCoords(double(r + 1), 0);
        bar_panel.labels[r]->setText(QStringLiteral("n/a"));
      }
    }
    fit_bar_axis(value_axis);
  }
}

void fit_axes(const DrawnChart& drawn) {
  bool have_x = false;
  QCPRange x_range;
  for (size_t i = 0; i < drawn.rects.size(); ++i) {
    QCPAxisRect* rect = drawn.rects[i];
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    const bool bars = std::any_of(drawn.bar_panels.begin(), drawn.bar_panels.end(),
                                  [&](const auto& b) { return b.panel == drawn.rect_panel[i]; });
    if (bars) {
      fit_bar_axis(y);
      continue;
    }
    if (rect->graphs().isEmpty()) continue;
    x->rescale(true);
    y->rescale(true);
    const QCPRange r = y->range();
    const double pad = r.size() > 0 ? r.size() * 0.05 : std::max(1e-3, std::abs(r.upper) * 0.05);
    if (drawn.percent[i]) y->setRange(std::min(0.0, r.lower) - 2, std::max(100.0, r.upper) + 2);
    else y->setRange(r.lower - pad, r.upper + pad);
    x_range = have_x ? QCPRange(std::min(x_range.lower, x->range().lower),
                                std::max(x_range.upper, x->range().upper))
                     : x->range();
    have_x = true;
  }
  if (have_x)
    for (size_t i = 0; i < drawn.rects.size(); ++i)
      if (!drawn.rects[i]->graphs().isEmpty()) drawn.rects[i]->axis(QCPAxis::atBottom)->setRange(x_range);
}

bool grow_axes(DrawnChart& drawn) {
  bool changed = false;
  for (size_t i = 0; i < drawn.rects.size(); ++i) {
    const DataBounds& b = drawn.bounds[i];
    if (b.empty) continue;
    QCPAxis* x = drawn.rects[i]->axis(QCPAxis::atBottom);
    QCPAxis* y = drawn.rects[i]->axis(QCPAxis::atLeft);
    // The first points replace whatever range the empty axes had.
    const bool first = !drawn.fitted[i];
    drawn.fitted[i] = true;
    const QCPRange xr = first ? QCPRange(b.x_lo, b.x_lo) : x->range();
    const QCPRange yr = first ? QCPRange(b.y_lo, b.y_lo) : y->range();
    if (first || b.x_lo < xr.lower || b.x_hi > xr.upper) {
      // A quarter of the data's span ahead: the axis moves a few times per doubling of the run.
      const double span = std::max(b.x_hi - b.x_lo, 1e-9);
      x->setRange(std::min(b.x_lo, xr.lower), b.x_hi + 0.25 * span);
      changed = true;
    }
    if (drawn.percent[i]) {
      const QCPRange whole(std::min(0.0, b.y_lo) - 2, std::max(100.0, b.y_hi) + 2);
      if (first || yr.lower > whole.lower || yr.upper < whole.upper) {
        y->setRange(whole);
        changed = true;
      }
    } else if (first || b.y_lo < yr.lower || b.y_hi > yr.upper) {
      const double span = b.y_hi - b.y_lo;
      const double pad = span > 0 ? 0.08 * span : std::max(1e-3, 0.05 * std::abs(b.y_hi));
      y->setRange(b.y_lo - pad, b.y_hi + pad);
      changed = true;
    }
  }
  return changed;
}

std::optional<ExportFormat> export_format_from_name(const QString& name) {
  const QString n = name.toLower();
  if (n == "png") return ExportFormat::Png;
  if (n == "pdf") return ExportFormat::Pdf;
  if (n == "svg") return ExportFormat::Svg;
  if (n == "csv") return ExportFormat::Csv;
  return std::nullopt;
}

QString export_format_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::Png: return "png";
    case ExportFormat::Pdf: return "pdf";
    case ExportFormat::Svg: return "svg";
    case ExportFormat::Csv: return "csv";
  }
  return "?";
}

bool save_plot(QCustomPlot& plot, const QString& path, ExportFormat format, int width, int height,
               QString* error) {
  const QFileInfo info(path);
  if (!info.absoluteDir().exists()) {
    if (error) *error = path + ": the folder " + info.absolutePath() + " does not exist";
    return false;
  }
  bool ok = false;
  switch (format) {
    case ExportFormat::Png: ok = plot.savePng(path, width, height, 1.0); break;
    case ExportFormat::Pdf: ok = plot.savePdf(path, width, height); break;
    case ExportFormat::Svg: {
      QSvgGenerator svg;
      svg.setFileName(path);
      svg.setSize(QSize(width, height));
      svg.setViewBox(QRect(0, 0, width, height));
      svg.setTitle(QStringLiteral("gpulab chart"));
      QCPPainter painter;
      if (painter.begin(&svg)) {
        plot.toPainter(&painter, width, height);
        ok = painter.end();
      }
      break;
    }
    case ExportFormat::Csv:
      if (error) *error = "CSV is written from the chart's data, not from the plot";
      return false;
  }
  if (ok) ok = QFileInfo(path).size() > 0;
  if (!ok && error) *error = path + ": could not be written (is the folder writable and the disk not full?)";
  return ok;
}

}  // namespace gpulab::ui
