// The explain view: engine/inside's explain_output drawn as a row per input channel (a painted
// ProductRow), under a heading and the sum.
#include "ui/inside/explain_view.hpp"

#include <QEvent>
#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/inside/tile_grid.hpp"

namespace gpulab::ui {
namespace {

// Sized so that a 5x5 window's row (map, three grids) fits in 600 pixels: half a 1280 screen.
constexpr int kMapPixels = 84;    // an input channel's map: 3 screen pixels a value at 28x28
constexpr int kGridPixels = 150;  // a window's grid at most this wide or tall
constexpr int kLargestCell = 30;
constexpr int kSymbolWidth = 20;  // the room for "×", "=" between the grids

// One input channel's part of the sum: its map with the window on it, and the window's values,
// weights and products as grids of coloured cells (with the numbers where they fit).
class ProductRow : public QWidget {
 public:
  struct Grid {
    std::vector<float> values;
    ColorScale scale;
  };
  ProductRow(QString caption, const float* map, ActivationShape map_shape, QRect window,
             std::vector<Grid> grids, std::vector<uint8_t> padding, int rows, int cols,
             QWidget* parent)
      : QWidget(parent),
        caption_(std::move(caption)),
        window_(window),
        grids_(std::move(grids)),
        padding_(std::move(padding)),
        rows_(rows),
        cols_(cols) {
    if (map) {
      map_scale_ = ColorScale::fitting(map, size_t(map_shape.height) * map_shape.width);
      map_ = scale_image(map, map_shape.height, map_shape.width, map_scale_);
      map_cell_ = std::max(1, kMapPixels / std::max(map_shape.height, map_shape.width));
    }
    cell_w_ = std::clamp(kGridPixels / cols_, 2, kLargestCell);
    cell_h_ = rows_ == 1 ? 24 : std::clamp(kGridPixels / rows_, 2, kLargestCell);
    if (rows_ > 1) cell_w_ = cell_h_ = std::min(cell_w_, cell_h_);
    setFixedSize(sizeHint());
  }

  QSize sizeHint() const override {
    const int grid_w = cols_ * cell_w_, grid_h = rows_ * cell_h_;
    const int map_w = map_.isNull() ? 0 : map_.width() * map_cell_ + kSymbolWidth;
    const int map_h = map_.isNull() ? 0 : map_.height() * map_cell_;
    return {
        std::max(map_w + 3 * grid_w + 2 * kSymbolWidth, fontMetrics().horizontalAdvance(caption_)),
        fontMetrics().height() + 4 + std::max(map_h, grid_h) + 4};
  }

  // The window on the map, in this widget.
  QRect window_on_map() const {
    if (map_.isNull()) return {};
    return {map_origin().x() + window_.left() * map_cell_,
            map_origin().y() + window_.top() * map_cell_, window_.width() * map_cell_,
            window_.height() * map_cell_};
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, 0, width(), fontMetrics().height()), Qt::AlignLeft, caption_);
    int x = 0;
    const int top = fontMetrics().height() + 4;
    if (!map_.isNull()) {
      const QRect map_rect(map_origin(), map_.size() * map_cell_);
      p.drawImage(map_rect, map_);
      p.save();
      p.setClipRect(map_rect);
      p.setPen(QPen(QColor(255, 200, 0), 2));
      p.drawRect(window_on_map());
      p.restore();
      x = map_rect.right() + 1 + kSymbolWidth;
    }
    const char* symbols[] = {"×", "=", ""};
    for (size_t g = 0; g < grids_.size(); ++g) {
      draw_grid(p, QPoint(x, top), grids_[g]);
      x += cols_ * cell_w_;
      p.setPen(palette().color(QPalette::WindowText));
      p.drawText(QRect(x, top, kSymbolWidth, rows_ * cell_h_), Qt::AlignCenter, symbols[g]);
      x += kSymbolWidth;
    }
  }

 private:
  QPoint map_origin() const { return {0, fontMetrics().height() + 4}; }
  // What a 30-pixel cell holds: two significant digits without the leading zero ("−.048"), and
  // below a hundredth one digit and its exponent ("4e−3").
  static QString cell_text(float value) {
    QString text;
    if (value != 0 && std::abs(value) < 1e-2f) {
      text = QString::number(value, 'e', 0);  // "4e-05"
      text.replace("e-0", "e-").replace("e+0", "e");
    } else {
      text = QString::number(value, 'g', 2);
      if (text.startsWith("0.")) text.remove(0, 1);
      if (text.startsWith("-0.")) text.remove(1, 1);
    }
    return text.replace('-', QChar(0x2212));
  }

