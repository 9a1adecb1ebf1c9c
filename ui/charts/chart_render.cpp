// Charts into QCustomPlot: layout, styles, incremental appends and file export.
#include "ui/charts/chart_render.hpp"

#include <qcustomplot.h>

#include <QBuffer>
#include <QPageLayout>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <set>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/files.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/telemetry/telemetry.hpp"

namespace gpulab::ui {
namespace {

QColor lighter(const QColor& c, double toward_white) {
  auto mix = [&](int v) { return int(v + (255 - v) * toward_white); };
  return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}


// `text` broken into lines of at most `width` pixels, at ", " or else at spaces; empty when it
// takes more than `max_lines` lines or a word is wider than `width` on its own.
QString wrap_to(const QString& text, const QFont& font, double width, int max_lines) {
  const QFontMetricsF metrics(font);
  if (metrics.horizontalAdvance(text) <= width) return text;
  QStringList words;
  for (const QString& part : text.split(", ")) {
    const QStringList pieces = part.split(' ');
    for (int i = 0; i < pieces.size(); ++i)
      words << pieces[i] + (i + 1 == pieces.size() ? "," : "");
  }
  if (!words.isEmpty()) words.back().chop(1);  // the last part's comma
  QStringList lines;
  QString line;
  for (const QString& word : words) {
    const QString longer = line.isEmpty() ? word : line + " " + word;
    if (metrics.horizontalAdvance(longer) <= width) {
      line = longer;
      continue;
    }
    if (line.isEmpty() || metrics.horizontalAdvance(word) > width) return {};
    lines << line;
    line = word;
  }
  if (!line.isEmpty()) lines << line;
  return lines.size() <= max_lines ? lines.join('\n') : QString();
}

// A short form of an axis label for a small panel: the unit in its brackets ("memory used (GiB)":
// "GiB"), or nothing.
QString short_label(const QString& label) {
  const int open = label.lastIndexOf('('), close = label.lastIndexOf(')');
  return open >= 0 && close > open ? label.mid(open + 1, close - open - 1) : QString();
}

// Legend names: the runs' names, or, where they would take more than a row, only the parts of
// them ("lenet5 cpu, 4 threads, b64" split at ", ") that are not the same for every run.
std::vector<QString> legend_names(const std::vector<std::string>& runs, const QFont& font,
                                  double width) {
  std::vector<QString> names;
  for (const std::string& run : runs) names.push_back(QString::fromStdString(run));
  const QFontMetricsF metrics(font);
  double total = 0;
  for (const QString& name : names) total += metrics.horizontalAdvance(name) + 40;
  if (total <= width || names.size() < 2) return names;
  std::vector<QStringList> parts;
  for (const QString& name : names) parts.push_back(name.split(", "));
  std::vector<QString> compact;
  for (size_t r = 0; r < names.size(); ++r) {
    QStringList kept;
    for (const QString& part : parts[r])
      if (std::any_of(parts.begin(), parts.end(),
                      [&](const QStringList& p) { return !p.contains(part); }))
        kept << part;
    compact.push_back(kept.isEmpty() ? names[r] : kept.join(", "));
  }
  return compact;
}

// How a hardware line is told apart from its run's other lines, which share the run's colour:
// other programs' CPU time is dashed, and a run on several GPUs draws its second and later GPUs
// darker; each of these gets a legend entry "<run> · other programs", "<run> · cuda:1" (past a
// few runs, one shared entry per kind: see fold_legend).
struct DeviceStyle {
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  QString legend;  // what the legend adds to the run's name; empty: no entry of its own
};

DeviceStyle device_style(const Chart& chart, const LineSeries& line, const QColor& color) {
  DeviceStyle style;
  style.color = color;
  if (line.device == kOtherProgramsDevice) {
    style.style = Qt::DashLine;
    style.legend = QObject::tr("other programs");
    return style;
  }
  if (line.device.rfind("cuda", 0) != 0) return style;
  std::vector<std::string> gpus;  // the run's GPUs, in the order they were first sampled
  for (const Panel& panel : chart.panels)
    for (const LineSeries& other : panel.lines)
      if (other.run == line.run && other.device.rfind("cuda", 0) == 0 &&
          std::find(gpus.begin(), gpus.end(), other.device) == gpus.end())
        gpus.push_back(other.device);
  if (gpus.size() < 2) return style;
  const int rank = int(std::find(gpus.begin(), gpus.end(), line.device) - gpus.begin());
  style.color = color.darker(100 + 50 * std::min(rank, 3));
  style.legend = QString::fromStdString(line.device);
  return style;
}

// The folded legend's entry for a kind of hardware line, drawn in grey.
QString shared_legend_label(const LineSeries& line) {
  return line.device == kOtherProgramsDevice ? QObject::tr("other programs (dashed)")
                                             : QObject::tr("a run's further GPUs (darker)");
}

bool fold_legend(const Chart& chart) { return chart.runs.size() >= kFoldLegendRuns; }

// The legend's entries beside the runs' own: "<run> · other programs", "<run> · cuda:1", or,
// folded, the shared ones. `names`: the runs' legend names.
QStringList device_legend_labels(const Chart& chart, const std::vector<QString>& names) {
  QStringList labels;
  const bool fold = fold_legend(chart);
  for (const Panel& panel : chart.panels) {
    if (!panel.visible || panel.is_bars()) continue;
    for (const LineSeries& line : panel.lines) {
      const QString kind = device_style(chart, line, QColor()).legend;
      if (kind.isEmpty() || line.points.size() == 0) continue;
      const QString label =
          fold ? shared_legend_label(line) : names[size_t(line.run)] + QStringLiteral(" · ") + kind;
      if (!labels.contains(label)) labels << label;
    }
  }
  return labels;
}

// Which panels to draw: those with data, less the ones that would be crushed at this size, least
// telling first (a simpler chart rather than an unreadable one).
std::vector<bool> panels_that_fit(const QCustomPlot& plot, const Chart& chart,
                                  const PlotTheme& theme) {
  std::vector<bool> shown;
  for (const Panel& panel : chart.panels) shown.push_back(panel.visible);
  const double tick_h = QFontMetricsF(scaled_font(theme.font_scale * 0.9)).height();
  const double title_h = QFontMetricsF(scaled_font(theme.font_scale * 1.15, true)).height() + 8;
  const double heading_h = QFontMetricsF(scaled_font(theme.font_scale * 0.95, true)).height() + 8;
  // The legend: runs, or the parts of a stacked bar, as many a row as the width holds.
  QStringList entries;
  for (const Panel& panel : chart.panels)
    if (panel.visible && panel.bars.size() > 1)
      for (const BarSet& set : panel.bars) entries << QString::fromStdString(set.label);
  if (entries.isEmpty())
    for (const Panel& panel : chart.panels)
      if (panel.visible && !panel.is_bars() && !panel.lines.empty()) {
        const std::vector<QString> names =
            legend_names(chart.runs, scaled_font(theme.font_scale * 0.95), plot.width() - 10);
        if (theme.run_legend)
          for (const QString& name : names) entries << name;
        entries << device_legend_labels(chart, names);
        break;
      }
  const QFontMetricsF legend_font(scaled_font(theme.font_scale * 0.95));
  double widest = 0;
  for (const QString& entry : entries)
    widest = std::max(widest, legend_font.horizontalAdvance(entry) + 40);
  const int per_row = std::max(1, int((plot.width() - 10) / std::max(1.0, widest)));
  const int legend_rows = (int(entries.size()) + per_row - 1) / per_row;
  const double legend_h = legend_rows * (legend_font.height() + 6) + 8;
  const double panel_h = 4.0 * tick_h;  // a few tick labels apart, and a line to see
  // Run names under bars take as many lines as they are wrapped to.
  int name_lines = 1;
  const double cell = (plot.width() - 100.0) / std::max<size_t>(1, chart.runs.size()) - 6;
  const QFont tick_font = scaled_font(theme.font_scale * 0.9);
  bool numbered = false;
  for (const QString& run : legend_names(chart.runs, tick_font, plot.width() - 10)) {
    const QString wrapped = wrap_to(run, tick_font, cell, 3);
    numbered |= wrapped.isEmpty();
    name_lines = std::max<int>(name_lines, int(wrapped.count('\n')) + 1);
  }
  // Numbered bars have their key under the chart: about as many lines as its text is widths.
  double key_h = 0;
  if (numbered && theme.run_legend &&
      std::any_of(chart.panels.begin(), chart.panels.end(),
                  [](const Panel& p) { return p.visible && p.is_bars(); })) {
    const QFont key_font = scaled_font(theme.font_scale * 0.85);
    double key_w = 0;
    for (const QString& name : legend_names(chart.runs, key_font, plot.width() - 20))
      key_w += QFontMetricsF(key_font).horizontalAdvance("00 " + name + "   ");
    key_h = (std::ceil(key_w / std::max(1.0, plot.width() - 20.0)) + 0.5) *
            QFontMetricsF(key_font).height();
  }
  auto needed = [&] {
    double h = title_h + legend_h + key_h + tick_h + 6;  // the x axis label
    const bool one = std::count(shown.begin(), shown.end(), true) == 1;
    for (size_t p = 0; p < shown.size(); ++p)
      if (shown[p])
        h += (chart.panels[p].title.empty() || one ? 0 : heading_h) + 18 + panel_h +
             (chart.panels[p].is_bars() ? name_lines : 1) * tick_h;
    return h;
  };
  // The order to leave panels out in.
  std::vector<int> order;
  if (chart.kind == ChartKind::StepTime)
    order = {0};  // the bars say where the time goes
  else
    for (int p = int(chart.panels.size()) - 1; p > 0; --p) order.push_back(p);
  for (int p : order) {
    if (needed() <= plot.height()) break;
    if (std::count(shown.begin(), shown.end(), true) > 1) shown[size_t(p)] = false;
  }
  return shown;
}

QString bar_label(const QString& unit, double value) {
  if (unit == QStringLiteral("×")) return QString::number(value, 'f', 2) + "×";
  if (unit == QStringLiteral("s")) return QString::number(value, 'g', 3) + " s";
  return QString::number(value, 'g', 3);
}

// Whether a stacked bar set of the step's other time is worth a legend entry: only where it is
// a visible part (2 % or more) of some run's bar; a sliver needs no name, and the key no row.
bool other_time_shows(const Panel& panel, size_t other) {
  for (size_t r = 0; r < panel.bars[other].values.size(); ++r) {
    double total = 0;
    for (const BarSet& set : panel.bars)
      if (std::isfinite(set.values[r])) total += set.values[r];
    if (total > 0 && panel.bars[other].values[r] >= 0.02 * total) return true;
  }
  return false;
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
  // Run names under their bars: on one line, wrapped, or when even that does not fit, numbers
  // with a key under the chart (category_key).
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const QFont tick_font = scaled_font(theme.font_scale * 0.9);
  const double cell = (plot.width() - 100.0) / std::max<size_t>(1, chart.runs.size()) - 6;
  std::vector<QString> names;
  for (const QString& run : legend_names(chart.runs, tick_font, plot.width() - 10)) {
    names.push_back(wrap_to(run, tick_font, cell, 3));
    if (names.back().isEmpty()) drawn.numbered = true;
  }
  for (size_t r = 0; r < chart.runs.size(); ++r)
    ticker->addTick(double(r + 1), drawn.numbered ? QString::number(r + 1) : names[r]);
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
      if (legend && (panel.bars[set].label != kOtherPhase || other_time_shows(panel, set)))
        legend->push_back(bars);
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
      label->setFont(scaled_font(theme.font_scale * (chart.runs.size() > 8 ? 0.75 : 0.9), true));
      label->setPadding(QMargins(0, 0, 0, 3));
      drawn.labels.push_back(label);
    }
    drawn.empty_note = new QCPItemText(&plot);
    drawn.empty_note->setClipAxisRect(rect);
    drawn.empty_note->position->setType(QCPItemPosition::ptAxisRectRatio);
    drawn.empty_note->position->setAxisRect(rect);
    drawn.empty_note->position->setCoords(0.5, 0.5);
    drawn.empty_note->setPositionAlignment(Qt::AlignCenter);
    drawn.empty_note->setFont(scaled_font(theme.font_scale * 0.9));
    drawn.empty_note->setColor(QColor(0x60, 0x60, 0x60));
    drawn.empty_note->setVisible(false);
  }
  return drawn;
}

