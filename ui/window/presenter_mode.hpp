// Presenter mode: large type for a room, through the window's style sheet (rows made later, a
// run's status line, are large too), and the charts' theme, which grows with the screen.
#pragma once

#include <QFont>

#include "ui/charts/chart_render.hpp"

class QLabel;
class QWidget;

namespace gpulab::ui {

// Sets or clears the large type on `window`; `normal_font` is the window's font without it.
void set_presenter_style(QWidget* window, bool on, const QFont& normal_font);
// The charts' theme in the window `window_height` pixels high; `run_legend`: each chart names
// the runs (no key above them).
PlotTheme window_chart_theme(bool presenter, int window_height, bool run_legend);

// The presenter's headline (the key numbers above the tabs) in a window `window_height` pixels
// high: at 1080 and more, four runs in figures 2.4 times the window's normal text; lower, smaller
// figures and fewer runs, so that both rows of Live charts stay on a 1280x720 screen.
struct HeadlineSize {
  int runs = 4;        // the most runs it lists
  double points = 24;  // its text size
};
HeadlineSize headline_size(int window_height, const QFont& normal_font);

// Keeps `label` (the headline) the height of `lines` lines at `points`, whatever it says, so
// that the tabs under it never move; text that would wrap past that room is set smaller, down to
// half of `points`, and only then takes more room. `lines` 0: the label's own height and size again
// (presenter mode off).
void fit_headline_text(QLabel* label, int lines, double points);

}  // namespace gpulab::ui