  void draw_grid(QPainter& p, QPoint origin, const Grid& grid) {
    // The numbers in a font small enough for the widest of them, or none below 6 points.
    QFont small = font();
    auto widest = [&](const QFontMetrics& m) {
      int most = 0;
      for (float v : grid.values) most = std::max(most, m.horizontalAdvance(cell_text(v)));
      return most;
    };
    for (double size = font().pointSizeF() * 0.85; size >= 6; size -= 0.5) {
      small.setPointSizeF(size);
      if (widest(QFontMetrics(small)) <= cell_w_ - 2) break;
    }
    const QFontMetrics metrics(small);
    const bool numbers = cell_h_ >= metrics.height() && widest(metrics) <= cell_w_ - 2;
    p.setFont(small);
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) {
        const size_t i = size_t(r) * cols_ + c;
        const QRect cell(origin.x() + c * cell_w_, origin.y() + r * cell_h_, cell_w_, cell_h_);
        const bool pad = !padding_.empty() && padding_[i];
        const QColor fill = pad ? palette().color(QPalette::Mid) : grid.scale.color(grid.values[i]);
        p.fillRect(cell, fill);
        if (pad) p.fillRect(cell, QBrush(palette().color(QPalette::Dark), Qt::BDiagPattern));
        if (!numbers) continue;
        p.setPen(fill.lightness() < 128 ? Qt::white : Qt::black);
        p.drawText(cell, Qt::AlignCenter, cell_text(grid.values[i]));
      }
    p.setFont(font());
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(QRect(origin, QSize(cols_ * cell_w_, rows_ * cell_h_)).adjusted(0, 0, -1, -1));
  }

  QString caption_;
  QImage map_;
  ColorScale map_scale_;
  int map_cell_ = 1;
  QRect window_;  // in map values
  std::vector<Grid> grids_;
  std::vector<uint8_t> padding_;
  int rows_, cols_, cell_w_ = 1, cell_h_ = 1;
};

ColorScale signed_scale(const std::vector<float>& values) {
  float largest = 0;
  for (float v : values) largest = std::max(largest, std::abs(v));
  return {ColorScale::Kind::Signed, -largest, largest};
}

}  // namespace

ExplainView::ExplainView(QWidget* parent) : QScrollArea(parent), content_(new QWidget) {
  setWidgetResizable(true);
  column_ = new QVBoxLayout(content_);
  heading_ = new QLabel(content_);
  heading_->setWordWrap(true);
  sum_ = new QLabel(content_);
  sum_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Larger through <big> in its text, not setFont: the size follows the label's font, which
  // presenter mode enlarges and gives back, as it does every widget's.
  sum_->setTextFormat(Qt::RichText);
  column_->addWidget(heading_, 0, Qt::AlignLeft);
  column_->addWidget(sum_);
  column_->addStretch(1);
  setWidget(content_);
  show_message(tr("Click a value of a convolution's feature map to see the sum that made it."));
}

bool ExplainView::viewportEvent(QEvent* event) {
  // The rows may be wider than the view (they scroll sideways), but the heading wraps to what is
  // in view, so that its end is read without scrolling: as wide as the view, at its left.
  if (event->type() == QEvent::Resize) {
    const QMargins margins = column_->contentsMargins();
    heading_->setFixedWidth(std::max(1, viewport()->width() - margins.left() - margins.right()));
  }
  return QScrollArea::viewportEvent(event);
}

void ExplainView::set_pass(ForwardPass pass) {
  pass_ = std::move(pass);
  recompute();
}

QString ExplainView::sum_text() const { return shown_ ? sum_plain_ : QString(); }
QString ExplainView::message() const { return shown_ ? QString() : heading_->text(); }

QRect ExplainView::window_rect(int row) const {
  if (row < 0 || row >= channel_rows()) return {};
  const auto* product_row = static_cast<const ProductRow*>(rows_[size_t(row)]);
  const QRect on_map = product_row->window_on_map();
  if (on_map.isNull()) return {};
  return QRect(product_row->mapTo(viewport(), on_map.topLeft()), on_map.size());
}

void ExplainView::show_message(const QString& text) {
  for (QWidget* row : rows_) delete row;
  rows_.clear();
  shown_.reset();
  heading_->setText(text);
  sum_->clear();
  sum_->hide();
}

