// The marks of a chart (engine/analysis/chart_builder's ChartMark: where a run's learning rate
// was changed while it trained), drawn on every line panel: one piece of code for the live
// charts, Compare and the exported files.
#pragma once

#include <QColor>
#include <vector>

#include "engine/analysis/chart_builder.hpp"

class QCustomPlot;
class QCPAxisRect;
class QCPItemStraightLine;
class QCPItemText;

namespace gpulab::ui {

struct PlotTheme;

struct DrawnMark {
  double x = 0;                             // on the chart's x axis
  std::vector<QCPItemStraightLine*> lines;  // one per line panel
  QCPItemText* label = nullptr;             // "lr 0.1", in the top line panel
};

// A dashed vertical line in the run's colour at each mark of `chart`, in each of `line_rects`
// (the panels with lines, top first), under the data; its label at the top of the first.
std::vector<DrawnMark> draw_marks(QCustomPlot& plot, const Chart& chart,
                                  const std::vector<QCPAxisRect*>& line_rects,
                                  const std::vector<QColor>& colors, const PlotTheme& theme);

// Places the labels for the axes as they are now: each beside its line (to the right, or to the
// left near the panel's right edge), in the first of a few rows at the top where it overlaps no
// other label; a label with no such room, or whose line is out of view, is hidden (its line
// stays). Call after the layout or the x range changed (ChartView does before each replot).
void place_mark_labels(const std::vector<DrawnMark>& marks);

}  // namespace gpulab::ui
