// Legends and keys: names fitted to a width, hardware lines' styles, the legend box, the bar key.
#include "ui/charts/chart_legend.hpp"

#include <qcustomplot.h>

#include <algorithm>

#include "engine/analysis/run_figures.hpp"
#include "engine/telemetry/telemetry.hpp"

namespace gpulab::ui {

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

QString wrap_words(const QString& text, const QFont& font, double width) {
  QStringList lines;
  for (const QString& line : text.split('\n')) {
    const QString wrapped = wrap_to(line, font, width, 1000);
    lines << (wrapped.isEmpty() ? line : wrapped);  // empty: a word wider than the width
  }
  return lines.join('\n');
}

namespace {

// A name's parts, each with the separator before it: "lenet5 cpu, 2 threads" is {"", "lenet5
// cpu"}, {", ", "2 threads"}; "gpu, b16 · a-lab (reference, recorded on X, 2026-11-27)" also
// splits at " · " and before the parenthesis, never inside it.
struct NamePart {
  QString separator, text;
};

std::vector<NamePart> name_parts(const QString& name) {
  std::vector<NamePart> parts{{}};
  int depth = 0;
  for (qsizetype i = 0; i < name.size(); ++i) {
    const QStringView rest = QStringView(name).mid(i);
    if (depth == 0 && !parts.back().text.isEmpty()) {
      const QString separators[] = {QStringLiteral(", "), QStringLiteral(" · "),
                                    QStringLiteral(" (")};
      const QString* found = std::find_if(std::begin(separators), std::end(separators),
                                          [&](const QString& sep) { return rest.startsWith(sep); });
      if (found != std::end(separators)) {
        const bool paren = *found == QStringLiteral(" (");
        parts.push_back({paren ? QStringLiteral(" ") : *found, {}});
        i += found->size() - (paren ? 2 : 1);  // a parenthesis stays its part's first character
        continue;
      }
    }
    if (name[i] == '(') ++depth;
    if (name[i] == ')' && depth > 0) --depth;
    parts.back().text += name[i];
  }
  return parts;
}

}  // namespace

std::vector<QString> legend_names(const std::vector<std::string>& runs, const QFont& font,
                                  double width) {
  std::vector<QString> names;
  for (const std::string& run : runs) names.push_back(QString::fromStdString(run));
  const QFontMetricsF metrics(font);
  double total = 0;
  for (const QString& name : names) total += metrics.horizontalAdvance(name) + 40;
  if (total <= width || names.size() < 2) return names;
  // A run's ⚠ is its own, not a part of its settings: kept even where every run has one; so is
  // a reference run's "(reference, recorded on ...)", even where every run in the chart is one.
  const QString mark = QString::fromStdString(flagged_name("", std::vector<std::string>{"?"}));
  std::vector<std::vector<NamePart>> parts;
  std::vector<bool> marked;
  for (const QString& name : names) {
    marked.push_back(name.endsWith(mark));
    parts.push_back(name_parts(marked.back() ? name.chopped(mark.size()) : name));
  }
  auto everywhere = [&](const QString& text) {
    return std::all_of(parts.begin(), parts.end(), [&](const std::vector<NamePart>& other) {
      return std::any_of(other.begin(), other.end(),
                         [&](const NamePart& p) { return p.text == text; });
    });
  };
  std::vector<QString> compact;
  for (size_t r = 0; r < names.size(); ++r) {
    QString kept;
    for (const NamePart& part : parts[r])
      if (part.text.startsWith(QStringLiteral("(reference")) || !everywhere(part.text))
        kept += (kept.isEmpty() ? QString() : part.separator) + part.text;
    compact.push_back(kept.isEmpty() ? names[r] : kept + (marked[r] ? mark : ""));
  }
  return compact;
}

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
  if (gpus.size() >= 2) {
    const int rank = int(std::find(gpus.begin(), gpus.end(), line.device) - gpus.begin());
    style.color = color.darker(100 + 50 * std::min(rank, 3));
    style.legend = QString::fromStdString(line.device);
  }
  // Beside its GPU's utilization in the same lane and colour: dotted, and named.
  if (line.metric == Metric::MemBusyPercent) {
    style.style = Qt::DotLine;
    style.legend = style.legend.isEmpty() ? QObject::tr("memory busy")
                                          : style.legend + QObject::tr(" memory busy");
  }
  return style;
}

QString shared_legend_label(const LineSeries& line) {
  if (line.metric == Metric::MemBusyPercent) return QObject::tr("memory busy (dotted)");
  return line.device == kOtherProgramsDevice ? QObject::tr("other programs (dashed)")
                                             : QObject::tr("a run's further GPUs (darker)");
}

bool fold_legend(const Chart& chart, const PlotTheme& theme) {
  return chart.runs.size() >= kFoldLegendRuns || !theme.run_legend;
}

QStringList device_legend_labels(const Chart& chart, const PlotTheme& theme,
                                 const std::vector<QString>& names) {
  QStringList labels;
  const bool fold = fold_legend(chart, theme);
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

QCPLegend* add_legend(QCustomPlot& plot, int row, const std::vector<QCPAbstractPlottable*>& entries,
                      const PlotTheme& theme) {
  // In the layout first: a legend gets its plot from there, and its items need the plot.
  auto* box = new QCPLegend;
  plot.plotLayout()->addElement(row, 0, box);
  box->setLayer(QStringLiteral("legend"));
  box->setBorderPen(Qt::NoPen);
  box->setFont(scaled_font(theme.font_scale * 0.95));
  box->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  for (QCPAbstractPlottable* entry : entries) box->addItem(new QCPPlottableLegendItem(box, entry));
  wrap_legend(box, plot.width());
  return box;
}

void wrap_legend(QCPLegend* box, double width) {
  int widest = 1;
  // Every cell of the grid, the empty ones of its last row included (null).
  for (int i = 0; i < box->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = box->item(i))
      widest = std::max(widest, static_cast<QCPLayoutElement*>(item)->minimumOuterSizeHint().width());
  // As many entries a row as the width holds, so none is cut short.
  box->setWrap(std::max(1, int((width - 10) / (widest + box->columnSpacing()))));
  box->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // the entries, rearranged to the wrap
}

void add_bar_key(QCustomPlot& plot, int row, const Chart& chart, const PlotTheme& theme) {
  const QFont font = scaled_font(theme.font_scale * 0.85);
  const QFontMetricsF metrics(font);
  QStringList lines;
  QString line;
  const double width = plot.width() - 20;
  const std::vector<QString> names = legend_names(chart.runs, font, width);
  for (size_t r = 0; r < chart.runs.size(); ++r) {
    const QString entry = QString("%1 %2").arg(r + 1).arg(names[r]);
    // A name wider than the chart on lines of its own (elided in the middle, its ⚠ kept, where
    // even three lines do not hold it): the centred key cut it off at both ends.
    if (metrics.horizontalAdvance(entry) > width) {
      QString wrapped = wrap_to(entry, font, width, 3);
      if (wrapped.isEmpty()) wrapped = metrics.elidedText(entry, Qt::ElideMiddle, width);
      if (!line.isEmpty()) lines << line;
      lines << wrapped;
      line.clear();
      continue;
    }
    const QString longer = line.isEmpty() ? entry : line + "   " + entry;
    if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
      lines << line;
      line = entry;
    } else {
      line = longer;
    }
  }
  if (!line.isEmpty()) lines << line;
  plot.plotLayout()->addElement(row, 0, new QCPTextElement(&plot, lines.join('\n'), font));
}

}  // namespace gpulab::ui