void ExplainView::recompute() {
  if (!pass_.problem.empty())
    return show_message(tr("Nothing to explain: %1").arg(QString::fromStdString(pass_.problem)));
  if (!pass_.activations) return show_message(tr("Load a model and pick a digit first."));
  if (asked_.layer >= 0)
    explain(asked_.layer, asked_.channel, asked_.y, asked_.x);
  else
    show_message(tr("Click a value of a convolution's feature map to see the sum that made it."));
}

void ExplainView::explain(int layer, int channel, int y, int x) {
  asked_ = {layer, channel, y, x};
  if (!pass_.activations) return recompute();
  const ModelWeights& model = *pass_.model;
  const NetworkActivations& activations = *pass_.activations;
  const ModelPlan& plan = model.plan;
  if (layer < 0 || size_t(layer) >= plan.layers.size()) return show_message(tr("No such layer."));
  const LayerInfo& info = plan.layers[size_t(layer)];
  const QString name = QString::fromStdString(info.spec.name);
  if (info.spec.type != LayerType::Conv2d && info.spec.type != LayerType::Linear)
    return show_message(tr("%1 (%2) has no weights: each of its values comes from the layer "
                           "before it alone. Click a convolution's or a linear layer's values.")
                            .arg(name, layer_type_name(info.spec.type)));
  try {
    shown_ = std::make_unique<ProductSum>(explain_output(model, activations, layer, channel, y, x));
  } catch (const std::exception& e) {
    return show_message(QString::fromUtf8(e.what()));
  }
  for (QWidget* row : rows_) delete row;
  rows_.clear();
  const ProductSum& s = *shown_;
  const bool conv = s.type == LayerType::Conv2d;
  const size_t count = s.products.size();
  heading_->setText(
      conv ? tr("<b>%1</b>, channel %2, at row %3, column %4: its %5×%5 filter over each of "
                "%6 input channels (the yellow box), multiplied value by value")
                 .arg(name)
                 .arg(channel + 1)  // from 1, as the feature maps and filters are numbered
                 .arg(y)
                 .arg(x)
                 .arg(s.rows)
                 .arg(s.in_channels)
           : tr("<b>%1</b>, output %2: every input value times its weight").arg(name).arg(channel));
  sum_plain_ = tr("Σ %1 products %2 + bias %3 = %4   (the map holds %5)")
                   .arg(count)
                   .arg(number_text(double(s.sum) - double(s.bias)))
                   .arg(number_text(s.bias))
                   .arg(number_text(s.sum))
                   .arg(number_text(s.activation));
  sum_->setText("<big style=\"white-space: pre\">" + sum_plain_.toHtmlEscaped() + "</big>");
  sum_->show();
  const std::vector<float>& input =
      layer == 0 ? activations.input : activations.layers[size_t(layer) - 1].values;
  // A flat input is one strip of values; a shaped one a row per channel.
  const bool strip = s.rows * s.cols == 1;
  const int channels = strip ? 1 : s.in_channels;
  const int rows = strip ? 1 : s.rows, cols = strip ? s.in_channels : s.cols;
  const size_t window = size_t(rows) * cols;
  const ColorScale weight_scale = signed_scale(s.weights);
  const ColorScale product_scale = signed_scale(s.products);
  const ColorScale patch_scale = ColorScale::fitting(s.patch.data(), s.patch.size());
  const size_t plane = size_t(s.input_shape.height) * s.input_shape.width;
  for (int c = 0; c < channels; ++c) {
    const size_t first = size_t(c) * window;
    auto part = [&](const std::vector<float>& all) {
      return std::vector<float>(all.begin() + first, all.begin() + first + window);
    };
    double subtotal = 0;
    for (size_t i = first; i < first + window; ++i) subtotal += s.products[i];
    std::vector<ProductRow::Grid> grids = {{part(s.patch), patch_scale},
                                           {part(s.weights), weight_scale},
                                           {part(s.products), product_scale}};
    const QString caption =
        strip ? tr("the %1 inputs × their weights = products, Σ %2")
                    .arg(cols)
                    .arg(number_text(subtotal))
              : tr("input channel %1: the input under the window × the filter = products, Σ %2")
                    .arg(c + 1)
                    .arg(number_text(subtotal));
    auto* row = new ProductRow(
        caption, conv ? input.data() + c * plane : nullptr, s.input_shape,
        QRect(s.left, s.top, s.cols, s.rows), std::move(grids),
        std::vector<uint8_t>(s.padding.begin() + first, s.padding.begin() + first + window), rows,
        cols, content_);
    column_->insertWidget(column_->count() - 1, row);
    rows_.push_back(row);
  }
}

}  // namespace gpulab::ui
