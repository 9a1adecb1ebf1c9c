// The device picker.
#include "ui/device_picker.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

namespace gpulab::ui {

DevicePicker::DevicePicker(const DeviceList& devices, QWidget* parent)
    : QGroupBox(tr("Device"), parent), devices_(devices) {
  auto* grid = new QGridLayout(this);
  const CpuInfo& cpu = devices.cpu;
  cpu_box_ = new QCheckBox(tr("CPU: %1").arg(QString::fromStdString(cpu.model)), this);
  cpu_box_->setObjectName("device-cpu");
  cpu_box_->setChecked(true);
  cpu_box_->setToolTip(tr("%1 logical cores, %2; %3")
                           .arg(cpu.logical_cores)
                           .arg(QString::fromStdString(cpu.simd), QString::fromStdString(cpu.blas)));
  threads_ = new QSpinBox(this);
  threads_->setObjectName("cpu-threads");
  threads_->setRange(1, std::max(1, cpu.logical_cores));
  threads_->setValue(std::max(1, cpu.logical_cores));
  auto thread_suffix = [this](int count) {
    threads_->setSuffix(count == 1 ? tr(" thread") : tr(" threads"));
  };
  thread_suffix(threads_->value());
  connect(threads_, &QSpinBox::valueChanged, this, thread_suffix);
  threads_->setToolTip(tr("CPU threads for the CPU run (this machine has %1)").arg(cpu.logical_cores));
  grid->addWidget(cpu_box_, 0, 0);
  grid->addWidget(threads_, 0, 1);
  connect(cpu_box_, &QCheckBox::toggled, this, &DevicePicker::selection_changed);
  connect(cpu_box_, &QCheckBox::toggled, threads_, &QSpinBox::setEnabled);

  // Data parallelism on the CPU: R model copies on threads of their own, the batch split among
  // them. More replicas than cores is allowed, to show what oversubscription costs.
  replicas_ = new QSpinBox(this);
  replicas_->setObjectName("cpu-replicas");
  replicas_->setRange(1, 2 * std::max(1, cpu.logical_cores));
  replicas_->setValue(1);
  replicas_->setPrefix(tr("replicas: "));
  replicas_->setToolTip(
      tr("Data parallelism: copies of the model, each on its own threads (the "
         "CPU threads divided among them) with its share of every batch; their "
         "gradients are summed before each update. 1: plain training."));
  sync_ = new QComboBox(this);
  sync_->setObjectName("sync-mode");
  sync_->addItem(tr("all-reduce"), int(SyncMode::AllReduce));
  sync_->addItem(tr("parameter server"), int(SyncMode::ParameterServer));
  sync_->setToolTip(
      tr("How the replicas agree on the update: every replica sums the gradients "
         "and takes the same step (all-reduce), or a server holds the parameters, "
         "takes the step once and sends them back (parameter server)."));
  auto* parallel = new QHBoxLayout;
  parallel->addWidget(replicas_, 1);
  parallel->addWidget(sync_, 1);
  grid->addLayout(parallel, 1, 0, 1, 2);
  auto enable_parallel = [this] {
    replicas_->setEnabled(cpu_box_->isChecked());
    sync_->setEnabled(cpu_box_->isChecked() && replicas_->value() > 1);
  };
  connect(cpu_box_, &QCheckBox::toggled, this, enable_parallel);
  connect(replicas_, &QSpinBox::valueChanged, this, enable_parallel);
  connect(replicas_, &QSpinBox::valueChanged, this, &DevicePicker::selection_changed);
  enable_parallel();

  int row = 2;
  for (const GpuInfo& gpu : devices.gpus) {
    auto* box = new QCheckBox(QString("cuda:%1: %2 (%3 GiB)")
                                  .arg(gpu.index)
                                  .arg(QString::fromStdString(gpu.name))
                                  .arg(gpu.memory_bytes / double(1 << 30), 0, 'f', 1),
                              this);
    box->setObjectName(QString("device-cuda-%1").arg(gpu.index));
    box->setProperty("device", QString("cuda:%1").arg(gpu.index));
    box->setToolTip(tr("compute capability %1.%2, driver %3, CUDA runtime %4")
                        .arg(gpu.compute_major)
                        .arg(gpu.compute_minor)
                        .arg(QString::fromStdString(gpu.driver_version),
                             QString::fromStdString(gpu.runtime_version)));
    grid->addWidget(box, row++, 0, 1, 2);
    connect(box, &QCheckBox::toggled, this, &DevicePicker::selection_changed);
    gpu_boxes_.push_back(box);
  }
  if (devices.gpus.empty()) {
    auto* box = new QCheckBox(tr("GPU"), this);
    box->setObjectName("device-no-gpu");
    box->setEnabled(false);
    auto* why = new QLabel(tr("No GPU: %1. Everything else works on the CPU.")
                               .arg(QString::fromStdString(devices.no_gpu_reason)),
                           this);
    why->setObjectName("no-gpu-reason");
    why->setWordWrap(true);
    why->setStyleSheet("color: #8a5a00");
    grid->addWidget(box, row, 0);
    grid->addWidget(why, row + 1, 0, 1, 2);
  }
  // Data parallelism on GPUs (a set of GPUs, cuda:0,1; several replicas on one, cuda:0x2) is not
  // in the engine yet: the control is there, disabled, and says so.
  gpu_replicas_ = new QSpinBox(this);
  gpu_replicas_->setObjectName("gpu-replicas");
  gpu_replicas_->setRange(1, 8);
  gpu_replicas_->setPrefix(tr("replicas per GPU: "));
  gpu_replicas_->setEnabled(false);
  gpu_replicas_->setToolTip(
      devices.gpus.empty()
          ? tr("No GPU here. Data parallelism over GPUs (cuda:0,1) and several replicas on one GPU "
               "(cuda:0x2) are not built yet either; replicas run on the CPU.")
          : tr("Data parallelism over GPUs (cuda:0,1) and several replicas on one GPU (cuda:0x2) "
               "are not built yet; replicas run on the CPU."));
  grid->addWidget(gpu_replicas_, row + 2, 0, 1, 2);
  ++row;
  auto* hint = new QLabel(tr("Tick several devices to race them."), this);
  hint->setStyleSheet("color: palette(mid)");
  grid->addWidget(hint, row + 2, 0, 1, 2);
}

std::vector<std::string> DevicePicker::selected() const {
  std::vector<std::string> devices;
  if (cpu_box_->isChecked()) devices.push_back("cpu");
  for (QCheckBox* box : gpu_boxes_)
    if (box->isChecked()) devices.push_back(box->property("device").toString().toStdString());
  return devices;
}

int DevicePicker::threads() const { return threads_->value(); }

void DevicePicker::set_threads(int threads) {
  if (threads > 0) threads_->setValue(threads);
}

int DevicePicker::replicas() const { return replicas_->value(); }

void DevicePicker::set_replicas(int replicas) { replicas_->setValue(std::max(1, replicas)); }

SyncMode DevicePicker::sync() const { return SyncMode(sync_->currentData().toInt()); }

void DevicePicker::set_sync(SyncMode sync) { sync_->setCurrentIndex(sync_->findData(int(sync))); }

bool DevicePicker::select_only(const std::string& device) {
  bool found = device == "cpu";
  for (QCheckBox* box : gpu_boxes_)
    found |= box->property("device").toString().toStdString() == device;
  if (!found) return false;
  cpu_box_->setChecked(device == "cpu");
  for (QCheckBox* box : gpu_boxes_)
    box->setChecked(box->property("device").toString().toStdString() == device);
  return true;
}

}  // namespace gpulab::ui

namespace gpulab::ui {

bool DevicePicker::add(const std::string& device) {
  if (device == "cpu") {
    cpu_box_->setChecked(true);
    return true;
  }
  for (QCheckBox* box : gpu_boxes_)
    if (box->property("device").toString().toStdString() == device) {
      box->setChecked(true);
      return true;
    }
  return false;
}

}  // namespace gpulab::ui
