// Draw a digit: the canvas, the 28x28 image the model sees (MNIST's preprocessing of the
// drawing), the ten class probabilities as bars, the predicted digit large, and how long one
// inference takes on the CPU and on the window's first GPU. The model classifies as the learner
// draws. The bars go under the drawing where the panel is narrow (beside the setup at 1024x768).
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "engine/inside/model_weights.hpp"
#include "ui/inside/background.hpp"

class QBoxLayout;
class QHBoxLayout;
class QLabel;
class QVBoxLayout;
class QPushButton;

namespace gpulab::ui {

class DigitCanvas;
class ProbabilityBars;

class DigitPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DigitPanel(QWidget* parent = nullptr);
  ~DigitPanel() override;

  void set_model(std::shared_ptr<const ModelWeights> model);  // null: none open
  // The GPU one inference is timed on ("cuda:0"), or none and why there is none.
  void set_gpu(const QString& device, const QString& no_gpu_reason);

  DigitCanvas* canvas() { return canvas_; }
  QPushButton* clear_button() { return clear_; }
  // What is shown: the predicted class (-1 when none), its probabilities (empty when none), and
  // the line above the bars ("draw a digit", "open a model first", or the prediction).
  int predicted() const { return predicted_; }
  const std::vector<float>& probabilities() const { return probabilities_; }
  QString status() const;
  QString cpu_time_text() const;
  // One inference on the GPU, timed on a worker thread when a model opens (or "no GPU").
  QLabel* gpu_time_label() { return gpu_time_; }
  QLabel* cpu_time_label() { return cpu_time_; }
  QWidget* probability_bars();  // the ten bars and their digits
  // The 28x28 image the model sees (784 bytes), empty when the canvas holds no digit.
  const std::vector<uint8_t>& seen_digit() const { return seen_digit_; }

 public slots:
  void classify();  // the drawing as it is now: one forward pass, while the pen moves
  void time_cpu();  // the CPU time of one inference of the drawing: at a stroke's end

 public:
  // As narrow as the drawing alone: narrower than the drawing and the bars side by side.
  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  int width_beside() const;  // the least width with the bars beside the drawing
  void show_none(const QString& why);
  void time_gpu();

  std::shared_ptr<const ModelWeights> model_;
  std::unique_ptr<Classifier> classifier_;  // model_'s CPU network, built once
  QString gpu_, no_gpu_reason_;
  Background gpu_timing_{this};
  DigitCanvas* canvas_;
  QPushButton* clear_;
  QLabel* seen_;   // the 28x28 image, scaled up without smoothing
  QLabel* digit_;  // the predicted class, large
  QLabel* status_;
  QLabel* cpu_time_;
  QLabel* gpu_time_;
  ProbabilityBars* bars_;
  QBoxLayout* layout_;    // the drawing, and the results beside or under it
  QHBoxLayout* drawing_;  // the canvas and what the model sees
  QVBoxLayout* results_;  // the line, the timings and the bars
  int predicted_ = -1;
  std::vector<float> probabilities_;
  std::vector<uint8_t> seen_digit_;
};

}  // namespace gpulab::ui
