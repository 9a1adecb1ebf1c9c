// Where to train: the CPU (with its thread count and data-parallel replicas) and each GPU (with
// replicas per GPU, and whether the ticked GPUs make one run or race each other); tick several to
// race them. With no GPU the GPU choices are disabled and say why, and everything else works.
#pragma once

#include <string>
#include <vector>

#include <QGroupBox>

#include "engine/backend/backend.hpp"
#include "engine/devices/devices.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace gpulab::ui {

class LimitedSpinBox;

class DevicePicker : public QGroupBox {
  Q_OBJECT

 public:
  explicit DevicePicker(const DeviceList& devices, QWidget* parent = nullptr);

  // One device name per run that ▶ Train starts: "cpu", "cuda:0", "cuda:0x2", and, with "one
  // run across the ticked GPUs", a single "cuda:0,1" or "cuda:0x2,1x2" for all of them.
  std::vector<std::string> selected() const;
  // The device, threads, replicas and sync of a run on `device` (one of selected()), as the
  // picker sets them: the CPU row's threads and replicas for "cpu" (a GPU run names its replicas
  // in the device); the picker's sync for a run of more than one replica, else all-reduce. A CPU
  // run is fp32, im2col and fed from host memory whatever `base` asks of a GPU (a race of the CPU
  // against a tf32 GPU run). The other fields of `base` are kept.
  BackendOptions run_options(const std::string& device, BackendOptions base = {}) const;
  // Sets the picker to what a setup or a run used (run_options's inverse): ticks its device and
  // sets its threads, replicas and sync. False, with the picker's ticks unchanged, where the
  // device is not here or the picker cannot show it (cuda:0x2,1: replicas per GPU differ).
  bool apply(const BackendOptions& backend);
  // Whether this machine has every GPU of `device` and the picker can show it.
  bool offers(const std::string& device) const;

  int threads() const;  // CPU threads for CPU runs
  void set_threads(int threads);
  // Data parallelism: replicas of the model for CPU runs, and how the replicas of any run (CPU
  // or GPU) agree on the update; the choice is enabled while a run of several replicas is ticked.
  int replicas() const;
  void set_replicas(int replicas);
  SyncMode sync() const;
  void set_sync(SyncMode sync);
  // Replicas on each ticked GPU, and whether the ticked GPUs train as one run (else each is a
  // run of its own, raced against the others).
  int gpu_replicas() const;
  void set_gpu_replicas(int replicas);
  bool one_gpu_run() const;
  void set_one_gpu_run(bool one_run);
  // Ticks only this device (when it exists here and the picker can show it); returns whether it
  // does. "cuda:0,1" ticks both GPUs as one run; "cuda:0x2" sets two replicas per GPU.
  bool select_only(const std::string& device);
  bool add(const std::string& device);  // ticks a "cpu" or "cuda:N" too; false where it does not exist
  bool has_gpu() const { return !gpu_boxes_.empty(); }
  const DeviceList& devices() const { return devices_; }
  QString plan() const;  // what ▶ Train starts, in words, as the picker shows it

 signals:
  void selection_changed();
  // A value set out of range (a setup's threads or replicas) and clamped, as the setup's other
  // fields say it (clamp_message).
  void message(const QString& text);

 private:
  struct GpuChoice {
    std::vector<int> gpus;  // the GPUs, in the order named
    int replicas = 1;       // on each
  };
  // `device` as ticks, or false where it is not here or replicas per GPU differ.
  bool choice_for(const std::string& device, GpuChoice* choice) const;
  std::vector<int> ticked_gpus() const;
  int replica_count(const std::string& device) const;  // replicas of a run on `device`
  bool any_replicated() const;                          // a ticked run has more than one

  DeviceList devices_;
  QCheckBox* cpu_box_;
  LimitedSpinBox* threads_;
  LimitedSpinBox* replicas_;
  QComboBox* sync_;
  LimitedSpinBox* gpu_replicas_;
  QCheckBox* one_gpu_run_;
  QLabel* plan_;
  std::vector<QCheckBox*> gpu_boxes_;
};

}  // namespace gpulab::ui
