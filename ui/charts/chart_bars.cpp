// Bar panels: drawn, given their heights and values, their axis and labels fitted.
#include "ui/charts/chart_bars.hpp"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "engine/analysis/run_figures.hpp"
#include "ui/charts/chart_legend.hpp"

namespace gpulab::ui {
namespace {

QString bar_label(const QString& unit, double value) {
  if (unit == QStringLiteral("×")) return QString::number(value, 'f', 2) + "×";
  if (unit == QStringLiteral("s")) return QString::number(value, 'g', 3) + " s";
  // Three significant digits, but never an exponent: a class reads 60012 images/s, not "6e+04".
  if (std::abs(value) >= 999.5) return QString::number(value, 'f', 0);
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

// The one reason every bar of a panel is empty, or "" where a bar has a value or the reasons
// differ.
std::string shared_empty_note(const BarSet& set) {
  if (set.values.empty() || set.notes.size() != set.values.size()) return {};
  for (size_t r = 0; r < set.values.size(); ++r)
    if (std::isfinite(set.values[r]) || set.notes[r] != set.notes.front()) return {};
  return set.notes.front();
}

}  // namespace

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
  // Numbers where the window's key above the charts numbers the runs (presenter mode's Live tab).
  drawn.numbered = !theme.run_legend;
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
  // A value above each bar (a stacked bar's whole: the median step, whose parts the key names).
  const auto add_label = [&] {
    auto* label = new QCPItemText(&plot);
    label->setClipAxisRect(rect);
    label->position->setAxes(x, y);
    label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    label->setFont(scaled_font(theme.font_scale * (chart.runs.size() > 8 ? 0.75 : 0.9), true));
    label->setPadding(QMargins(0, 0, 0, 3));
    drawn.labels.push_back(label);
  };
  const bool stacked = panel.bars.size() > 1;
  if (stacked) {
    for (size_t r = 0; r < chart.runs.size(); ++r) add_label();
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
      add_label();
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

void fit_bar_axis(QCPAxis* y, double label_px) {
  y->rescale(true);
  const double height = y->axisRect()->height();
  const double room = height > 3 * label_px ? height / (height - label_px - 6) : 1.18;
  y->setRange(0, y->range().upper > 0 ? y->range().upper * std::max(1.08, room) : 1.0);
}

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

double bar_labels_px(const DrawnChart::BarPanel& bar_panel) {
  return bar_panel.labels_fit && !bar_panel.labels.empty()
             ? QFontMetricsF(bar_panel.labels[0]->font()).height() + 3
             : 0;
}

void update_bars(DrawnChart& drawn, const Chart& chart) {
  for (auto& bar_panel : drawn.bar_panels) {
    const auto rect = std::find(drawn.rect_panel.begin(), drawn.rect_panel.end(), bar_panel.panel);
    QCPAxis* value_axis =
        drawn.rects[size_t(rect - drawn.rect_panel.begin())]->axis(QCPAxis::atLeft);
    const Panel& panel = chart.panels[bar_panel.panel];
    const QString y_label = QString::fromStdString(panel.y_label);
    if (panel.bars.size() > 1) {
      std::vector<double> totals;
      for (size_t set = 0; set < panel.bars.size(); ++set) {
        QVector<double> keys, values;
        for (size_t r = 0; r < panel.bars[set].values.size(); ++r) {
          const double v = panel.bars[set].values[r];
          keys.push_back(double(r + 1));
          values.push_back(std::isfinite(v) ? v : 0.0);
          if (totals.size() <= r) totals.resize(r + 1, 0.0);
          totals[r] += values.back();
        }
        bar_panel.bars[set]->setData(keys, values, true);
      }
      for (size_t r = 0; r < bar_panel.labels.size(); ++r) {
        const double total = r < totals.size() ? totals[r] : 0.0;
        bar_panel.labels[r]->position->setCoords(double(r + 1), total);
        bar_panel.labels[r]->setText(bar_label(y_label, total));
        bar_panel.labels[r]->setVisible(bar_panel.labels_fit && total > 0);
      }
      fit_bar_axis(value_axis, bar_labels_px(bar_panel));
      keep_labels_inside(bar_panel, value_axis);
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
    fit_bar_axis(value_axis, bar_labels_px(bar_panel));
    keep_labels_inside(bar_panel, value_axis);
    if (bar_panel.empty_note) {
      const std::string note = shared_empty_note(panel.bars[0]);
      set_empty_note(bar_panel.empty_note,
                     QString::fromStdString(note) + QObject::tr("\n(every run)"));
      bar_panel.empty_note->setVisible(!note.empty());
      if (!note.empty())
        for (QCPItemText* label : bar_panel.labels) label->setVisible(false);
    }
  }
}

void set_empty_note(QCPItemText* note, const QString& text) {
  note->setProperty("whole_text", text);
  fit_empty_note(note);
}

void fit_empty_note(QCPItemText* note) {
  const QString text = note->property("whole_text").toString();
  const QCPAxisRect* rect = note->clipAxisRect();
  const double width = rect ? rect->width() - 6.0 : 0;
  if (width <= 0) {  // not laid out yet: fitted again once it is
    note->setText(text);
    return;
  }
  const QFontMetricsF metrics(note->font());
  QStringList lines;
  for (const QString& line : text.split('\n')) {
    if (metrics.horizontalAdvance(line) <= width) {
      lines << line;
      continue;
    }
    const QString wrapped = wrap_to(line, note->font(), width, 3);
    lines << (wrapped.isEmpty() ? metrics.elidedText(line, Qt::ElideRight, width) : wrapped);
  }
  note->setText(lines.join('\n'));
}

}  // namespace gpulab::ui
