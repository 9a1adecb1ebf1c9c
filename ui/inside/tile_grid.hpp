// What the Inside tab's pictures of numbers share: colour scales (a signed one, blue-white-red,
// and a grey one), a grid of small images that says which pixel of which tile a click hit, and
// a legend bar that shows a scale's range.
#pragma once

#include <QColor>
#include <QImage>
#include <QString>
#include <QWidget>
#include <vector>

class QLabel;

namespace gpulab::ui {

// A colour scale: Signed maps [-high, high] to blue, white, red; Grey maps [low, high] to black,
// white. Values beyond the range take its end's colour.
struct ColorScale {
  enum class Kind { Signed, Grey } kind = Kind::Signed;
  float low = -1, high = 1;
  QColor color(float value) const;
  // Signed around the largest |value| where any is negative, else grey from 0 to the largest.
  static ColorScale fitting(const float* values, size_t count);
};

// rows x cols values (row-major) as an image of one pixel per value.
QImage scale_image(const float* values, int rows, int cols, const ColorScale& scale);

// Small images in rows, each with a caption under it, painted without smoothing so every value
// stays a crisp square. A click emits the tile and the pixel of its image under the mouse.
class TileGrid : public QWidget {
  Q_OBJECT

 public:
  explicit TileGrid(QWidget* parent = nullptr);
  // tile: the size each image is drawn at; columns: tiles per row. A null image is a blank place.
  void set_tiles(std::vector<QImage> images, std::vector<QString> captions, QSize tile,
                 int columns);
  int count() const { return int(images_.size()); }
  const std::vector<QString>& captions() const { return captions_; }
  QRect tile_rect(int index) const;  // in this widget, where tile `index`'s image is drawn
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 signals:
  void tile_clicked(int index, int row, int col);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  int columns() const;
  int caption_height() const;
  std::vector<QImage> images_;
  std::vector<QString> captions_;
  QSize tile_{40, 40};
  int columns_ = 1;
  static constexpr int kGap = 6;
};

// A horizontal bar of the scale with its ends (and 0 for a signed scale) written under it.
class ColorLegend : public QWidget {
 public:
  explicit ColorLegend(QWidget* parent = nullptr);
  void set_scale(const ColorScale& scale);
  const ColorScale& scale() const { return scale_; }
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  ColorScale scale_;
};

// A titled block of tiles: the title with the scale's legend beside it, the grid under them, in
// one widget (`box`) that a view adds to its column and deletes to drop the block.
struct TileSection {
  QWidget* box;
  QLabel* title;
  TileGrid* grid;
  ColorLegend* legend;
};
TileSection make_tile_section(const QString& title, const ColorScale& scale, QWidget* parent);

// A number as the Inside tab writes it: 3 significant digits, a true minus sign.
QString number_text(double value);

}  // namespace gpulab::ui
