// Bar panels of a drawn chart: one bar per run in its colour with its value over it (or why it is
// empty), or stacked parts in their phases' colours; their value axis and labels kept inside the
// panel. Pieces of draw_chart and update_bars (chart_render.hpp).
#pragma once

#include <vector>

#include "ui/charts/chart_render.hpp"

class QCPAbstractPlottable;
class QCPItemText;

namespace gpulab::ui {

// The bars of panel `panel_index`, with the runs named under them (on a line, wrapped, or
// numbered where even that does not fit). Stacked parts go into `legend` where it is given.
DrawnChart::BarPanel draw_bars(QCustomPlot& plot, QCPAxisRect* rect, const Chart& chart,
                               int panel_index, const std::vector<QColor>& colors,
                               const PlotTheme& theme, std::vector<QCPAbstractPlottable*>* legend);

// A bar panel's value axis: from zero to above its tallest stack, with room for the labels
// (`label_px` high) above it.
void fit_bar_axis(QCPAxis* y, double label_px = 0);
// The room a panel's value labels take above its bars: none where they do not fit.
double bar_labels_px(const DrawnChart::BarPanel& bar_panel);

// A panel's empty note ("no full epoch (every run)") fitted to its panel's width: each line wider
// than the panel wrapped (up to three lines) or elided; it was cut at both ends in narrow panels.
// The note's whole text is kept on the item, so the fit can be made again for another width.
void set_empty_note(QCPItemText* note, const QString& text);
void fit_empty_note(QCPItemText* note);

// A value label over a bar that reaches the top of its axis would be cut off by the panel: it
// goes inside the top of the bar instead, so it stays visible.
void keep_labels_inside(DrawnChart::BarPanel& bar_panel, QCPAxis* value_axis);

}  // namespace gpulab::ui
