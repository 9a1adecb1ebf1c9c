// The filters of every convolution of a model as small images on a signed colour scale (blue
// negative, white 0, red positive) with a legend of each layer's range: what the layer looks for.
#pragma once

#include <QScrollArea>
#include <memory>
#include <vector>

#include "engine/inside/model_weights.hpp"
#include "ui/inside/tile_grid.hpp"

class QLabel;
class QVBoxLayout;

namespace gpulab::ui {

class FiltersView : public QScrollArea {
  Q_OBJECT

 public:
  explicit FiltersView(QWidget* parent = nullptr);
  // Shows the model's convolutions; nullptr (or a model without any) shows a line saying so.
  void set_model(std::shared_ptr<const ModelWeights> model);

  // One per convolution of the model, in order: for tests and the tab's export.
  int layer_count() const { return int(layers_.size()); }
  TileGrid* grid(int i) const { return layers_.at(size_t(i)).grid; }
  ColorLegend* legend(int i) const { return layers_.at(size_t(i)).legend; }
  QLabel* title(int i) const { return layers_.at(size_t(i)).title; }

 private:
  void clear();
  std::shared_ptr<const ModelWeights> model_;
  QWidget* content_;
  QVBoxLayout* column_;
  QLabel* empty_;
  std::vector<TileSection> layers_;
};

}  // namespace gpulab::ui
