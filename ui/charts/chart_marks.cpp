// Marks on the line panels: learning rates changed while a run trained.
#include "ui/charts/chart_marks.hpp"

#include <qcustomplot.h>

#include <algorithm>

#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {
namespace {

// Rows of labels at the top of the panel: three marks close together stay readable, and a
// fourth is left to its line.
constexpr int kLabelRows = 3;
constexpr double kGapPx = 4;  // between a line and its label, and between labels

}  // namespace

std::vector<DrawnMark> draw_marks(QCustomPlot& plot, const Chart& chart,
                                  const std::vector<QCPAxisRect*>& line_rects,
                                  const std::vector<QColor>& colors, const PlotTheme& theme) {
  std::vector<DrawnMark> drawn;
  if (line_rects.empty()) return drawn;
  for (const ChartMark& mark : chart.marks) {
    const QColor color =
        mark.run < int(colors.size()) ? colors[size_t(mark.run)] : run_color(mark.run);
    DrawnMark out;
    out.x = mark.x;
    for (QCPAxisRect* rect : line_rects) {
      auto* line = new QCPItemStraightLine(&plot);
      line->setClipAxisRect(rect);
      line->setPen(QPen(color, theme.presenter ? 2 : 1, Qt::DashLine));
      for (QCPItemPosition* point : {line->point1, line->point2})
        point->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      line->point1->setCoords(mark.x, 0);
      line->point2->setCoords(mark.x, 1);
      out.lines.push_back(line);
    }
    QCPAxisRect* top = line_rects.front();
    auto* label = new QCPItemText(&plot);
    label->setClipAxisRect(top);
    label->setText(QString::fromStdString(mark.label));
    label->setFont(scaled_font(theme.font_scale * 0.8));
    label->setColor(color.darker(130));
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setAxes(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft));
    label->position->setAxisRect(top);
    label->position->setCoords(mark.x, 0);
    out.label = label;
    drawn.push_back(out);
  }
  return drawn;
}

void place_mark_labels(const std::vector<DrawnMark>& marks) {
  std::vector<const DrawnMark*> order;
  for (const DrawnMark& mark : marks)
    if (mark.label) order.push_back(&mark);
  if (order.empty()) return;
  QCPAxis* x = order.front()->label->position->keyAxis();
  const QRectF rect = x->axisRect()->rect();
  std::sort(order.begin(), order.end(),
            [](const DrawnMark* a, const DrawnMark* b) { return a->x < b->x; });
  double row_end[kLabelRows];
  std::fill(std::begin(row_end), std::end(row_end), rect.left() - 1e9);
  for (const DrawnMark* mark : order) {
    QCPItemText* label = mark->label;
    const QFontMetricsF metrics(label->font());
    const double width = metrics.horizontalAdvance(label->text()) + 2;
    const double height = metrics.height() + 3;  // a pixel between rows
    const double px = x->coordToPixel(mark->x);
    // Right of the line, or left of it where the panel ends first.
    const bool right = px + kGapPx + width <= rect.right();
    const double left = right ? px + kGapPx : px - kGapPx - width;
    int row = 0;
    while (row < kLabelRows && row_end[row] + kGapPx > left) ++row;
    const bool fits = px >= rect.left() && px <= rect.right() && left >= rect.left() &&
                      row < kLabelRows && (row + 1) * height + 1 <= rect.height();
    label->setVisible(fits);
    if (!fits) continue;
    row_end[row] = left + width;
    label->setPositionAlignment(Qt::AlignTop | (right ? Qt::AlignLeft : Qt::AlignRight));
    label->setPadding(QMargins(right ? int(kGapPx) : 0, 1, right ? 0 : int(kGapPx), 1));
    label->position->setCoords(mark->x, (row * height + 1) / std::max(1.0, rect.height()));
  }
}

}  // namespace gpulab::ui
