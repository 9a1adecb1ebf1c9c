// The experiment: a model (a preset, or layers edited in the table) and how to train it
// (optimizer, learning rate, schedule, batch size, epochs, precision, seed; the input pipeline,
// where a GPU's data are, its convolutions and CUDA graphs), saved and loaded as
// the JSON that `gpulab-cli train --model FILE.json` reads.
#pragma once

#include <QTabWidget>
#include <optional>
#include <utility>

#include "engine/training/experiment.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QWidget;

namespace gpulab::ui {

class LayerEditor;
class LimitedDoubleSpinBox;
class LimitedSpinBox;

class ExperimentPanel : public QTabWidget {
  Q_OBJECT

 public:
  explicit ExperimentPanel(QWidget* parent = nullptr);

  // The model and training settings; backend.device and threads are the device picker's.
  Experiment experiment() const;
  void set_experiment(const Experiment& experiment);
  // Empty when the setup can run; else what is wrong.
  QString problem() const;
  // The settings of the last setup applied that no field shows (a planned learning-rate change,
  // stop at an accuracy, the Step schedule's gamma and step size, the gradient buckets), kept for the runs it starts
  // and said under the fields; empty when there are none. Forget drops them.
  QString kept_text() const;
  void forget_kept();
  // While runs with a target and test interval of their own train (a lab's experiment), those two
  // fields show the running ones', greyed, and experiment() still gives the window's own;
  // show_own_targets() puts the window's own back.
  void show_running_targets(double target_accuracy, int64_t eval_every);
  void show_own_targets();
  // Precision, GPU data, GPU convolutions and CUDA graphs are greyed (their choice kept) unless
  // a GPU is among the chosen devices.
  void set_gpu_selected(bool gpu);
  LayerEditor* layers() { return layers_; }

  bool load_file(const QString& path, QString* error);
  bool save_file(const QString& path, QString* error) const;

 signals:
  void changed();
  // Something the user should read: a value typed out of range and clamped, naming the field.
  void message(const QString& text);

 private:
  void choose_preset(int index);
  void update_enabled();
  void show_kept();

  QComboBox* model_;
  QLabel* model_status_;
  LayerEditor* layers_;
  QComboBox* optimizer_;
  LimitedDoubleSpinBox* lr_;
  LimitedDoubleSpinBox* momentum_;
  LimitedDoubleSpinBox* weight_decay_;
  QComboBox* schedule_;
  LimitedSpinBox* batch_;
  LimitedSpinBox* epochs_;
  LimitedSpinBox* steps_;
  QComboBox* precision_;
  QComboBox* preprocess_;
  QComboBox* data_on_;
  QComboBox* conv_;
  QCheckBox* cuda_graph_;
  LimitedSpinBox* seed_;
  QCheckBox* shuffle_;
  LimitedDoubleSpinBox* target_;
  LimitedSpinBox* eval_every_;
  QWidget* kept_row_;
  QLabel* kept_label_;
  TrainOptions kept_;  // the last setup's settings: those no field shows go into experiment()
  BackendOptions kept_backend_;  // likewise (bucket size, collective timeout)
  bool applying_ = false;
  // The window's own target (%) and test interval while the running ones' are shown.
  std::optional<std::pair<double, int>> own_targets_;
};

}  // namespace gpulab::ui
