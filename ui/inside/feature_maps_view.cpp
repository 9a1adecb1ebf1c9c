// The feature maps: the model's own CPU forward pass (engine/inside/activations), drawn layer by
// layer from the input down to the class scores.
#include "ui/inside/feature_maps_view.hpp"

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

namespace gpulab::ui {
namespace {

constexpr int kTilePixels = 56;   // a map's drawn size: 2 screen pixels a value at 28x28
constexpr int kMostColumns = 8;   // maps per row
constexpr int kStripWidth = 640;  // a flat layer's values side by side, at most this wide
constexpr int kStripHeight = 24;

}  // namespace

FeatureMapsView::FeatureMapsView(QWidget* parent) : QScrollArea(parent), content_(new QWidget) {
  setWidgetResizable(true);
  column_ = new QVBoxLayout(content_);
  message_ = new QLabel(content_);
  message_->setWordWrap(true);
  column_->addWidget(message_);
  column_->addStretch(1);
  setWidget(content_);
  rebuild();
}

void FeatureMapsView::set_pass(ForwardPass pass) {
  pass_ = std::move(pass);
  rebuild();
}

TileGrid* FeatureMapsView::grid_of_layer(int layer) const {
  for (const Shown& s : shown_)
    if (s.layer == layer) return s.section.grid;
  return nullptr;
}

QRect FeatureMapsView::value_rect(int layer, int channel, int y, int x) const {
  const TileGrid* grid = grid_of_layer(layer);
  if (!grid || !pass_.activations) return {};
  const ActivationShape shape = layer < 0 ? pass_.activations->input_shape
                                          : pass_.activations->layers[size_t(layer)].info.output;
  QRect tile;
  int rows = shape.height, cols = shape.width, row = y, col = x;
  if (is_flat(shape) && layer >= 0) {
    tile = grid->tile_rect(0);
    rows = 1, cols = shape.channels, row = 0, col = channel;
  } else {
    tile = grid->tile_rect(channel);
  }
  // The same arithmetic as the grid's click: value (row, col) covers these pixels.
  const int left = tile.left() + (col * tile.width() + cols - 1) / cols;
  const int top = tile.top() + (row * tile.height() + rows - 1) / rows;
  const int right = tile.left() + ((col + 1) * tile.width() + cols - 1) / cols;
  const int bottom = tile.top() + ((row + 1) * tile.height() + rows - 1) / rows;
  const QRect in_grid(left, top, std::max(1, right - left), std::max(1, bottom - top));
  return QRect(grid->mapTo(viewport(), in_grid.topLeft()), in_grid.size());
}

QString FeatureMapsView::message() const {
  return message_->isHidden() ? QString() : message_->text();
}

void FeatureMapsView::add_maps(int layer, const QString& title_text, const ActivationShape& shape,
                               const std::vector<float>& values) {
  ColorScale scale = ColorScale::fitting(values.data(), values.size());
  if (layer < 0) {  // the digit as it looks: its darkest value black, its brightest white
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    scale = {ColorScale::Kind::Grey, *low, *high};
  }
  std::vector<QImage> images;
  std::vector<QString> captions;
  QSize tile(kTilePixels, kTilePixels);
  int columns = std::min(shape.channels, kMostColumns);
  if (is_flat(shape) && layer >= 0) {
    images.push_back(scale_image(values.data(), 1, shape.channels, scale));
    captions.push_back(
        tr("%1 values, 0 to %2 from the left").arg(shape.channels).arg(shape.channels - 1));
    const int cell = std::clamp(kStripWidth / shape.channels, 1, kStripHeight);
    tile = QSize(cell * shape.channels, kStripHeight);
    columns = 1;
  } else {
    const int scale_up = std::max(1, (kTilePixels + shape.height - 1) / shape.height);
    tile = QSize(shape.width * scale_up, shape.height * scale_up);
    const size_t plane = size_t(shape.height) * shape.width;
    for (int c = 0; c < shape.channels; ++c) {
      images.push_back(scale_image(values.data() + c * plane, shape.height, shape.width, scale));
      // Numbered from 1, as the filters that make them: filter 4 makes map 4.
      captions.push_back(shape.channels > 1 ? QString::number(c + 1) : QString());
    }
  }
  const TileSection section = make_tile_section(title_text, scale, content_);
  section.grid->set_tiles(std::move(images), std::move(captions), tile, columns);
  column_->insertWidget(column_->count() - 2, section.box);  // before the message and stretch
  shown_.push_back({layer, section});
  TileGrid* grid = section.grid;
  if (layer < 0) return;  // the input is no layer's output: nothing to explain
  const bool flat = is_flat(shape);
  connect(grid, &TileGrid::tile_clicked, this, [this, layer, flat](int index, int y, int x) {
    if (flat)
      emit value_clicked(layer, x, 0, 0);
    else
      emit value_clicked(layer, index, y, x);
  });
}

void FeatureMapsView::rebuild() {
  for (const Shown& s : shown_) delete s.section.box;
  shown_.clear();
  QString problem;
  if (!pass_.model)
    problem = tr("No model loaded: open a checkpoint to see what each layer makes of a digit.");
  else if (!pass_.problem.empty())
    problem = tr("No feature maps: %1").arg(QString::fromStdString(pass_.problem));
  else if (!pass_.activations)
    problem = tr("Draw a digit or pick a test image to see its feature maps.");
  message_->setText(problem);
  message_->setVisible(!problem.isEmpty());
  if (!pass_.activations) return;
  const NetworkActivations& activations = *pass_.activations;
  auto shape_text = [](const ActivationShape& s) {
    return s.height == 1 && s.width == 1
               ? QString::number(s.channels)
               : QString("%1×%2×%3").arg(s.channels).arg(s.height).arg(s.width);
  };
  add_maps(
      -1,
      tr("<b>input</b> · %1, normalized as in training").arg(shape_text(activations.input_shape)),
      activations.input_shape, activations.input);
  for (size_t i = 0; i < activations.layers.size(); ++i) {
    const LayerActivation& a = activations.layers[i];
    const LayerType type = a.info.spec.type;
    if (type == LayerType::Flatten || type == LayerType::Dropout) continue;
    add_maps(int(i),
             tr("<b>%1</b> (%2) · %3")
                 .arg(QString::fromStdString(a.info.spec.name), layer_type_name(type),
                      shape_text(a.info.output)),
             a.info.output, a.values);
  }
}

}  // namespace gpulab::ui
