// Where to train: the CPU (with its thread count and data-parallel replicas) and each GPU; tick
// several to race them. With no GPU the GPU choice is disabled and says why, and everything else
// works.
#pragma once

#include <string>
#include <vector>

#include <QGroupBox>

#include "engine/backend.hpp"
#include "engine/devices.hpp"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace gpulab::ui {

class DevicePicker : public QGroupBox {
  Q_OBJECT

 public:
  explicit DevicePicker(const DeviceList& devices, QWidget* parent = nullptr);

  std::vector<std::string> selected() const;  // "cpu", "cuda:0", ...
  int threads() const;                        // CPU threads for CPU runs
  void set_threads(int threads);
  // Data parallelism: replicas of the model for CPU runs, and how they agree on the update.
  int replicas() const;
  void set_replicas(int replicas);
  SyncMode sync() const;
  void set_sync(SyncMode sync);
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
  QSpinBox* replicas_;
  QComboBox* sync_;
  QSpinBox* gpu_replicas_;
  std::vector<QCheckBox*> gpu_boxes_;
};

}  // namespace gpulab::ui
