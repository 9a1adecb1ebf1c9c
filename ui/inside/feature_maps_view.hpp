// Every layer's output for one 28x28 image: a small tile per channel (a strip of values for a flat
// layer), labelled with the layer's name and shape, each layer on its own colour scale with a
// legend. A click on a tile says which value it hit, for the explain view.
#pragma once

#include <QScrollArea>
#include <vector>

#include "engine/inside/activations.hpp"
#include "ui/inside/tile_grid.hpp"

class QLabel;
class QVBoxLayout;

namespace gpulab::ui {

class FeatureMapsView : public QScrollArea {
  Q_OBJECT

 public:
  explicit FeatureMapsView(QWidget* parent = nullptr);
  // The image through the model (forward_pass): its maps, or the line saying what is missing
  // or wrong (no model, no image, an image that is not 28x28).
  void set_pass(ForwardPass pass);

  // The forward pass shown, nullptr before there is a model and an image that fit.
  const NetworkActivations* activations() const { return pass_.activations.get(); }
  // The grid of layer `layer` (index into the model's plan), nullptr for the layers not drawn
  // (flatten and dropout, which pass their input on unchanged in inference); -1: the input.
  TileGrid* grid_of_layer(int layer) const;
  // Where value (channel, y, x) of layer `layer` is drawn, in this view's viewport.
  QRect value_rect(int layer, int channel, int y, int x) const;
  QString message() const;  // the line shown instead of maps, empty when maps are shown

 signals:
  // A click on layer `layer`'s output value (channel, y, x); y = x = 0 in a flat layer.
  void value_clicked(int layer, int channel, int y, int x);

 private:
  struct Shown {
    int layer;  // -1: the input
    TileSection section;
  };
  void rebuild();
  void add_maps(int layer, const QString& title, const ActivationShape& shape,
                const std::vector<float>& values);
  static bool is_flat(const ActivationShape& shape) {
    return shape.height == 1 && shape.width == 1;
  }
  ForwardPass pass_;
  QWidget* content_;
  QVBoxLayout* column_;
  QLabel* message_;
  std::vector<Shown> shown_;
};

}  // namespace gpulab::ui
