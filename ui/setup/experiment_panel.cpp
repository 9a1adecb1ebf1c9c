// The experiment panel.
#include "ui/setup/experiment_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStringList>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "datasets/mnist.hpp"
#include "ui/setup/layer_editor.hpp"
#include "ui/setup/limited_spin_box.hpp"

namespace gpulab::ui {
namespace {

const char* const kCustom = "custom";

QString preset_description(const std::string& name) {
  if (name == "mlp") return QObject::tr("mlp: 784-256-10, the smallest");
  if (name == "lenet5") return QObject::tr("lenet5: LeNet-5, the classic small CNN");
  if (name == "pytorch-example") return QObject::tr("pytorch-example: PyTorch's MNIST example");
  if (name == "tf-tutorial") return QObject::tr("tf-tutorial: TensorFlow's MNIST CNN, the largest");
  if (name == "vgg-small") return QObject::tr("vgg-small: 3x3 convolutions, the most arithmetic");
  if (name == "fast-mnist") return QObject::tr("fast-mnist: small CNN, 99% in one epoch");
  return QString::fromStdString(name);
}

// The preset whose layers these are, or kCustom: a model edited back to LeNet-5 is LeNet-5.
QString preset_of(const ModelConfig& model) {
  const auto layers = model_to_json(model)["layers"];
  for (const std::string& name : preset_names())
    if (model_to_json(preset(name))["layers"] == layers) return QString::fromStdString(name);
  return kCustom;
}

}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent) : QTabWidget(parent) {
  // Page 1: the model by name and how to train it; page 2: the model's layers, to edit.
  auto* setup = new QWidget(this);
  auto* model_box = new QGroupBox(tr("Model"), setup);
  model_ = new QComboBox(model_box);
  model_->setObjectName("model");
  for (const std::string& name : preset_names())
    model_->addItem(preset_description(name), QString::fromStdString(name));
  model_->addItem(tr("custom: your own layers"), kCustom);
  model_status_ = new QLabel(model_box);
  model_status_->setObjectName("model-status");
  model_status_->setWordWrap(true);
  auto* edit = new QPushButton(tr("Edit layers…"), model_box);
  connect(edit, &QPushButton::clicked, this, [this] { setCurrentIndex(1); });
  auto* model_layout = new QGridLayout(model_box);
  model_layout->addWidget(model_, 0, 0, 1, 2);
  model_layout->addWidget(model_status_, 1, 0);
  model_layout->addWidget(edit, 1, 1, Qt::AlignTop);
  layers_ = new LayerEditor(this);

  auto* train_box = new QGroupBox(tr("Training"), setup);
  const ClampReport report = [this](const QString& field, const QString& typed, const QString& used,
                                    ClampWhy why) {
    emit message(clamp_message(field, typed, used, why));
  };
  connect(layers_, &LayerEditor::message, this, &ExperimentPanel::message);
  auto* form = new QFormLayout(train_box);
  optimizer_ = new QComboBox(train_box);
  for (const char* name : {"sgd", "momentum", "adam", "adamw"}) optimizer_->addItem(name, name);
  optimizer_->setCurrentIndex(2);
  lr_ = new LimitedDoubleSpinBox(tr("Learning rate"), report, train_box);
  lr_->setObjectName("lr");
  lr_->setDecimals(5);
  lr_->setRange(0.00001, 100.0);
  lr_->setSingleStep(0.0005);
  lr_->setValue(0.001);
  momentum_ = new LimitedDoubleSpinBox(tr("Momentum"), report, train_box);
  momentum_->setRange(0.0, 0.999);
  momentum_->setSingleStep(0.05);
  momentum_->setValue(0.9);
  weight_decay_ = new LimitedDoubleSpinBox(tr("Weight decay"), report, train_box);
  weight_decay_->setObjectName("weight-decay");
  weight_decay_->setDecimals(5);
  weight_decay_->setRange(0.0, 1.0);
  weight_decay_->setSingleStep(0.0001);
  schedule_ = new QComboBox(train_box);
  for (const char* name : {"constant", "step", "onecycle"}) schedule_->addItem(name, name);
  batch_ = new LimitedSpinBox(tr("Batch size"), report, train_box);
  batch_->setObjectName("batch");
  // No larger than MNIST's training set (60,000 images): a bigger batch is refused by training.
  batch_->setRange(1, data::kMnistTrainImages);
  batch_->setValue(64);
  epochs_ = new LimitedSpinBox(tr("Epochs"), report, train_box);
  epochs_->setObjectName("epochs");
  epochs_->setRange(1, 1000);
  epochs_->setValue(1);
  steps_ = new LimitedSpinBox(tr("Step limit"), report, train_box);
  steps_->setObjectName("steps");
  steps_->setRange(0, 10'000'000);
  steps_->setSpecialValueText(tr("no limit"));
  steps_->setToolTip(tr("Stop after this many optimizer steps (no limit: train the whole epochs)"));
  precision_ = new QComboBox(train_box);
  precision_->setObjectName("precision");
  for (const char* name : {"fp32", "tf32", "bf16"}) precision_->addItem(name, name);
  seed_ = new LimitedSpinBox(tr("Seed"), report, train_box);
  seed_->setRange(0, 2'000'000'000);
  seed_->setValue(1);
  seed_->setToolTip(tr("One seed drives initialization, shuffling and dropout: same seed, same run"));
  shuffle_ = new QCheckBox(tr("shuffle each epoch"), train_box);
  shuffle_->setChecked(true);
  target_ = new LimitedDoubleSpinBox(tr("Target accuracy"), report, train_box);
  target_->setObjectName("setup-target");
  target_->setRange(0.0, 100.0);
  target_->setDecimals(1);
  target_->setSuffix(" %");
  target_->setSpecialValueText(tr("none"));
  target_->setToolTip(tr("Report the time to reach this test accuracy"));
  eval_every_ = new LimitedSpinBox(tr("Test every"), report, train_box);
  eval_every_->setRange(0, 1'000'000);
  eval_every_->setSpecialValueText(tr("epoch ends"));
  eval_every_->setToolTip(tr("Also measure test accuracy every N steps"));

  form->addRow(tr("Optimizer"), optimizer_);
  form->addRow(tr("Learning rate"), lr_);
  form->addRow(tr("Momentum"), momentum_);
  form->addRow(tr("Weight decay"), weight_decay_);
  form->addRow(tr("LR schedule"), schedule_);
  form->addRow(tr("Batch size"), batch_);
  form->addRow(tr("Epochs"), epochs_);
  form->addRow(tr("Step limit"), steps_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Seed"), seed_);
  form->addRow(QString(), shuffle_);
  form->addRow(tr("Target accuracy"), target_);
  form->addRow(tr("Test every"), eval_every_);
  // What a setup file (or a run's setup) holds that no field shows: said, kept, or forgotten.
  kept_row_ = new QWidget(train_box);
  kept_row_->setObjectName("setup-kept");
  kept_label_ = new QLabel(kept_row_);
  kept_label_->setWordWrap(true);
  auto* forget = new QPushButton(tr("Forget"), kept_row_);
  forget->setObjectName("setup-kept-forget");
  forget->setToolTip(tr("Train without these settings"));
  auto* kept_layout = new QHBoxLayout(kept_row_);
  kept_layout->setContentsMargins(0, 0, 0, 0);
  kept_layout->addWidget(kept_label_, 1);
  kept_layout->addWidget(forget, 0, Qt::AlignTop);
  form->addRow(kept_row_);
  kept_row_->hide();
  connect(forget, &QPushButton::clicked, this, &ExperimentPanel::forget_kept);

  // How the data reach the model and how a GPU computes: the feeding and kernel lessons.
  auto* path_box = new QGroupBox(tr("Data and kernels"), setup);
  auto* path_form = new QFormLayout(path_box);
  preprocess_ = new QComboBox(path_box);
  preprocess_->setObjectName("preprocess");
  preprocess_->addItem(tr("none"), preprocess_name(Preprocess::None));
  preprocess_->addItem(tr("augmented once"), preprocess_name(Preprocess::Once));
  preprocess_->addItem(tr("augmented per batch"),
                       preprocess_name(Preprocess::PerBatch));
  preprocess_->setToolTip(
      tr("The input pipeline's work on the training images: none; every image rotated and shifted "
         "at random once, before training; or every batch decoded, rotated, shifted and "
         "normalized afresh on one host thread, as a data loader's worker does (its time is the "
         "step's data phase: can the host keep the GPU fed?)"));
  data_on_ = new QComboBox(path_box);
  data_on_->setObjectName("data-on");
  data_on_->addItem(tr("auto"), data_on_name(DataOn::Auto));
  data_on_->addItem(tr("in GPU memory"), data_on_name(DataOn::Device));
  data_on_->addItem(tr("copied from host"), data_on_name(DataOn::Host));
  conv_ = new QComboBox(path_box);
  conv_->setObjectName("conv");
  conv_->addItem(tr("im2col"), conv_name(ConvAlgorithm::Im2col));
  conv_->addItem(tr("implicit GEMM"),
                 conv_name(ConvAlgorithm::Implicit));
  cuda_graph_ = new QCheckBox(tr("CUDA graphs"), path_box);
  cuda_graph_->setObjectName("cuda-graphs");
  cuda_graph_->setChecked(true);
  path_form->addRow(tr("Input pipeline"), preprocess_);
  path_form->addRow(tr("GPU data"), data_on_);
  path_form->addRow(tr("Convolutions"), conv_);
  path_form->addRow(tr("Launches"), cuda_graph_);

  auto* layout = new QVBoxLayout(setup);
  layout->addWidget(model_box);
  layout->addWidget(train_box);
  layout->addWidget(path_box);
  layout->addStretch();
  addTab(setup, tr("Setup"));
  addTab(layers_, tr("Layers"));

  connect(model_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::choose_preset);
  connect(layers_, &LayerEditor::changed, this, [this] {
    const QString problem = layers_->problem();
    model_status_->setText(problem.isEmpty()
                               ? tr("%L1 parameters").arg(qlonglong(layers_->parameter_count()))
                               : problem);
    model_status_->setStyleSheet(problem.isEmpty() ? "" : "color: #b00020; font-weight: bold");
    setTabText(1, problem.isEmpty() ? tr("Layers") : tr("Layers (!)"));
    if (applying_) return;
    // An edited preset is a custom model, until its layers are a preset's again.
    const QSignalBlocker block(model_);
    model_->setCurrentIndex(model_->findData(preset_of(layers_->model())));
    emit changed();
  });
  for (QComboBox* box : {optimizer_, schedule_, precision_, preprocess_, data_on_, conv_})
    connect(box, &QComboBox::currentIndexChanged, this, [this] {
      update_enabled();
      emit changed();
    });
  for (QDoubleSpinBox* box : {lr_, momentum_, weight_decay_, target_})
    connect(box, &QDoubleSpinBox::valueChanged, this, &ExperimentPanel::changed);
  for (QSpinBox* box : {batch_, epochs_, steps_, seed_, eval_every_})
    connect(box, &QSpinBox::valueChanged, this, &ExperimentPanel::changed);
  for (QCheckBox* box : {shuffle_, cuda_graph_})
    connect(box, &QCheckBox::toggled, this, &ExperimentPanel::changed);

  model_->setCurrentIndex(model_->findData("lenet5"));
  choose_preset(model_->currentIndex());
  set_gpu_selected(false);
  update_enabled();
}

void ExperimentPanel::choose_preset(int index) {
  const QString name = model_->itemData(index).toString();
  if (name == kCustom) return;  // keeps the layers as they are, to edit
  applying_ = true;
  layers_->set_model(preset(name.toStdString()));
  applying_ = false;
  emit changed();
}

QString ExperimentPanel::kept_text() const {
  const TrainOptions defaults;
  QStringList parts;
  for (const PlannedLr& c : kept_.lr_changes)
    parts << tr("learning rate %1 from step %2").arg(c.lr).arg(c.step);
  if (kept_.stop_at_accuracy > 0)
    parts << tr("stop at %1 % test accuracy").arg(100.0 * kept_.stop_at_accuracy);
  if (kept_.schedule.gamma != defaults.schedule.gamma)
    parts << tr("step schedule gamma %1").arg(kept_.schedule.gamma);
  if (kept_.schedule.step_size != defaults.schedule.step_size)
    parts << tr("step schedule every %1 steps").arg(kept_.schedule.step_size);
  const BackendOptions backend_defaults;
  if (kept_backend_.bucket_mb != backend_defaults.bucket_mb)
    parts << tr("gradient buckets of %1 MiB").arg(kept_backend_.bucket_mb);
  if (kept_backend_.collective_timeout_s != backend_defaults.collective_timeout_s)
    parts << tr("replicas wait %1 s for each other").arg(kept_backend_.collective_timeout_s);
  return parts.isEmpty() ? QString() : tr("Also from the setup: %1.").arg(parts.join("; "));
}

void ExperimentPanel::forget_kept() {
  const TrainOptions defaults;
  kept_.lr_changes.clear();
  kept_.stop_at_accuracy = defaults.stop_at_accuracy;
  kept_.schedule = defaults.schedule;
  const BackendOptions backend_defaults;
  kept_backend_.bucket_mb = backend_defaults.bucket_mb;
  kept_backend_.collective_timeout_s = backend_defaults.collective_timeout_s;
  show_kept();
  emit changed();
}

void ExperimentPanel::show_kept() {
  const QString text = kept_text();
  kept_label_->setText(text);
  kept_row_->setVisible(!text.isEmpty());
}

void ExperimentPanel::update_enabled() {
  const QString optimizer = optimizer_->currentData().toString();
  momentum_->setEnabled(optimizer == "momentum");
  // Batches augmented per batch on the host cannot come from data kept on the device.
  auto* items = qobject_cast<QStandardItemModel*>(data_on_->model());
  const bool per_batch = preprocess_->currentData().toString() ==
                         preprocess_name(Preprocess::PerBatch);
  QStandardItem* device = items->item(data_on_->findData(data_on_name(DataOn::Device)));
  device->setEnabled(!per_batch);
  device->setToolTip(per_batch ? tr("Batches augmented per batch are made on the host") : QString());
  if (per_batch && data_on_->currentData().toString() == data_on_name(DataOn::Device))
    data_on_->setCurrentIndex(data_on_->findData(data_on_name(DataOn::Host)));
}

void ExperimentPanel::set_gpu_selected(bool gpu) {
  // Greyed, not reset: the choice comes back with a GPU, and a CPU run (alone or in a race with
  // a GPU) trains as the CPU only can (DevicePicker::run_options).
  const QString cpu_only =
      tr("GPU only: tick a GPU to choose. A CPU run trains %1, whatever is chosen here.");
  struct GpuOnly {
    QWidget* field;
    QString on_cpu, on_gpu;  // its tip without and with a GPU ticked
  };
  const GpuOnly fields[] = {
      {precision_, cpu_only.arg(tr("in fp32")),
       tr("fp32: exact; tf32: products on tensor cores with 10-bit mantissas; bf16: operands "
          "converted to bfloat16 (8-bit mantissas, half the bytes), fp32 sums and weights")},
      {data_on_, cpu_only.arg(tr("from host memory")),
       tr("Where a GPU's batches are made: kept in GPU memory and gathered there, or gathered on "
          "the host and copied every step, as a framework's data loader feeds it (the copy is "
          "the step's copy phase)")},
      {conv_, cpu_only.arg(tr("with its own kernels (im2col and Winograd, per layer)")),
       tr("How a GPU computes convolutions: im2col unfolds the input into a matrix for cuBLAS "
          "(the reference, and the lesson); implicit GEMM multiplies tiles where they are loaded, "
          "bias and ReLU in the same kernel")},
      {cuda_graph_, cpu_only.arg(tr("without CUDA graphs")),
       tr("After warm-up, replay each training step's kernels as one CUDA graph: one launch "
          "instead of dozens. Untick to measure what the launches cost.")}};
  for (const GpuOnly& f : fields) {
    f.field->setEnabled(gpu);
    f.field->setToolTip(gpu ? f.on_gpu : f.on_cpu);
  }
}

Experiment ExperimentPanel::experiment() const {
  Experiment e;
  e.model = layers_->model();
  const QString name = model_->currentData().toString();
  e.model.name = name.toStdString();
  TrainOptions& t = e.train;
  t = kept_;  // what no field shows; every field's value goes over it
  t.optimizer.kind = parse_optimizer(optimizer_->currentData().toString().toStdString());
  t.optimizer.lr = float(lr_->value());
  t.optimizer.momentum = float(momentum_->value());
  t.optimizer.weight_decay = float(weight_decay_->value());
  t.schedule.kind = parse_schedule(schedule_->currentData().toString().toStdString());
  t.batch = batch_->value();
  t.epochs = epochs_->value();
  t.max_steps = steps_->value();
  t.seed = uint64_t(seed_->value());
  t.shuffle = shuffle_->isChecked();
  t.target_accuracy = (own_targets_ ? own_targets_->first : target_->value()) / 100.0;
  t.eval_every = own_targets_ ? own_targets_->second : eval_every_->value();
  e.backend = kept_backend_;  // what no field shows (bucket size, timeout); device: the picker's
  e.backend.batch = t.batch;
  e.backend.seed = t.seed;
  e.backend.precision = parse_precision(precision_->currentData().toString().toStdString());
  e.backend.preprocess = parse_preprocess(preprocess_->currentData().toString().toStdString());
  e.backend.data_on = parse_data_on(data_on_->currentData().toString().toStdString());
  e.backend.conv = parse_conv(conv_->currentData().toString().toStdString());
  e.backend.cuda_graph = cuda_graph_->isChecked();
  return e;
}

QString ExperimentPanel::problem() const { return layers_->problem(); }

void ExperimentPanel::show_running_targets(double target_accuracy, int64_t eval_every) {
  if (!own_targets_) own_targets_ = {target_->value(), eval_every_->value()};
  const QSignalBlocker block_target(target_), block_eval(eval_every_);  // not the window's own
  target_->setValue(100.0 * target_accuracy);
  eval_every_->setValue(int(eval_every));
  for (QWidget* box : {static_cast<QWidget*>(target_), static_cast<QWidget*>(eval_every_)}) {
    box->setEnabled(false);
    box->setToolTip(tr("The running lab experiment's own; yours come back when it ends"));
  }
}

void ExperimentPanel::show_own_targets() {
  if (!own_targets_) return;
  const QSignalBlocker block_target(target_), block_eval(eval_every_);
  target_->setValue(own_targets_->first);
  eval_every_->setValue(own_targets_->second);
  own_targets_.reset();
  target_->setEnabled(true);
  eval_every_->setEnabled(true);
  target_->setToolTip(tr("Report the time to reach this test accuracy"));
  eval_every_->setToolTip(tr("Also measure test accuracy every N steps"));
}

void ExperimentPanel::set_experiment(const Experiment& e) {
  applying_ = true;
  {
    const QSignalBlocker block(model_);
    model_->setCurrentIndex(model_->findData(preset_of(e.model)));
  }
  layers_->set_model(e.model);
  const TrainOptions& t = e.train;
  optimizer_->setCurrentIndex(optimizer_->findData(optimizer_name(t.optimizer.kind)));
  lr_->set_checked_value(t.optimizer.lr);
  momentum_->set_checked_value(t.optimizer.momentum);
  weight_decay_->set_checked_value(t.optimizer.weight_decay);
  schedule_->setCurrentIndex(schedule_->findData(schedule_name(t.schedule.kind)));
  batch_->set_checked_value(t.batch);
  epochs_->setValue(std::max(1, t.epochs));  // 0 (a step budget alone) needs no word
  steps_->set_checked_value(t.max_steps);
  seed_->set_checked_value(static_cast<long long>(t.seed));
  shuffle_->setChecked(t.shuffle);
  target_->set_checked_value(100.0 * t.target_accuracy);
  eval_every_->set_checked_value(t.eval_every);
  const BackendOptions& b = e.backend;
  precision_->setCurrentIndex(precision_->findData(precision_name(b.precision)));
  preprocess_->setCurrentIndex(preprocess_->findData(preprocess_name(b.preprocess)));
  data_on_->setCurrentIndex(data_on_->findData(data_on_name(b.data_on)));
  conv_->setCurrentIndex(conv_->findData(conv_name(b.conv)));
  cuda_graph_->setChecked(b.cuda_graph);
  kept_ = t;
  kept_backend_ = b;
  kept_backend_.dist = Distribution::None;  // the window trains in its own process, never mpirun's
  show_kept();
  applying_ = false;
  update_enabled();
  emit changed();
}

bool ExperimentPanel::load_file(const QString& path, QString* error) {
  try {
    set_experiment(load_experiment(path.toStdString()));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

bool ExperimentPanel::save_file(const QString& path, QString* error) const {
  try {
    if (!layers_->problem().isEmpty()) throw std::runtime_error(layers_->problem().toStdString());
    save_experiment(path.toStdString(), experiment());
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

}  // namespace gpulab::ui
