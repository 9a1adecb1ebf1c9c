// The experiment: a model (a preset, or layers edited in the table) and how to train it
// (optimizer, learning rate, schedule, batch size, epochs, precision, seed), saved and loaded as
// the JSON that `gpulab-cli train --model FILE.json` reads.
#pragma once

#include <QTabWidget>

#include "engine/training/experiment.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

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
  // fp32 only unless a GPU is among the chosen devices.
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
  LimitedSpinBox* seed_;
  QCheckBox* shuffle_;
  LimitedDoubleSpinBox* target_;
  LimitedSpinBox* eval_every_;
  bool applying_ = false;
};

}  // namespace gpulab::ui
