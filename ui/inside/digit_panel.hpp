// Draw a digit: the canvas, the 28x28 image the model sees (MNIST's preprocessing of the
// drawing), the ten class probabilities as bars, the predicted digit large, and how long one
// inference took on the CPU. The model classifies as the learner draws.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "engine/inside/model_weights.hpp"

class QLabel;
class QPushButton;

namespace gpulab::ui {

class DigitCanvas;
class ProbabilityBars;

class DigitPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DigitPanel(QWidget* parent = nullptr);

  void set_model(std::shared_ptr<const ModelWeights> model);  // null: none open

  DigitCanvas* canvas() { return canvas_; }
  QPushButton* clear_button() { return clear_; }
  // What is shown: the predicted class (-1 when none), its probabilities (empty when none), and
  // the line above the bars ("draw a digit", "open a model first", or the prediction).
  int predicted() const { return predicted_; }
  const std::vector<float>& probabilities() const { return probabilities_; }
  QString status() const;
  QString cpu_time_text() const;
  // Where the GPU's time of one inference goes (shown once a GPU measurement is given).
  QLabel* gpu_time_label() { return gpu_time_; }

 public slots:
  void classify();  // the drawing as it is now

 private:
  void show_none(const QString& why);

  std::shared_ptr<const ModelWeights> model_;
  DigitCanvas* canvas_;
  QPushButton* clear_;
  QLabel* seen_;   // the 28x28 image, scaled up without smoothing
  QLabel* digit_;  // the predicted class, large
  QLabel* status_;
  QLabel* cpu_time_;
  QLabel* gpu_time_;
  ProbabilityBars* bars_;
  int predicted_ = -1;
  std::vector<float> probabilities_;
};

}  // namespace gpulab::ui
