// The device picker.
#include "ui/device_picker.hpp"

#include <QCheckBox>
#include <QGridLayout>
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

  int row = 1;
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
