// The device picker.
#include "ui/setup/device_picker.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <algorithm>

#include "engine/base/errors.hpp"
#include "ui/setup/limited_spin_box.hpp"

namespace gpulab::ui {
namespace {

constexpr int kMaxReplicasPerGpu = 16;  // as parse_cuda_devices allows

QString gpu_device(int gpu) { return QString("cuda:%1").arg(gpu); }

// "cpu, 3 replicas", "cuda:0x2,1x2 (4 replicas)".
QString describe_run(const std::string& device, int cpu_replicas) {
  const QString name = QString::fromStdString(device);
  if (device == "cpu")
    return cpu_replicas > 1 ? QObject::tr("cpu, %1 replicas").arg(cpu_replicas) : name;
  try {
    const size_t replicas = parse_cuda_devices(device).replicas.size();
    if (replicas > 1) return QObject::tr("%1 (%2 replicas)").arg(name).arg(replicas);
  } catch (const ConfigError&) {
  }
  return name;
}

}  // namespace

DevicePicker::DevicePicker(const DeviceList& devices, QWidget* parent)
    : QGroupBox(tr("Device"), parent), devices_(devices) {
  auto* grid = new QGridLayout(this);
  const CpuInfo& cpu = devices.cpu;
  const ClampReport report = [this](const QString& field, const QString& typed, const QString& used,
                                    ClampWhy why) {
    emit message(clamp_message(field, typed, used, why));
  };
  cpu_box_ = new QCheckBox(tr("CPU: %1").arg(QString::fromStdString(cpu.model)), this);
  cpu_box_->setObjectName("device-cpu");
  cpu_box_->setChecked(true);
  cpu_box_->setToolTip(tr("%1, %2; %3")
                           .arg(QString::fromStdString(cpu_hardware_text(cpu)),
                                QString::fromStdString(cpu.simd),
                                QString::fromStdString(cpu.blas)));
  // What the hardware is, read off at a glance: a few fast cores here against a GPU's many
  // slower lanes below (engine/devices' own words, as gpulab-cli devices prints them).
  auto hardware_label = [this](const std::string& text, const QString& name) {
    auto* label = new QLabel(QString::fromStdString(text), this);
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setStyleSheet("color: palette(mid)");
    return label;
  };
  threads_ = new LimitedSpinBox(tr("CPU threads"), report, this);
  threads_->setObjectName("cpu-threads");
  threads_->setRange(1, std::max(1, cpu.logical_cores));
  threads_->setValue(std::max(1, cpu.logical_cores));
  auto thread_suffix = [this](int count) {
    threads_->setSuffix(count == 1 ? tr(" thread") : tr(" threads"));
  };
  thread_suffix(threads_->value());
  connect(threads_, &QSpinBox::valueChanged, this, thread_suffix);
  connect(threads_, &QSpinBox::valueChanged, this, &DevicePicker::selection_changed);
  threads_->setToolTip(tr("CPU threads for the CPU run (this machine has %1)").arg(cpu.logical_cores));
  grid->addWidget(cpu_box_, 0, 0);
  grid->addWidget(threads_, 0, 1);
  grid->addWidget(hardware_label(cpu_hardware_text(cpu), "cpu-hardware"), 1, 0, 1, 2);
  connect(cpu_box_, &QCheckBox::toggled, this, &DevicePicker::selection_changed);
  connect(cpu_box_, &QCheckBox::toggled, threads_, &QSpinBox::setEnabled);

  // Data parallelism on the CPU: R model copies on threads of their own, the batch split among
  // them. More replicas than cores is allowed, to show what oversubscription costs.
  replicas_ = new LimitedSpinBox(tr("CPU replicas"), report, this);
  replicas_->setObjectName("cpu-replicas");
  replicas_->setRange(1, 2 * std::max(1, cpu.logical_cores));
  replicas_->setValue(1);
  replicas_->setPrefix(tr("replicas: "));
  replicas_->setToolTip(
      tr("Data parallelism: copies of the model, each on its own threads (the "
         "CPU threads divided among them) with its share of every batch; their "
         "gradients are summed before each update. 1: plain training."));
  auto* parallel = new QHBoxLayout;
  parallel->addWidget(replicas_, 1);
  parallel->addStretch(1);
  grid->addLayout(parallel, 2, 0, 1, 2);
  connect(cpu_box_, &QCheckBox::toggled, replicas_, &QSpinBox::setEnabled);
  connect(replicas_, &QSpinBox::valueChanged, this, &DevicePicker::selection_changed);

  int row = 3;
  for (const GpuInfo& gpu : devices.gpus) {
    auto* box = new QCheckBox(QString("cuda:%1: %2 (%3 GiB)")
                                  .arg(gpu.index)
                                  .arg(QString::fromStdString(gpu.name))
                                  .arg(gpu.memory_bytes / double(1 << 30), 0, 'f', 1),
                              this);
    box->setObjectName(QString("device-cuda-%1").arg(gpu.index));
    box->setProperty("gpu", gpu.index);
    box->setProperty("device", gpu_device(gpu.index));
    box->setToolTip(tr("%1; compute capability %2.%3, driver %4, CUDA runtime %5")
                        .arg(QString::fromStdString(gpu_hardware_text(gpu)))
                        .arg(gpu.compute_major)
                        .arg(gpu.compute_minor)
                        .arg(QString::fromStdString(gpu.driver_version),
                             QString::fromStdString(gpu.runtime_version)));
    grid->addWidget(box, row++, 0, 1, 2);
    grid->addWidget(
        hardware_label(gpu_hardware_text(gpu), QString("gpu-hardware-%1").arg(gpu.index)), row++, 0,
        1, 2);
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
    grid->addWidget(box, row++, 0);
    grid->addWidget(why, row++, 0, 1, 2);
  }

  // Data parallelism on GPUs: replicas on each ticked GPU (cuda:0x2), and the ticked GPUs as
  // one run (cuda:0,1) rather than a race of one run per GPU.
  gpu_replicas_ = new LimitedSpinBox(tr("Replicas per GPU"), report, this);
  gpu_replicas_->setObjectName("gpu-replicas");
  gpu_replicas_->setRange(1, kMaxReplicasPerGpu);
  gpu_replicas_->setPrefix(tr("replicas per GPU: "));
  one_gpu_run_ = new QCheckBox(tr("One run across the ticked GPUs"), this);
  one_gpu_run_->setObjectName("gpu-one-run");
  const QString no_gpu = tr("No GPU: %1.").arg(QString::fromStdString(devices.no_gpu_reason));
  gpu_replicas_->setEnabled(has_gpu());
  gpu_replicas_->setToolTip(
      has_gpu() ? tr("Data parallelism on GPUs: copies of the model on each ticked GPU, each with "
                     "its share of every batch; their gradients are summed on the GPU (and across "
                     "GPUs with NCCL) before each update. 2 on one GPU (cuda:0x2) shows what "
                     "replicas cost without a second card. 1: plain training.")
                : no_gpu + tr(" GPU replicas (cuda:0x2, cuda:0,1) need one; CPU replicas are "
                              "set above."));
  one_gpu_run_->setEnabled(devices.gpus.size() > 1);
  one_gpu_run_->setToolTip(
      devices.gpus.size() > 1
          ? tr("Ticked: the ticked GPUs train one model together, each batch split across them "
               "(cuda:0,1). Not ticked: each ticked GPU trains a run of its own, raced against "
               "the others.")
      : has_gpu() ? tr("This machine has one GPU: replicas per GPU put several on it.")
                  : no_gpu);
  auto* gpu_parallel = new QHBoxLayout;
  gpu_parallel->addWidget(gpu_replicas_, 1);
  gpu_parallel->addWidget(one_gpu_run_, 1);
  grid->addLayout(gpu_parallel, row++, 0, 1, 2);
  connect(gpu_replicas_, &QSpinBox::valueChanged, this, &DevicePicker::selection_changed);
  connect(one_gpu_run_, &QCheckBox::toggled, this, &DevicePicker::selection_changed);

  // How replicas agree, for every run with more than one: CPU replicas and GPU replicas alike
  // (IBM's recipe keeps the parameters on the CPU for GPU replicas too).
  sync_ = new QComboBox(this);
  sync_->setObjectName("sync-mode");
  sync_->addItem(tr("all-reduce"), int(SyncMode::AllReduce));
  sync_->addItem(tr("parameter server"), int(SyncMode::ParameterServer));
  sync_->setToolTip(
      tr("How replicas agree on the update: every replica sums the gradients and takes the same "
         "step (all-reduce), or a server on the CPU holds the parameters, takes the step once and "
         "sends them back (parameter server; GPU replicas copy their gradients to it and the "
         "parameters back every step). For the CPU's replicas and the GPUs' alike."));
  auto* sync_row = new QHBoxLayout;
  auto* sync_label = new QLabel(tr("Replicas agree by"), this);
  sync_label->setBuddy(sync_);
  sync_row->addWidget(sync_label);
  sync_row->addWidget(sync_, 1);
  grid->addLayout(sync_row, row++, 0, 1, 2);
  connect(sync_, &QComboBox::currentIndexChanged, this, &DevicePicker::selection_changed);

  plan_ = new QLabel(this);
  plan_->setObjectName("device-plan");
  plan_->setWordWrap(true);
  plan_->setStyleSheet("color: palette(mid)");
  grid->addWidget(plan_, row, 0, 1, 2);
  connect(this, &DevicePicker::selection_changed, this, [this] {
    sync_->setEnabled(any_replicated());
    plan_->setText(plan());
  });
  sync_->setEnabled(any_replicated());
  plan_->setText(plan());
}

std::vector<int> DevicePicker::ticked_gpus() const {
  std::vector<int> gpus;
  for (QCheckBox* box : gpu_boxes_)
    if (box->isChecked()) gpus.push_back(box->property("gpu").toInt());
  return gpus;
}

std::vector<std::string> DevicePicker::selected() const {
  std::vector<std::string> devices;
  if (cpu_box_->isChecked()) devices.push_back("cpu");
  const std::vector<int> gpus = ticked_gpus();
  const int per_gpu = gpu_replicas();
  auto entry = [&](int gpu) {
    return std::to_string(gpu) + (per_gpu > 1 ? "x" + std::to_string(per_gpu) : "");
  };
  if (one_gpu_run() && gpus.size() > 1) {
    std::string device = "cuda:";
    for (size_t i = 0; i < gpus.size(); ++i) device += (i ? "," : "") + entry(gpus[i]);
    devices.push_back(device);
  } else {
    for (int gpu : gpus) devices.push_back("cuda:" + entry(gpu));
  }
  return devices;
}

BackendOptions DevicePicker::run_options(const std::string& device, BackendOptions base) const {
  const bool cpu = device == "cpu";
  base.device = device;
  base.threads = cpu ? threads() : 0;
  base.replicas = cpu ? replicas() : 1;
  base.sync = replica_count(device) > 1 ? sync() : SyncMode::AllReduce;
  if (cpu) {  // what a GPU run of the same race uses and the CPU has no other way of
    base.precision = Precision::Fp32;
    base.conv = ConvAlgorithm::Im2col;
    base.data_on = DataOn::Auto;
    base.cuda_graph = BackendOptions{}.cuda_graph;
  }
  return base;
}

int DevicePicker::replica_count(const std::string& device) const {
  if (device == "cpu") return replicas();
  try {
    const CudaDevices wanted = parse_cuda_devices(device);
    return wanted.all ? int(devices_.gpus.size()) : int(wanted.replicas.size());
  } catch (const ConfigError&) {
    return 1;
  }
}

bool DevicePicker::any_replicated() const {
  const std::vector<std::string> runs = selected();
  return std::any_of(runs.begin(), runs.end(),
                     [&](const std::string& device) { return replica_count(device) > 1; });
}

bool DevicePicker::choice_for(const std::string& device, GpuChoice* choice) const {
  CudaDevices wanted;
  try {
    wanted = parse_cuda_devices(device);
  } catch (const ConfigError&) {
    return false;
  }
  GpuChoice out;
  if (wanted.all) {
    for (const GpuInfo& gpu : devices_.gpus) out.gpus.push_back(gpu.index);
  } else {
    for (size_t i = 0; i < wanted.replicas.size(); ++i)
      if (i == 0 || wanted.replicas[i] != wanted.replicas[i - 1]) out.gpus.push_back(wanted.replicas[i]);
    out.replicas = int(wanted.replicas.size() / out.gpus.size());
    if (out.replicas * out.gpus.size() != wanted.replicas.size()) return false;
    for (int gpu : out.gpus)
      if (std::count(wanted.replicas.begin(), wanted.replicas.end(), gpu) != out.replicas) return false;
  }
  if (out.gpus.empty()) return false;
  for (int gpu : out.gpus)
    if (std::none_of(devices_.gpus.begin(), devices_.gpus.end(),
                     [&](const GpuInfo& g) { return g.index == gpu; }))
      return false;
  if (choice) *choice = out;
  return true;
}

bool DevicePicker::offers(const std::string& device) const {
  return device == "cpu" || choice_for(device, nullptr);
}

bool DevicePicker::apply(const BackendOptions& backend) {
  if (!select_only(backend.device)) return false;
  set_threads(backend.threads);
  if (backend.device == "cpu") set_replicas(backend.replicas);
  set_sync(backend.sync);
  return true;
}

int DevicePicker::threads() const { return threads_->value(); }

void DevicePicker::set_threads(int threads) {
  if (threads > 0) threads_->set_checked_value(threads);  // 0: every core, as the box starts
}

int DevicePicker::replicas() const { return replicas_->value(); }

void DevicePicker::set_replicas(int replicas) { replicas_->set_checked_value(replicas); }

SyncMode DevicePicker::sync() const { return SyncMode(sync_->currentData().toInt()); }

void DevicePicker::set_sync(SyncMode sync) { sync_->setCurrentIndex(sync_->findData(int(sync))); }

int DevicePicker::gpu_replicas() const { return gpu_replicas_->value(); }

void DevicePicker::set_gpu_replicas(int replicas) { gpu_replicas_->set_checked_value(replicas); }

bool DevicePicker::one_gpu_run() const { return one_gpu_run_->isChecked(); }

void DevicePicker::set_one_gpu_run(bool one_run) { one_gpu_run_->setChecked(one_run); }

bool DevicePicker::select_only(const std::string& device) {
  GpuChoice choice;
  if (device != "cpu" && !choice_for(device, &choice)) return false;
  cpu_box_->setChecked(device == "cpu");
  for (QCheckBox* box : gpu_boxes_)
    box->setChecked(std::count(choice.gpus.begin(), choice.gpus.end(), box->property("gpu").toInt()));
  if (device != "cpu") {
    set_gpu_replicas(choice.replicas);
    if (choice.gpus.size() > 1) set_one_gpu_run(true);
  }
  return true;
}

bool DevicePicker::add(const std::string& device) {
  if (device == "cpu") {
    cpu_box_->setChecked(true);
    return true;
  }
  for (QCheckBox* box : gpu_boxes_)
    if (gpu_device(box->property("gpu").toInt()).toStdString() == device) {
      box->setChecked(true);
      return true;
    }
  return false;
}

QString DevicePicker::plan() const {
  const std::vector<std::string> runs = selected();
  if (runs.empty()) return tr("Tick a device to train on.");
  QStringList names;
  for (const std::string& device : runs) names << describe_run(device, replicas());
  if (runs.size() == 1)
    return tr("▶ Train: one run on %1. Tick more devices to race them.").arg(names[0]);
  return tr("▶ Train: a race of %1 runs: %2.").arg(runs.size()).arg(names.join(" · "));
}

}  // namespace gpulab::ui
