// Presenter mode: large type for a room, through the window's style sheet (rows made later, a
// run's status line, are large too), and the charts' theme, which grows with the screen.
#pragma once

#include <QFont>

#include "ui/charts/chart_render.hpp"

class QWidget;

namespace gpulab::ui {

// Sets or clears the large type on `window`; `normal_font` is the window's font without it.
void set_presenter_style(QWidget* window, bool on, const QFont& normal_font);
// The charts' theme in the window `window_height` pixels high; `run_legend`: each chart names
// the runs (no key above them).
PlotTheme window_chart_theme(bool presenter, int window_height, bool run_legend);

}  // namespace gpulab::ui
