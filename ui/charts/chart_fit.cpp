// Fitting a drawn chart to its size: panels, titles, labels, ticks and axes.
#include "ui/charts/chart_fit.hpp"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/charts/chart_bars.hpp"
#include "ui/charts/chart_legend.hpp"

namespace gpulab::ui {
namespace {

// A short form of an axis label for a small panel: the unit in its brackets ("memory used (GiB)":
// "GiB"), or nothing.
QString short_label(const QString& label) {
  const int open = label.lastIndexOf('('), close = label.lastIndexOf(')');
  return open >= 0 && close > open ? label.mid(open + 1, close - open - 1) : QString();
}

// Fewer value ticks on `axis` (down to one) while the ticker, asked for its count, would set two
// labels nearer than `apart` pixels: it rounds its step to a round number, which can give up to
// twice the ticks asked for, so the count from the height alone let labels touch in large type.
void thin_value_ticks(QCPAxis* axis, double apart) {
  const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
  if (qSharedPointerDynamicCast<QCPAxisTickerText>(ticker)) return;
  for (int count = ticker->tickCount(); count > 1; --count) {
    ticker->setTickCount(count);
    QVector<double> ticks;
    const QString format = axis->numberFormat();
    ticker->generate(axis->range(), axis->parentPlot()->locale(),
                     format.isEmpty() ? QChar('g') : format.at(0), axis->numberPrecision(), ticks,
                     nullptr, nullptr);
    double nearest = 1e9;
    for (int i = 1; i < ticks.size(); ++i)
      nearest = std::min(nearest,
                         std::abs(axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1])));
    if (nearest >= apart) return;
  }
  ticker->setTickCount(1);
}

// The lines a title takes at `width` (fit_title).
int title_lines(const std::string& text, const QFont& font, double width) {
  return int(fit_title(QString::fromStdString(text), font, width).count('\n')) + 1;
}

}  // namespace

QString fit_title(const QString& text, const QFont& font, double width) {
  const QString wrapped = wrap_to(text, font, width, 3);
  return wrapped.isEmpty() ? QFontMetricsF(font).elidedText(text, Qt::ElideRight, width) : wrapped;
}

