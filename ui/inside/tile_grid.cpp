// Colour scales, the tile grid and the legend: painted by hand, so that a tile's rectangle is known
// exactly and a click can be traced to one value.
#include "ui/inside/tile_grid.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace gpulab::ui {

QColor ColorScale::color(float value) const {
  if (!std::isfinite(value)) return QColor(255, 0, 255);  // never a colour the scale makes
  if (kind == Kind::Grey) {
    const float span = high - low;
    const float t = span > 0 ? std::clamp((value - low) / span, 0.0f, 1.0f) : 0.0f;
    const int level = int(std::lround(255 * t));
    return QColor(level, level, level);
  }
  const float t = high > 0 ? std::clamp(value / high, -1.0f, 1.0f) : 0.0f;
  // White at 0, fading to a strong red (positive) or blue (negative) at the ends.
  const QColor end = t >= 0 ? QColor(178, 24, 43) : QColor(33, 102, 172);
  const float a = std::abs(t);
  auto mix = [a](int from, int to) { return int(std::lround(from + (to - from) * a)); };
  return QColor(mix(255, end.red()), mix(255, end.green()), mix(255, end.blue()));
}

ColorScale ColorScale::fitting(const float* values, size_t count) {
  float lowest = 0, highest = 0, largest = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) continue;
    lowest = std::min(lowest, values[i]);
    highest = std::max(highest, values[i]);
    largest = std::max(largest, std::abs(values[i]));
  }
  if (lowest < 0) return {Kind::Signed, -largest, largest};
  return {Kind::Grey, 0.0f, highest};
}

QImage scale_image(const float* values, int rows, int cols, const ColorScale& scale) {
  QImage image(cols, rows, QImage::Format_RGB32);
  for (int r = 0; r < rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    for (int c = 0; c < cols; ++c) line[c] = scale.color(values[size_t(r) * cols + c]).rgb();
  }
  return image;
}

QString number_text(double value) {
  QString text = QString::number(value, 'g', 3);
  if (text.startsWith('-')) text.replace(0, 1, QChar(0x2212));
  return text;
}

TileGrid::TileGrid(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void TileGrid::set_tiles(std::vector<QImage> images, std::vector<QString> captions, QSize tile,
                         int columns) {
  images_ = std::move(images);
  captions_ = std::move(captions);
  captions_.resize(images_.size());
  tile_ = tile;
  columns_ = std::max(1, columns);
  updateGeometry();
  update();
}

int TileGrid::columns() const { return std::max(1, std::min(columns_, std::max(1, count()))); }

int TileGrid::caption_height() const {
  const bool any = std::any_of(captions_.begin(), captions_.end(),
                               [](const QString& c) { return !c.isEmpty(); });
  return any ? fontMetrics().height() : 0;
}

QRect TileGrid::tile_rect(int index) const {
  const int cols = columns();
  const int row = index / cols, col = index % cols;
  return {col * (tile_.width() + kGap), row * (tile_.height() + caption_height() + kGap),
          tile_.width(), tile_.height()};
}

QSize TileGrid::sizeHint() const {
  const int rows = (count() + columns() - 1) / columns();
  return {columns() * (tile_.width() + kGap),
          std::max(1, rows * (tile_.height() + caption_height() + kGap))};
}

void TileGrid::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  for (int i = 0; i < count(); ++i) {
    if (images_[size_t(i)].isNull()) continue;  // a blank place
    const QRect rect = tile_rect(i);
    painter.drawImage(rect, images_[size_t(i)]);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(rect.adjusted(0, 0, -1, -1));
    if (!captions_[size_t(i)].isEmpty()) {
      painter.setPen(palette().color(QPalette::WindowText));
      painter.drawText(QRect(rect.left(), rect.bottom() + 1, rect.width(), caption_height()),
                       Qt::AlignCenter, captions_[size_t(i)]);
    }
  }
}

void TileGrid::mousePressEvent(QMouseEvent* event) {
  const QPoint at = event->position().toPoint();
  for (int i = 0; i < count(); ++i) {
    const QRect rect = tile_rect(i);
    const QImage& image = images_[size_t(i)];
    if (!rect.contains(at) || image.isNull()) continue;
    const int row =
        std::min(image.height() - 1, (at.y() - rect.top()) * image.height() / rect.height());
    const int col =
        std::min(image.width() - 1, (at.x() - rect.left()) * image.width() / rect.width());
    emit tile_clicked(i, row, col);
    return;
  }
  QWidget::mousePressEvent(event);
}

ColorLegend::ColorLegend(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void ColorLegend::set_scale(const ColorScale& scale) {
  scale_ = scale;
  update();
}

QSize ColorLegend::sizeHint() const { return {180, 14 + fontMetrics().height() + 4}; }

void ColorLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QRect bar(0, 0, width(), 14);
  for (int x = 0; x < bar.width(); ++x) {
    const float t = bar.width() > 1 ? float(x) / float(bar.width() - 1) : 0.0f;
    painter.setPen(scale_.color(scale_.low + t * (scale_.high - scale_.low)));
    painter.drawLine(x, bar.top(), x, bar.bottom());
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::WindowText));
  const QRect text(0, bar.bottom() + 2, width(), fontMetrics().height());
  painter.drawText(text, Qt::AlignLeft, number_text(scale_.low));
  painter.drawText(text, Qt::AlignRight, number_text(scale_.high));
  if (scale_.kind == ColorScale::Kind::Signed) painter.drawText(text, Qt::AlignHCenter, "0");
}

TileSection make_tile_section(const QString& title, const ColorScale& scale, QWidget* parent) {
  TileSection s;
  s.box = new QWidget(parent);
  auto* column = new QVBoxLayout(s.box);
  column->setContentsMargins(0, 0, 0, 0);
  auto* heading = new QHBoxLayout;
  s.title = new QLabel(title, s.box);
  s.legend = new ColorLegend(s.box);
  s.legend->set_scale(scale);
  heading->addWidget(s.title);
  heading->addSpacing(12);
  heading->addWidget(s.legend);
  heading->addStretch(1);
  s.grid = new TileGrid(s.box);
  column->addLayout(heading);
  column->addWidget(s.grid, 0, Qt::AlignLeft);
  return s;
}

}  // namespace gpulab::ui