// The one reason every bar of a panel is empty, or "" where a bar has a value or the reasons
// differ.
std::string shared_empty_note(const BarSet& set) {
  if (set.values.empty() || set.notes.size() != set.values.size()) return {};
  for (size_t r = 0; r < set.values.size(); ++r)
    if (std::isfinite(set.values[r]) || set.notes[r] != set.notes.front()) return {};
  return set.notes.front();
}

// A bar panel's value axis: from zero to above its tallest stack, with room for the labels
// (`label_px` high) above it.
void fit_bar_axis(QCPAxis* y, double label_px = 0) {
  y->rescale(true);
  const double height = y->axisRect()->height();
  const double room = height > 3 * label_px ? height / (height - label_px - 6) : 1.18;
  y->setRange(0, y->range().upper > 0 ? y->range().upper * std::max(1.08, room) : 1.0);
}

// A value label over a bar that reaches the top of its axis would be cut off by the panel: it
// goes inside the top of the bar instead, so it stays visible.
void keep_labels_inside(DrawnChart::BarPanel& bar_panel, QCPAxis* value_axis) {
  const QCPAxisRect* rect = value_axis->axisRect();
  for (QCPItemText* label : bar_panel.labels) {
    const double value = label->position->value();
    const double height = QFontMetricsF(label->font()).height() + 3;
    const bool inside = value > 0 && value_axis->coordToPixel(value) - height < rect->top();
    label->setPositionAlignment((inside ? Qt::AlignTop : Qt::AlignBottom) | Qt::AlignHCenter);
    label->setPadding(inside ? QMargins(0, 3, 0, 0) : QMargins(0, 0, 0, 3));
  }
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
  const bool fold = fold_legend(chart);
  std::vector<const LineSeries*> shared_in_legend;  // folded: one line of each kind

  // A chart with a stacked bar panel names its runs under the bars, and its legend keeps to the
  // stacks' parts, so that it stays small.
  const std::vector<bool> shown = panels_that_fit(plot, chart, theme);
  bool stacked_bars = false, numbered = false;
  int last_line_rect = -1;
  for (size_t p = 0; p < chart.panels.size(); ++p) {
    if (shown[p] && chart.panels[p].bars.size() > 1) stacked_bars = true;
    if (shown[p] && !chart.panels[p].is_bars()) last_line_rect = int(p);
  }

  const bool one_panel = std::count(shown.begin(), shown.end(), true) == 1;
  for (size_t p = 0; p < chart.panels.size(); ++p) {
    const Panel& panel = chart.panels[p];
    if (!shown[p]) continue;
    if (one_panel && !panel.title.empty()) {
      title->setText(QString::fromStdString(panel.title));  // it says more, and saves a row
    } else if (!panel.title.empty()) {
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
      } else if (!run_in_legend[line.run] && !line.markers && !stacked_bars && theme.run_legend) {
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
    sample->setPen(QPen(line->device == kOtherProgramsDevice ? QColor(0x50, 0x50, 0x50)
                                                             : QColor(0x50, 0x50, 0x50).darker(150),
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
    // In the layout first: a legend gets its plot from there, and its items need the plot.
    auto* box = new QCPLegend;
    plot.plotLayout()->addElement(row, 0, box);
    box->setLayer(QStringLiteral("legend"));
    box->setBorderPen(Qt::NoPen);
    box->setFont(scaled_font(theme.font_scale * 0.95));
    box->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    int widest = 1;
    for (QCPAbstractPlottable* entry : legend) {
      auto* item = new QCPPlottableLegendItem(box, entry);
      box->addItem(item);
      widest =
          std::max(widest, static_cast<QCPLayoutElement*>(item)->minimumOuterSizeHint().width());
    }
    // As many entries a row as the width holds, so none is cut short.
    box->setWrap(std::max(1, int((plot.width() - 10) / (widest + box->columnSpacing()))));
    box->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // the entries, rearranged to the wrap
    plot.plotLayout()->setRowStretchFactor(row++, 0.001);
    drawn.legend = box;
  }
  if (numbered && theme.run_legend) {  // else the window's key above the charts numbers them
    // The key to the numbered bars: "1 lenet5 cpu, 1 thread · 2 ...", wrapped to the width.
    const QFont font = scaled_font(theme.font_scale * 0.85);
    const QFontMetricsF metrics(font);
    QStringList lines;
    QString line;
    const std::vector<QString> names = legend_names(chart.runs, font, plot.width() - 20);
    for (size_t r = 0; r < chart.runs.size(); ++r) {
      const QString entry = QString("%1 %2").arg(r + 1).arg(names[r]);
      const QString longer = line.isEmpty() ? entry : line + "   " + entry;
      if (!line.isEmpty() && metrics.horizontalAdvance(longer) > plot.width() - 20) {
        lines << line;
        line = entry;
      } else {
        line = longer;
      }
    }
    if (!line.isEmpty()) lines << line;
    auto* key = new QCPTextElement(&plot, lines.join('\n'), font);
    plot.plotLayout()->addElement(row, 0, key);
    plot.plotLayout()->setRowStretchFactor(row++, 0.001);
  }
  plot.plotLayout()->setRowStretchFactor(0, 0.001);
  append_new_points(drawn, chart);
  update_bars(drawn, chart);
  fit_axes(drawn);
  fit_text(plot, drawn);
  return drawn;
}

void fit_text(QCustomPlot& plot, DrawnChart& drawn) {
  auto lay_out = [&] {
    plot.setViewport(QRect(0, 0, plot.width(), plot.height()));
    plot.plotLayout()->setOuterRect(plot.viewport());
    plot.plotLayout()->update(QCPLayoutElement::upPreparation);
    plot.plotLayout()->update(QCPLayoutElement::upMargins);
    plot.plotLayout()->update(QCPLayoutElement::upLayout);
  };
  lay_out();
  // Titles: elided to the width rather than cut at both ends.
  for (int i = 0; i < plot.plotLayout()->elementCount(); ++i)
    if (auto* text = qobject_cast<QCPTextElement*>(plot.plotLayout()->elementAt(i))) {
      if (text->text().contains('\n')) continue;
      const QFontMetricsF metrics(text->font());
      if (metrics.horizontalAdvance(text->text()) > plot.width() - 8)
        text->setText(metrics.elidedText(text->text(), Qt::ElideRight, plot.width() - 8));
    }
  for (QCPAxisRect* rect : drawn.rects) {
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    const double tick_h = QFontMetricsF(y->tickLabelFont()).height();
    // As many value ticks as the height holds with room between them.
    // At least two (three where they fit): with one, a range such as 0 to 1.8 gets a step of 2
    // and shows "0" alone. A panel too low for two labels keeps one rather than overlap them.
    const int fewest = rect->height() >= 4 * tick_h ? 3 : rect->height() >= 1.5 * tick_h ? 2 : 1;
    y->ticker()->setTickCount(std::clamp(int(rect->height() / (2.5 * tick_h)), fewest, 5));
    if (!qSharedPointerDynamicCast<QCPAxisTickerText>(x->ticker())) {
      const double label_w = QFontMetricsF(x->tickLabelFont()).horizontalAdvance("8888.8");
      // Two at least: with one, a narrow chart's only tick can fall past the axis's end (500 on
      // a 470-step axis) and leave it without a number (presenter mode at 1024x768).
      x->ticker()->setTickCount(std::clamp(int(rect->width() / (2.0 * label_w)), 2, 5));
      // A tick at the right end has half its label beyond the axis: room for it in the margin.
      rect->setMinimumMargins(QMargins(0, 0, int(label_w / 2), 0));
    }
    // The top tick's label reaches half its height above the panel, and the bottom one's as far
    // below, toward the x axis's labels: room for both in large type.
    QMargins margins = rect->minimumMargins();
    margins.setTop(int(tick_h / 2));
    rect->setMinimumMargins(margins);
    x->setTickLabelPadding(std::max(5, int(tick_h / 2) - 2));
  }
  lay_out();
  for (QCPAxisRect* rect : drawn.rects) {
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    // A label longer than its panel is high: its unit alone, or nothing. It is centred on the
    // plotting area, which sits above the middle of the panel.
    const QFontMetricsF label(y->labelFont());
    const double room = 2 * std::min(rect->center().y() - rect->outerRect().top(),
                                     rect->outerRect().bottom() - rect->center().y()) -
                        4;
    if (label.horizontalAdvance(y->label()) > room) {
      const QString unit = short_label(y->label());
      y->setLabel(label.horizontalAdvance(unit) <= room ? unit : QString());
    }
  }
  lay_out();
  // Bar value labels: only where they fit beside each other and above the bars.
  for (auto& bar_panel : drawn.bar_panels) {
    if (bar_panel.labels.empty()) continue;
    QCPAxis* x = bar_panel.bars.front()->keyAxis();
    const double cell = std::abs(x->coordToPixel(2) - x->coordToPixel(1));
    const QCPAxisRect* rect = x->axisRect();
    bool fit = true;
    for (QCPItemText* label : bar_panel.labels) {
      const QFontMetricsF metrics(label->font());
      const QRectF text = metrics.boundingRect(QRectF(), Qt::AlignCenter, label->text());
      fit &= text.width() + 4 <= cell && 3 * (metrics.height() + 3) <= rect->height();
    }
    bar_panel.labels_fit = fit;
    const bool one_note = bar_panel.empty_note && bar_panel.empty_note->visible();
    for (QCPItemText* label : bar_panel.labels)
      label->setVisible(fit && !one_note && label->text() != "n/a");
    fit_bar_axis(x->axisRect()->axis(QCPAxis::atLeft),
                 fit ? QFontMetricsF(bar_panel.labels[0]->font()).height() + 3 : 0);
    keep_labels_inside(bar_panel, x->axisRect()->axis(QCPAxis::atLeft));
  }
  place_mark_labels(drawn.marks);
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
        bar_panel.labels[r]->setVisible(bar_panel.labels_fit);
      } else {
        // Empty: why, where the bar would stand ("not reached", "no full epoch").
        const std::string& note = r < panel.bars[0].notes.size() ? panel.bars[0].notes[r] : "";
        bar_panel.bars[r]->data()->clear();
        bar_panel.labels[r]->position->setCoords(double(r + 1), 0);
        // On two lines: a note is read in a bar's narrow cell.
        QString text = QString::fromStdString(note);
        if (const qsizetype space = text.lastIndexOf(' '); space > 0) text[space] = '\n';
        bar_panel.labels[r]->setText(note.empty() ? QStringLiteral("n/a") : text);
        bar_panel.labels[r]->setVisible(bar_panel.labels_fit && !note.empty());
      }
    }
    fit_bar_axis(value_axis, bar_panel.labels_fit && !bar_panel.labels.empty()
                                 ? QFontMetricsF(bar_panel.labels[0]->font()).height() + 3
                                 : 0);
    keep_labels_inside(bar_panel, value_axis);
    if (bar_panel.empty_note) {
      const std::string note = shared_empty_note(panel.bars[0]);
      bar_panel.empty_note->setText(QString::fromStdString(note) + QObject::tr("\n(every run)"));
      bar_panel.empty_note->setVisible(!note.empty());
      if (!note.empty())
        for (QCPItemText* label : bar_panel.labels) label->setVisible(false);
    }
  }
}

