// "From the whole network down to one multiply": one output value of a convolution (or linear
// layer) as the sum it is. Per input channel: the input with the filter's window marked on it,
// the values under the window, the filter's weights and their products; then
// "Σ products + bias = value" with the numbers, which is the value the feature map holds.
#pragma once

#include <QScrollArea>
#include <memory>
#include <vector>

#include "engine/inside/activations.hpp"

class QLabel;
class QVBoxLayout;

namespace gpulab::ui {

class ExplainView : public QScrollArea {
  Q_OBJECT

 public:
  explicit ExplainView(QWidget* parent = nullptr);
  // The image through the model (forward_pass) whose values are taken apart; the value asked
  // for last is explained again in it.
  void set_pass(ForwardPass pass);

  // Shows output (channel, y, x) of layer `layer` (an index into the model's plan), as
  // FeatureMapsView::value_clicked gives it; a layer with no products gets a line saying so.
  void explain(int layer, int channel, int y, int x);

  const ProductSum* shown() const { return shown_.get(); }  // nullptr when nothing is explained
  QString sum_text() const;  // "Σ products + bias = value" with the numbers
  QString message() const;   // why nothing is explained, empty when something is
  int channel_rows() const { return int(rows_.size()); }
  // Where the window sits on input channel `row`'s map, in this view's viewport (empty for a
  // linear layer, whose window is its whole input).
  QRect window_rect(int row) const;

 protected:
  bool viewportEvent(QEvent* event) override;

 private:
  void recompute();
  void show_message(const QString& text);
  ForwardPass pass_;
  std::unique_ptr<ProductSum> shown_;
  struct Asked {
    int layer = -1, channel = 0, y = 0, x = 0;
  } asked_;
  QWidget* content_;
  QVBoxLayout* column_;
  QLabel* heading_;
  QLabel* sum_;
  QString sum_plain_;  // sum_'s text, without the markup that makes it large
  std::vector<QWidget*> rows_;
};

}  // namespace gpulab::ui
