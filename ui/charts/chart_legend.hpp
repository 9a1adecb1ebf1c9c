// Legends and keys of a drawn chart: run names fitted to a width (⚠ kept), how a hardware line is
// told apart from its run's others and named, the legend box, and the key to numbered bars. Pieces
// of draw_chart (chart_render.hpp), for the window and every export alike.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

#include "ui/charts/chart_render.hpp"

class QCPAbstractPlottable;

namespace gpulab::ui {

// `text` broken into lines of at most `width` pixels, at ", " or else at spaces; empty when it
// takes more than `max_lines` lines or a word is wider than `width` on its own.
QString wrap_to(const QString& text, const QFont& font, double width, int max_lines);
// `text` wrapped at spaces to lines of at most `width` pixels, each of its own lines apart, as
// many lines as it takes (a word wider stays whole on its line).
QString wrap_words(const QString& text, const QFont& font, double width);

// Legend names: the runs' names, or, where they would take more than a row, only the parts of
// them ("lenet5 cpu, 4 threads, b64" split at ", ", " · " and before a parenthesis, never inside
// one) that are not the same for every run; a run's ⚠ and a reference run's "(reference, recorded
// on ...)" stay on its name either way.
std::vector<QString> legend_names(const std::vector<std::string>& runs, const QFont& font,
                                  double width);

// How a hardware line is told apart from its run's other lines, which share the run's colour:
// other programs' CPU time is dashed, and a run on several GPUs draws its second and later GPUs
// darker, and a GPU's memory busy % (in the utilization lane) is dotted; each of these gets a
// legend entry "<run> · other programs", "<run> · cuda:1", "<run> · memory busy" (past a few
// runs, one shared entry per kind: see fold_legend).
struct DeviceStyle {
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  QString legend;  // what the legend adds to the run's name; empty: no entry of its own
};
DeviceStyle device_style(const Chart& chart, const LineSeries& line, const QColor& color);

// The folded legend's entry for a kind of hardware line, drawn in grey.
QString shared_legend_label(const LineSeries& line);
// Folded: kFoldLegendRuns or more runs, or wherever the runs are named above the charts rather than
// in each legend (PlotTheme::run_legend off: presenter mode's Live tab), since the colours are
// told apart there.
bool fold_legend(const Chart& chart, const PlotTheme& theme);

// The legend's entries beside the runs' own: "<run> · other programs", "<run> · cuda:1", or,
// folded, the shared ones. `names`: the runs' legend names.
QStringList device_legend_labels(const Chart& chart, const PlotTheme& theme,
                                 const std::vector<QString>& names);

// The legend box at `row` of the plot's layout, as many entries a row as the width holds.
QCPLegend* add_legend(QCustomPlot& plot, int row, const std::vector<QCPAbstractPlottable*>& entries,
                      const PlotTheme& theme);
// Rearranges a legend's entries to as many a row as `width` holds (the plot resized).
void wrap_legend(QCPLegend* box, double width);

// The key to numbered bars at `row`: "1 lenet5 cpu, 1 thread · 2 ...", wrapped to the width.
void add_bar_key(QCustomPlot& plot, int row, const Chart& chart, const PlotTheme& theme);

}  // namespace gpulab::ui
