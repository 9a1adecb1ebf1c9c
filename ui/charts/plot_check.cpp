// Finding overlapping and cut-off text in a drawn plot.
#include "ui/charts/plot_check.hpp"

#include <qcustomplot.h>

#include <QFontMetricsF>

namespace gpulab::ui {
namespace {

constexpr double kSlack = 1.5;  // pixels of overlap or overhang that anti-aliasing can explain

QSizeF text_size(const QFont& font, const QString& text) {
  return QFontMetricsF(font)
      .boundingRect(QRectF(0, 0, 1e5, 1e5), Qt::AlignLeft | Qt::AlignTop, text)
      .size();
}

bool overlap(const QRectF& a, const QRectF& b) {
  const QRectF both = a.intersected(b);
  return both.width() > kSlack && both.height() > kSlack;
}

bool inside(const QRectF& inner, const QRectF& outer) {
  return inner.left() >= outer.left() - kSlack && inner.right() <= outer.right() + kSlack &&
         inner.top() >= outer.top() - kSlack && inner.bottom() <= outer.bottom() + kSlack;
}

void axis_boxes(QCPAxis* axis, const QRectF& viewport, std::vector<TextBox>& out) {
  if (!axis->visible()) return;
  QCPAxisRect* rect = axis->axisRect();
  const bool bottom = axis->axisType() == QCPAxis::atBottom;
  const bool left = axis->axisType() == QCPAxis::atLeft;
  if (!bottom && !left) return;
  const double out_length = std::max(0, std::max(axis->tickLengthOut(), axis->subTickLengthOut()));
  double extent = 0;  // how far the tick labels reach from the axis
  if (axis->tickLabels()) {
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
      if (!axis->range().contains(ticks[i]) || labels[i].isEmpty()) continue;
      const QSizeF size = text_size(axis->tickLabelFont(), labels[i]);
      const double at = axis->coordToPixel(ticks[i]);
      const double gap = axis->offset() + out_length + axis->tickLabelPadding();
      QRectF box =
          bottom ? QRectF(at - size.width() / 2, rect->bottom() + gap, size.width(), size.height())
                 : QRectF(rect->left() - gap - size.width(), at - size.height() / 2, size.width(),
                          size.height());
      extent = std::max(extent, gap + (bottom ? size.height() : size.width()));
      out.push_back(
          {QString("%1 tick label \"%2\"").arg(bottom ? "x" : "y", labels[i]), box, viewport});
    }
  }
  if (!axis->label().isEmpty()) {
    const QSizeF size = text_size(axis->labelFont(), axis->label());
    const double gap = extent + axis->labelPadding();
    // The whole panel's side is the label's room: one longer than that runs into its neighbours.
    const QRectF outer = rect->outerRect();
    if (bottom) {
      const QRectF box(rect->center().x() - size.width() / 2, rect->bottom() + gap, size.width(),
                       size.height());
      out.push_back({QString("x axis label \"%1\"").arg(axis->label()), box,
                     QRectF(outer.left(), viewport.top(), outer.width(), viewport.height())});
    } else {  // drawn turned a quarter, centred on the panel's height
      const QRectF box(rect->left() - gap - size.height(), rect->center().y() - size.width() / 2,
                       size.height(), size.width());
      out.push_back({QString("y axis label \"%1\"").arg(axis->label()), box,
                     QRectF(viewport.left(), outer.top(), viewport.width(), outer.height())});
    }
  }
}

void element_boxes(QCPLayoutElement* element, const QRectF& viewport, std::vector<TextBox>& out) {
  if (!element || !element->visible()) return;
  if (auto* text = qobject_cast<QCPTextElement*>(element)) {
    const QSizeF size = text_size(text->font(), text->text());
    const QRectF room = text->rect();
    const QRectF box(room.center().x() - size.width() / 2, room.center().y() - size.height() / 2,
                     size.width(), size.height());
    out.push_back({QString("title \"%1\"").arg(text->text().section('\n', 0, 0)), box,
                   room.intersected(viewport)});
    return;
  }
  if (auto* rect = qobject_cast<QCPAxisRect*>(element)) {
    for (QCPAxis* axis : rect->axes()) axis_boxes(axis, viewport, out);
    // The legend must not lie over a panel's plotting area.
    return;
  }
  if (auto* legend = qobject_cast<QCPLegend*>(element)) {
    for (int i = 0; i < legend->itemCount(); ++i) {
      QCPAbstractLegendItem* item = legend->item(i);
      if (!item || !item->visible()) continue;
      auto* plottable_item = qobject_cast<QCPPlottableLegendItem*>(item);
      const QString name = plottable_item ? plottable_item->plottable()->name() : QString("?");
      const QSize needed = static_cast<QCPLayoutElement*>(item)->minimumOuterSizeHint();
      const QRectF cell = item->outerRect();
      const QRectF box(cell.left(), cell.top(), needed.width(), needed.height());
      out.push_back({QString("legend entry \"%1\"").arg(name), box, cell.intersected(viewport)});
    }
    return;
  }
  if (auto* layout = qobject_cast<QCPLayout*>(element))
    for (int i = 0; i < layout->elementCount(); ++i)
      element_boxes(layout->elementAt(i), viewport, out);
}

}  // namespace