std::vector<bool> panels_that_fit(const QCustomPlot& plot, const Chart& chart,
                                  const PlotTheme& theme) {
  std::vector<bool> shown;
  for (const Panel& panel : chart.panels) shown.push_back(panel.visible);
  const double tick_h = QFontMetricsF(scaled_font(theme.font_scale * 0.9)).height();
  // Titles and headings wrapped to the width take their lines' height.
  const QFont title_font = scaled_font(theme.font_scale * 1.15, true);
  const QFont heading_font = scaled_font(theme.font_scale * 0.95, true);
  auto wrapped_h = [&](const std::string& text, const QFont& font) {
    return title_lines(text, font, plot.width() - 8) * QFontMetricsF(font).height() + 8;
  };
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
        entries << device_legend_labels(chart, theme, names);
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
  bool numbered = !theme.run_legend;  // as the window's key above the charts numbers them
  if (!numbered)
    for (const QString& run : legend_names(chart.runs, tick_font, plot.width() - 10)) {
      const QString wrapped = wrap_to(run, tick_font, cell, 3);
      numbered |= wrapped.isEmpty();
      name_lines = std::max<int>(name_lines, int(wrapped.count('\n')) + 1);
    }
  if (numbered) name_lines = 1;
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
    const bool one = std::count(shown.begin(), shown.end(), true) == 1;
    // One panel lends the chart its title (draw_chart).
    const std::string* title = &chart.title;
    for (size_t p = 0; p < shown.size(); ++p)
      if (one && shown[p] && !chart.panels[p].title.empty()) title = &chart.panels[p].title;
    double h = wrapped_h(*title, title_font) + legend_h + key_h + tick_h + 6;  // the x axis label
    for (size_t p = 0; p < shown.size(); ++p)
      if (shown[p])
        h += (chart.panels[p].title.empty() || one
                  ? 0
                  : wrapped_h(chart.panels[p].title, heading_font)) +
             18 + panel_h + (chart.panels[p].is_bars() ? name_lines : 1) * tick_h;
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

void fit_text(QCustomPlot& plot, DrawnChart& drawn) {
  auto lay_out = [&] {
    plot.setViewport(QRect(0, 0, plot.width(), plot.height()));
    plot.plotLayout()->setOuterRect(plot.viewport());
    plot.plotLayout()->update(QCPLayoutElement::upPreparation);
    plot.plotLayout()->update(QCPLayoutElement::upMargins);
    plot.plotLayout()->update(QCPLayoutElement::upLayout);
  };
  lay_out();
  // Titles: wrapped to the width (elided where they cannot be), rather than cut at both ends.
  // Elided in a third of a 1024-pixel screen, Compare's titles lost the baseline's name.
  std::vector<std::pair<QCPTextElement*, QString>> wrapped;  // and their text on one line
  for (int i = 0; i < plot.plotLayout()->elementCount(); ++i)
    if (auto* text = qobject_cast<QCPTextElement*>(plot.plotLayout()->elementAt(i))) {
      if (text->text().contains('\n')) continue;
      // One line before two: a title of a few lines in a row of charts of one line each pushes
      // its plot down and out of line with theirs. Its brief form where that fits on one line.
      const QString brief = text->property(kBriefTitle).toString();
      const QFontMetricsF metrics(text->font());
      if (!brief.isEmpty() && metrics.horizontalAdvance(text->text()) > plot.width() - 8 &&
          metrics.horizontalAdvance(brief) <= plot.width() - 8) {
        text->setText(brief);
        continue;
      }
      const QString fitted = fit_title(text->text(), text->font(), plot.width() - 8);
      if (fitted.contains('\n')) wrapped.emplace_back(text, brief.isEmpty() ? text->text() : brief);
      text->setText(fitted);
    }
  if (!wrapped.empty()) {
    // On one line, elided, where the plot is too low for the lines (a Live chart in presenter
    // mode, 200 px high): the layout squeezed the title below its text and cut it.
    lay_out();
    for (const auto& [text, line] : wrapped) {
      const int needs = static_cast<QCPLayoutElement*>(text)->minimumOuterSizeHint().height();
      if (text->outerRect().height() < needs)
        text->setText(
            QFontMetricsF(text->font()).elidedText(line, Qt::ElideRight, plot.width() - 8));
    }
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
  for (DrawnChart::BarPanel& bar_panel : drawn.bar_panels)
    if (bar_panel.empty_note) fit_empty_note(bar_panel.empty_note);
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
  for (QCPAxisRect* rect : drawn.rects) {
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    thin_value_ticks(y, 1.15 * QFontMetricsF(y->tickLabelFont()).height());
  }
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
    fit_bar_axis(x->axisRect()->axis(QCPAxis::atLeft), bar_labels_px(bar_panel));
    keep_labels_inside(bar_panel, x->axisRect()->axis(QCPAxis::atLeft));
  }
  place_mark_labels(drawn.marks);
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
      fit_bar_axis(y, bar_labels_px(*bars));
      continue;
    }
    if (rect->graphs().isEmpty()) continue;
    x->rescale(true);
    y->rescale(true);
    const QCPRange r = y->range();
    const double pad = r.size() > 0 ? r.size() * 0.05 : std::max(1e-3, std::abs(r.upper) * 0.05);
    if (drawn.percent[i])
      y->setRange(std::min(0.0, r.lower) - 2, std::max(100.0, r.upper) + 2);
    else
      y->setRange(r.lower - pad, r.upper + pad);
    x_range = have_x ? QCPRange(std::min(x_range.lower, x->range().lower),
                                std::max(x_range.upper, x->range().upper))
                     : x->range();
    have_x = true;
  }
  // A learning rate changed while a run trains is marked at the step it takes effect, which the
  // data may not have reached yet: the panel shows it from the click on, not from the next step.
  if (have_x)
    for (const DrawnMark& mark : drawn.marks)
      x_range = QCPRange(std::min(x_range.lower, mark.x), std::max(x_range.upper, mark.x));
  if (have_x)
    for (size_t i = 0; i < drawn.rects.size(); ++i)
      if (!drawn.rects[i]->graphs().isEmpty())
        drawn.rects[i]->axis(QCPAxis::atBottom)->setRange(x_range);
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

}  // namespace gpulab::ui
