// Checks a drawn QCustomPlot for text that a reader cannot read: labels that overlap (tick labels,
// axis labels, titles, legend entries, bar value labels) and text cut off by the panel or the plot
// it belongs to. Tests assert there is none, at every window size and in presenter mode.
#pragma once

#include <QRectF>
#include <QString>
#include <QStringList>
#include <vector>

class QCustomPlot;

namespace gpulab::ui {

struct TextBox {
  QString what;  // "left tick label \"0.5\"", "title \"Training loss\""
  QRectF rect;   // where the text is drawn, in plot pixels
  QRectF room;   // where it must stay (its panel, its legend cell, the plot)
};

// Every piece of text of a plot as last laid out (replot first).
std::vector<TextBox> plot_text_boxes(QCustomPlot& plot);
// One line per overlap or cut-off text; empty when the plot reads cleanly.
QStringList layout_problems(QCustomPlot& plot);

}  // namespace gpulab::ui