std::vector<TextBox> plot_text_boxes(QCustomPlot& plot) {
  std::vector<TextBox> boxes;
  const QRectF viewport = plot.viewport();
  element_boxes(plot.plotLayout(), viewport, boxes);
  for (int i = 0; i < plot.itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(plot.item(i));
    if (!text || !text->visible() || text->text().isEmpty()) continue;
    const QRectF box =
        QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized();
    const QRectF room = text->clipToAxisRect() && text->clipAxisRect()
                            ? QRectF(text->clipAxisRect()->rect())
                            : viewport;
    boxes.push_back({QString("bar label \"%1\"").arg(text->text()), box, room});
  }
  return boxes;
}

QStringList layout_problems(QCustomPlot& plot) {
  QStringList problems;
  const std::vector<TextBox> boxes = plot_text_boxes(plot);
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (!inside(boxes[i].rect, boxes[i].room))
      problems << QString("%1 is cut off (%2,%3 %4x%5 outside its room %6,%7 %8x%9)")
                      .arg(boxes[i].what)
                      .arg(boxes[i].rect.x(), 0, 'f', 0)
                      .arg(boxes[i].rect.y(), 0, 'f', 0)
                      .arg(boxes[i].rect.width(), 0, 'f', 0)
                      .arg(boxes[i].rect.height(), 0, 'f', 0)
                      .arg(boxes[i].room.x(), 0, 'f', 0)
                      .arg(boxes[i].room.y(), 0, 'f', 0)
                      .arg(boxes[i].room.width(), 0, 'f', 0)
                      .arg(boxes[i].room.height(), 0, 'f', 0);
    for (size_t j = i + 1; j < boxes.size(); ++j)
      if (overlap(boxes[i].rect, boxes[j].rect))
        problems << boxes[i].what + " overlaps " + boxes[j].what;
  }
  // A legend over a panel hides the lines under it.
  for (QCPLegend* legend : plot.findChildren<QCPLegend*>()) {
    if (!legend->visible() || legend->itemCount() == 0) continue;
    for (QCPAxisRect* rect : plot.axisRects())
      if (overlap(legend->outerRect(), rect->rect())) problems << "the legend lies over a panel";
  }
  for (QCPAxisRect* rect : plot.axisRects())
    if (rect->height() < 20 || rect->width() < 20)
      problems
          << QString("a panel is crushed to %1x%2 pixels").arg(rect->width()).arg(rect->height());
  return problems;
}

}  // namespace gpulab::ui