void fit_axes(const DrawnChart& drawn) {
  bool have_x = false;
  QCPRange x_range;
  for (size_t i = 0; i < drawn.rects.size(); ++i) {
    QCPAxisRect* rect = drawn.rects[i];
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    const auto bars = std::find_if(drawn.bar_panels.begin(), drawn.bar_panels.end(),
                                   [&](const auto& b) { return b.panel == drawn.rect_panel[i]; });
    if (bars != drawn.bar_panels.end()) {
      fit_bar_axis(y, bars->labels_fit && !bars->labels.empty()
                          ? QFontMetricsF(bars->labels[0]->font()).height() + 3
                          : 0);
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

bool may_write(const QString& path, QString* error) {
  try {
    check_output_file(path.toStdString(), "Export");
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

bool save_text(const QString& path, const std::string& text, QString* error) {
  if (!may_write(path, error)) return false;
  try {
    write_file_atomically(path.toStdString(), text);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

namespace {

// The plot as `format` in memory, as QCustomPlot's own savePng and savePdf draw it (96 dpi; a
// page of width x height points): the bytes then go to the file in one atomic write, since Qt's
// writers fill the file in place and say nothing of a full disk.
QByteArray plot_bytes(QCustomPlot& plot, ExportFormat format, int width, int height) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  switch (format) {
    case ExportFormat::Png: {
      QImage image = plot.toPixmap(width, height, 1.0).toImage();
      const int dots_per_meter = int(std::lround(96 / 0.0254));
      image.setDotsPerMeterX(dots_per_meter);
      image.setDotsPerMeterY(dots_per_meter);
      if (!image.save(&buffer, "PNG")) return {};
      break;
    }
    case ExportFormat::Pdf: {
      QPdfWriter pdf(&buffer);
      pdf.setPageLayout(QPageLayout(
          QPageSize(QSize(width, height), QPageSize::Point, QString(), QPageSize::ExactMatch),
          QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
      pdf.setCreator(QStringLiteral("gpulab"));
      QCPPainter painter;
      if (!painter.begin(&pdf)) return {};
      painter.setMode(QCPPainter::pmVectorized);
      painter.setWindow(QRect(0, 0, width, height));
      plot.toPainter(&painter, width, height);
      if (!painter.end()) return {};
      break;
    }
    case ExportFormat::Svg: {
      QSvgGenerator svg;
      svg.setOutputDevice(&buffer);
      svg.setSize(QSize(width, height));
      svg.setViewBox(QRect(0, 0, width, height));
      svg.setTitle(QStringLiteral("gpulab chart"));
      QCPPainter painter;
      if (!painter.begin(&svg)) return {};
      plot.toPainter(&painter, width, height);
      if (!painter.end()) return {};
      break;
    }
    case ExportFormat::Csv:
      return {};
  }
  buffer.close();
  return buffer.data();
}

}  // namespace

bool save_plot(QCustomPlot& plot, const QString& path, ExportFormat format, int width, int height,
               QString* error) {
  if (format == ExportFormat::Csv) {
    if (error) *error = "CSV is written from the chart's data, not from the plot";
    return false;
  }
  if (!may_write(path, error)) return false;
  const QByteArray bytes = plot_bytes(plot, format, width, height);
  if (bytes.isEmpty()) {
    if (error)
      *error = path + ": Qt could not draw the chart as " + export_format_name(format) +
               "; nothing was written";
    return false;
  }
  return save_text(path, bytes.toStdString(), error);
}

}  // namespace gpulab::ui
