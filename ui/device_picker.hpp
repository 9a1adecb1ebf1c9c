// Where to train: the CPU (with its thread count) and each GPU; tick several to race them. With no
// GPU the GPU choice is disabled and says why, and everything else works.
#pragma once

#include <string>
#include <vector>

#include <QGroupBox>

#include "engine/devices.hpp"

class QCheckBox;
class QSpinBox;

namespace gpulab::ui {

class DevicePicker : public QGroupBox {
  Q_OBJECT

 public:
  explicit DevicePicker(const DeviceList& devices, QWidget* parent = nullptr);

  std::vector<std::string> selected() const;  // "cpu", "cuda:0", ...
  int threads() const;                        // CPU threads for CPU runs
  void set_threads(int threads);
  // Ticks only this device (when it exists here); returns whether it does.
  bool select_only(const std::string& device);
  bool add(const std::string& device);  // ticks it too; false where it does not exist
  bool has_gpu() const { return !gpu_boxes_.empty(); }
  const DeviceList& devices() const { return devices_; }

 signals:
  void selection_changed();

 private:
  DeviceList devices_;
  QCheckBox* cpu_box_;
  QSpinBox* threads_;
  std::vector<QCheckBox*> gpu_boxes_;
};

}  // namespace gpulab::ui
