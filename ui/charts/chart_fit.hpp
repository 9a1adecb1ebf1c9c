// A drawn chart fitted to its size, as the window shows it or a file is drawn: which panels have
// room, titles and axis labels that fit, ticks as many as there is room for, and the axes fitted
// to the data or grown ahead of it. Pieces of draw_chart (chart_render.hpp).
#pragma once

#include <vector>

#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {

// A title or heading in lines of at most `width` pixels (three at most, broken at spaces), or
// elided to one line where it cannot be: never cut off at its ends.
QString fit_title(const QString& text, const QFont& font, double width);

// Which panels to draw: those with data, less the ones that would be crushed at this size, least
// telling first (a simpler chart rather than an unreadable one).
std::vector<bool> panels_that_fit(const QCustomPlot& plot, const Chart& chart,
                                  const PlotTheme& theme);

}  // namespace gpulab::ui
