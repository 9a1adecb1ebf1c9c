// The gpulab window: layout, run control and the timer that feeds the plots.
#include "ui/window/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <ctime>
#include <set>

#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"
#include "engine/errors.hpp"
#include "engine/experiment.hpp"
#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/charts/scaling_chart.hpp"
#include "ui/window/data_fetcher.hpp"
#include "ui/setup/demo_setups.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "engine/hardware_share.hpp"
#include "engine/run_names.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/window/status_widgets.hpp"
#include "ui/setup/wheel_guard.hpp"
#include "ui/window/window_state.hpp"

namespace gpulab::ui {
namespace {

constexpr int kTickMs = 33;         // ~30 Hz: smooth to the eye, cheap for the trainer
constexpr int kBarsEveryTicks = 60;  // medians and comparisons every two seconds
constexpr int kProgressEveryTicks = 6;  // progress rows five times a second
// Drawing may take this share of one core at most (1%): on a 2-core machine a training step waits
// for its slowest thread, so every millisecond the window takes from a core is lost to all.
constexpr double kDrawBudget = 0.01;

// The run's line when it ends. Time to target is the same figure Compare and the lab report give:
// time_to_target_s over the run's records, for the one target the window shares.
QString result_text(const RunSummary& s, const RunData& run, double target_accuracy) {
  switch (s.status) {
    case RunStatus::Finished: {
      QString text = QObject::tr("finished in %1, %2 images/s")
                         .arg(duration_text(s.train_seconds))
                         .arg(s.train_seconds > 0 ? s.images / s.train_seconds : 0.0, 0, 'f', 0);
      if (std::isfinite(s.test_accuracy))
        text += QObject::tr(", test accuracy %1 %").arg(100 * s.test_accuracy, 0, 'f', 2);
      if (const double t = time_to_target_s(run, target_accuracy); std::isfinite(t))
        text += QObject::tr(", %1 % after %2 s")
                    .arg(100 * target_accuracy, 0, 'f', 1)
                    .arg(t, 0, 'f', 2);
      if (s.diverged) text += QObject::tr(" (diverged)");
      return text;
    }
    case RunStatus::Cancelled: return QObject::tr("stopped at step %1 (its record is kept)").arg(s.steps);
    case RunStatus::Failed: return QObject::tr("failed: %1").arg(QString::fromStdString(s.message));
    case RunStatus::Running: break;
  }
  return {};
}

}  // namespace

MainWindow::MainWindow(WindowOptions options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)), cache_(std::make_shared<DataCache>()) {
  if (options_.runs_dir.empty()) options_.runs_dir = default_runs_dir();
  if (!options_.data_dir) {
    const QString saved = QSettings().value("data/dir").toString();
    if (!saved.isEmpty()) options_.data_dir = saved.toStdString();
  }
  device_list_ = options_.devices ? *options_.devices : list_devices();
  normal_font_ = font();
  setWindowTitle(tr("gpulab: deep learning on your own hardware, measured"));
  store_ = new RunStore(options_.runs_dir, this);

  message_ = new Banner(this);
  message_->setObjectName("message");
  share_ = new Banner(this);
  share_->setObjectName("share-warning");
  data_ = new Banner(this);
  data_->setObjectName("data-message");

  train_ = new QPushButton(tr("▶ Train"), this);
  train_->setObjectName("train");
  train_->setDefault(true);
  train_->setMinimumWidth(110);
  pause_ = new QPushButton(tr("Pause"), this);
  pause_->setObjectName("pause");
  stop_ = new QPushButton(tr("■ Stop"), this);
  stop_->setObjectName("stop");
  connect(train_, &QPushButton::clicked, this, &MainWindow::start_training);
  connect(pause_, &QPushButton::clicked, this, [this] { set_paused(!paused_); });
  connect(stop_, &QPushButton::clicked, this, &MainWindow::stop_all);
  progress_ = new ProgressList(this);
  runs_button_ = new QToolButton(this);
  runs_button_->setObjectName("runs-shown");
  runs_button_->setText(tr("Runs shown"));
  runs_button_->setToolTip(tr("Choose the runs the plots and Compare show"));
  runs_button_->setPopupMode(QToolButton::InstantPopup);
  runs_button_->setMenu(new QMenu(runs_button_));
  key_numbers_ = new QLabel(this);
  key_numbers_->setObjectName("key-numbers");
  key_numbers_->setTextFormat(Qt::RichText);
  key_numbers_->setWordWrap(true);
  key_numbers_->hide();

  // The buttons keep to the top of their row: a progress row that wraps to two lines when a run
  // starts makes the row taller, and a centred button would move under the user's pointer.
  auto* controls = new QHBoxLayout;
  for (QWidget* button : std::initializer_list<QWidget*>{train_, pause_, stop_, runs_button_})
    controls->addWidget(button, 0, Qt::AlignTop);
  controls->addWidget(progress_, 1);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(build_live_tab(), tr("Live"));
  compare_ = new CompareView(this);
  tabs_->addTab(compare_, tr("Compare"));
  runs_panel_ = new RunsPanel(store_, this);

  // The plots scroll when the window is smaller than they need: charts shrink to their minimum
  // height first, and the replica timeline or presenter mode's large figures never make the
  // window larger than the screen (a 1280x720 or 1024x768 projector). The run controls, the
  // messages (wrapped to the width) and the runs list stay in view.
  auto* content = new QWidget(this);
  auto* content_layout = new QVBoxLayout(content);
  content_layout->setContentsMargins(0, 0, 0, 0);
  content_layout->addWidget(key_numbers_);
  content_layout->addWidget(tabs_, 1);
  auto* center_scroll = new QScrollArea(this);
  center_scroll->setObjectName("center");
  center_scroll->setWidget(content);
  center_scroll->setWidgetResizable(true);
  center_scroll->setFrameShape(QFrame::NoFrame);
  center_split_ = new QSplitter(Qt::Vertical, this);
  center_split_->addWidget(center_scroll);
  center_split_->addWidget(runs_panel_);
  center_split_->setStretchFactor(0, 4);
  center_split_->setStretchFactor(1, 1);
  center_split_->setCollapsible(0, false);
  auto* center = new QWidget(this);
  auto* center_layout = new QVBoxLayout(center);
  center_layout->setContentsMargins(4, 4, 4, 4);
  center_layout->addLayout(controls);
  center_layout->addWidget(message_);
  center_layout->addWidget(share_);
  center_layout->addWidget(data_);
  center_layout->addWidget(center_split_, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  setup_column_ = build_setup_column();
  split->addWidget(setup_column_);
  split->addWidget(center);
  split->setCollapsible(1, false);
  split->setStretchFactor(1, 1);
  split->setSizes({430, 1100});
  setCentralWidget(split);
  build_menus();

  timer_ = new QTimer(this);
  timer_->setInterval(kTickMs);
  connect(timer_, &QTimer::timeout, this, &MainWindow::tick);

  connect(store_, &RunStore::runs_changed, this, &MainWindow::refresh_run_views);
  connect(runs_panel_, &RunsPanel::baseline_changed, this, &MainWindow::refresh_run_views);
  connect(runs_panel_, &RunsPanel::use_setup_requested, this, &MainWindow::use_setup_of);
  connect(runs_panel_, &RunsPanel::message, this,
          [this](const QString& text) { message_->show_message(Banner::Kind::Info, text); });
  // Queued: the new baseline refills the comparison's own combo box, which is still emitting.
  connect(compare_, &CompareView::baseline_chosen, runs_panel_, &RunsPanel::set_baseline,
          Qt::QueuedConnection);
  connect(compare_, &CompareView::export_requested, this,
          [this](ChartView* view, int format) { export_chart_dialog(view, ExportFormat(format)); });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == compare_) compare_->refresh(true);
  });
  connect(experiment_, &ExperimentPanel::changed, this, &MainWindow::update_controls);
  // Added, not replacing: several fields clamped in a row all stay readable.
  const auto warn = [this](const QString& text) {
    message_->add_message(Banner::Kind::Warning, text);
  };
  connect(experiment_, &ExperimentPanel::message, this, warn);
  connect(devices_, &DevicePicker::message, this, warn);
  connect(message_, &Banner::closed, this, [this] { setup_note_.clear(); });
  connect(devices_, &DevicePicker::selection_changed, this, &MainWindow::update_controls);

  connect(store_, &RunStore::background_loading, this, [this](int pending, const QString& problem) {
    if (!problem.isEmpty())
      message_->show_message(Banner::Kind::Warning,
                             tr("A run record could not be read and is not listed:\n") + problem);
    else if (pending > 0)
      message_->show_message(Banner::Kind::Info,
                             tr("Loading %n large run record(s) in the background; each appears "
                                "in the list when read, drawn as means of consecutive steps.",
                                "", pending));
    else
      message_->show_message(Banner::Kind::Info, tr("Large run records loaded."));
  });
  const QStringList problems = store_->load_all();
  if (!problems.isEmpty())
    message_->show_message(Banner::Kind::Warning,
                           tr("%n run record(s) could not be read and are not listed:\n", "", int(problems.size())) +
                               problems.mid(0, 5).join("\n"));
  restore_state();
  refresh_run_views();
  check_data(false);
  update_controls();
  fit_to_screen();
  if (options_.presenter) set_presenter(true);
}

void MainWindow::fit_to_screen() {
  // 1500x950 where there is room; otherwise the screen's free area, so that the window and its
  // title bar are on screen at a first start (a 1280x720 projector, a laptop).
  QSize size(1500, 950);
  if (const QScreen* screen = this->screen()) {
    const QRect free = screen->availableGeometry();
    size = size.boundedTo(free.size() - QSize(16, 48));
    resize(size);
    move(free.center() - QPoint(size.width() / 2, size.height() / 2));
  } else {
    resize(size);
  }
}

void MainWindow::restore_state() {
  const WindowState state = load_window_state(options_.runs_dir);
  // One target for Setup and Compare: either spin box sets the other.
  QDoubleSpinBox* setup_target = experiment_->findChild<QDoubleSpinBox*>("setup-target");
  QDoubleSpinBox* compare_target = compare_->target_box();
  if (setup_target) {
    connect(setup_target, &QDoubleSpinBox::valueChanged, compare_target, &QDoubleSpinBox::setValue);
    connect(compare_target, &QDoubleSpinBox::valueChanged, setup_target, &QDoubleSpinBox::setValue);
  }
  if (auto setup = load_saved_setup(options_.runs_dir)) {
    experiment_->set_experiment(*setup);
    devices_->apply(setup->backend);
  } else if (setup_target)
    setup_target->setValue(100 * state.target_accuracy);
  compare_target->setValue(100 * state.target_accuracy);
  connect(compare_target, &QDoubleSpinBox::valueChanged, this, [this] {
    save_state();
    update_key_numbers(true);
  });
  saved_state_ = std::make_unique<WindowState>(state);
  saved_state_->present = true;
  saved_setup_ = experiment_to_json(current_setup()).dump();
  if (state.present) {
    store_->restore(state.checked, state.colors);
    for (RunEntry* entry : store_->entries())
      if (!state.baseline.empty() && entry->data.dir.string() == state.baseline)
        runs_panel_->set_baseline(entry->id);
  }
  restoring_ = false;
}

void MainWindow::save_state() {
  if (restoring_) return;
  WindowState state;
  state.checked = store_->checked_dirs();
  state.colors = store_->color_slots();
  if (RunEntry* baseline = store_->find(compare_baseline_id_))
    state.baseline = baseline->data.dir.string();
  state.target_accuracy = compare_->target_accuracy();
  state.present = true;
  if (*saved_state_ == state) return;
  if (save_window_state(options_.runs_dir, state)) *saved_state_ = state;
}

MainWindow::~MainWindow() {
  save_state();
  const Experiment setup = current_setup();
  if (experiment_to_json(setup).dump() != saved_setup_) save_setup(options_.runs_dir, setup);
  // Controllers join their threads as they go; the runs are recorded as cancelled.
  for (const Active& a : active_) a.controller->stop();
}

QWidget* MainWindow::build_setup_column() {
  experiment_ = new ExperimentPanel(this);
  devices_ = new DevicePicker(device_list_, this);
  race_ = new RacePanel(this);
  connect(race_, &RacePanel::add_requested, this, [this] {
    QString problem;
    const auto chosen = devices_->selected();
    if (chosen.empty()) problem = tr("Tick a device first.");
    for (const std::string& device : chosen) {
      if (auto request = request_for(device, &problem)) race_->add(*request);
    }
    if (!problem.isEmpty()) message_->show_message(Banner::Kind::Error, problem);
  });
  connect(race_, &RacePanel::start_requested, this, &MainWindow::start_race);

  auto* column = new QWidget(this);
  auto* layout = new QVBoxLayout(column);
  layout->addWidget(experiment_, 1);
  layout->addWidget(devices_);
  layout->addWidget(race_);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName("setup-column");
  scroll->setWidget(column);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(400);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  new WheelGuard(scroll);
  return scroll;
}

QWidget* MainWindow::build_live_tab() {
  auto* tab = new QWidget(this);
  x_axis_ = new QComboBox(tab);
  x_axis_->setObjectName("x-axis");
  for (XAxis axis : {XAxis::Step, XAxis::Time, XAxis::Epoch})
    x_axis_->addItem(x_axis_label(axis), int(axis));
  smoothing_ = new QSlider(Qt::Horizontal, tab);
  smoothing_->setObjectName("smoothing");
  smoothing_->setRange(1, 200);
  smoothing_->setValue(25);
  smoothing_->setMaximumWidth(220);
  smoothing_label_ = new QLabel(tab);  // its length changes, but the stretch after it moves
  auto* fit = new QPushButton(tr("Fit all"), tab);
  fit->setToolTip(tr("Show all the data in every plot and follow new points again"));
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("X axis:"), tab));
  row->addWidget(x_axis_);
  row->addSpacing(16);
  row->addWidget(new QLabel(tr("Smoothing:"), tab));
  row->addWidget(smoothing_);
  row->addWidget(smoothing_label_);
  row->addStretch();
  row->addWidget(fit);

  auto* grid = new QGridLayout;
  grid->setSpacing(4);
  const ChartKind kinds[] = {ChartKind::Loss, ChartKind::Accuracy, ChartKind::Throughput,
                             ChartKind::StepTime, ChartKind::Gpu};
  for (ChartKind kind : kinds) {
    auto* view = new ChartView(kind, tab);
    connect(view, &ChartView::export_requested, this, &MainWindow::export_chart_dialog);
    charts_.push_back(view);
  }
  grid->addWidget(charts_[0], 0, 0);
  grid->addWidget(charts_[1], 0, 1);
  grid->addWidget(charts_[2], 0, 2);
  grid->addWidget(charts_[3], 1, 0);
  grid->addWidget(charts_[4], 1, 1, 1, 2);
  grid->setRowStretch(0, 1);
  grid->setRowStretch(1, 1);
  timeline_ = new ReplicaTimeline(tab);
  connect(timeline_, &ReplicaTimeline::export_requested, this, [this](ExportFormat format) {
    export_dialog("replica-timeline", format, [this, format](const QString& path, QString* error) {
      return timeline_->export_to(path, format, error, kExportWidth, kExportHeight / 2);
    });
  });
  run_key_ = new QLabel(tab);
  run_key_->setObjectName("run-key");
  run_key_->setTextFormat(Qt::RichText);
  run_key_->setWordWrap(true);
  run_key_->hide();
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(row);
  layout->addWidget(run_key_);
  layout->addLayout(grid, 2);
  layout->addWidget(timeline_);  // the height its lanes need when it shows a run

  connect(x_axis_, &QComboBox::currentIndexChanged, this, &MainWindow::apply_chart_options);
  connect(smoothing_, &QSlider::valueChanged, this, &MainWindow::apply_chart_options);
  connect(fit, &QPushButton::clicked, this, [this] {
    for (ChartView* view : charts_) view->fit_view();
  });
  apply_chart_options();
  return tab;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open setup…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a setup"), QString(), tr("gpulab setups (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!open_setup(path, &error))
      message_->show_message(Banner::Kind::Error, error);
    else if (message_->isHidden())
      message_->show_message(Banner::Kind::Info, tr("Loaded %1").arg(path));
  });
  QMenu* demos = file->addMenu(tr("&Demos"));
  for (const QString& name : demo_names())
    demos->addAction(name, this, [this, name] {
      QString error;
      if (!open_setup(name, &error)) message_->show_message(Banner::Kind::Error, error);
    });
  file->addAction(tr("&Save setup…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the setup"), "experiment.json", tr("gpulab setups (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!save_setup_file(path, &error)) message_->show_message(Banner::Kind::Error, error);
    else message_->show_message(Banner::Kind::Info, tr("Saved %1; train it from a terminal with: gpulab-cli train --model %1").arg(path));
  });
  file->addSeparator();
  file->addAction(tr("&Import runs…"), runs_panel_, &RunsPanel::import_runs);
  file->addAction(tr("&Export all charts…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export every chart into a folder"));
    if (dir.isEmpty()) return;
    QString error;
    if (export_all(dir, &error)) message_->show_message(Banner::Kind::Info, tr("Charts saved in %1").arg(dir));
    else message_->show_message(Banner::Kind::Error, error);
  });
  file->addAction(tr("&Lab report…"), this, &MainWindow::lab_report_dialog);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Train"), QKeySequence(Qt::CTRL | Qt::Key_Return), this, &MainWindow::start_training);
  run->addAction(tr("Start &race"), this, &MainWindow::start_race);
  run->addAction(tr("&Pause / resume"), QKeySequence(Qt::CTRL | Qt::Key_P), this, [this] { set_paused(!paused_); });
  run->addAction(tr("&Stop"), QKeySequence(Qt::CTRL | Qt::Key_Period), this, &MainWindow::stop_all);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  presenter_action_ = view->addAction(tr("&Presenter mode"), QKeySequence(Qt::Key_F11), this,
                                      [this](bool on) { set_presenter(on); });
  presenter_action_->setCheckable(true);
  view->addAction(tr("&Fit all charts"), this, [this] {
    for (ChartView* v : charts_) v->fit_view();
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About gpulab"), this, [this] {
    QString gpus = device_list_.gpus.empty()
                       ? tr("no GPU: %1").arg(QString::fromStdString(device_list_.no_gpu_reason))
                       : tr("%n GPU(s)", "", int(device_list_.gpus.size()));
    QMessageBox::about(this, tr("About gpulab"),
                       tr("<b>gpulab</b>: train a CNN on MNIST on the CPU and GPUs and measure it.<br>"
                          "CPU: %1, %2 cores, %3<br>%4<br>Runs are kept in %5")
                           .arg(QString::fromStdString(device_list_.cpu.model))
                           .arg(device_list_.cpu.logical_cores)
                           .arg(QString::fromStdString(device_list_.cpu.blas), gpus,
                                QString::fromStdString(options_.runs_dir.string())));
  });
}

ChartView* MainWindow::chart(ChartKind kind) {
  for (ChartView* view : charts_)
    if (view->kind() == kind) return view;
  return nullptr;
}

QString MainWindow::message() const { return message_->text(); }
QString MainWindow::share_warning() const { return share_->text(); }
QString MainWindow::data_message() const { return data_->text(); }
bool MainWindow::any_running() const { return !active_.empty() || !queued_waves_.empty(); }

std::filesystem::path MainWindow::data_dir() const {
  try {
    return data::default_data_dir(options_.data_dir);
  } catch (const std::exception&) {
    return std::filesystem::path(QDir::homePath().toStdString()) / ".local/share/gpulab/mnist";
  }
}

QString MainWindow::cannot_build_text(const QString& problem) {
  return tr("The model cannot be built: %1").arg(problem);
}

std::optional<RunRequest> MainWindow::request_for(const std::string& device, QString* problem) {
  if (!experiment_->problem().isEmpty()) {
    *problem = cannot_build_text(experiment_->problem());
    return std::nullopt;
  }
  const Experiment e = experiment_->experiment();
  RunRequest r;
  r.model = e.model;
  r.train = e.train;
  r.backend = devices_->run_options(device, e.backend);
  r.data_dir = options_.data_dir;
  r.telemetry_hz = options_.telemetry_hz;
  r.name = auto_run_name(r);
  try {
    validate(r.train);
    plan_model(r.model);
  } catch (const std::exception& error) {
    *problem = QString::fromStdString(error.what());
    return std::nullopt;
  }
  return r;
}

int MainWindow::start_training() {
  if (any_running()) return 0;
  const auto chosen = devices_->selected();
  if (chosen.empty()) {
    message_->show_message(Banner::Kind::Error, tr("Tick a device to train on."));
    return 0;
  }
  std::vector<RunRequest> requests;
  QString problem;
  for (const std::string& device : chosen) {
    auto request = request_for(device, &problem);
    if (!request) {
      message_->show_message(Banner::Kind::Error, problem);
      return 0;
    }
    requests.push_back(*request);
  }
  return start_requests(std::move(requests));
}

int MainWindow::start_race() {
  if (any_running()) return 0;
  if (race_->entries().size() < 2) {
    message_->show_message(Banner::Kind::Info, tr("Add two or more setups to the race first."));
    return 0;
  }
  const int started = start_requests(race_->entries());
  if (started > 0) race_->clear();
  return started;
}

int MainWindow::start_requests(std::vector<RunRequest> requests) {
  if (!data::mnist_present(data_dir())) {
    check_data(true);
    return 0;
  }
  message_->dismiss();
  if (!setup_note_.isEmpty()) message_->show_message(Banner::Kind::Warning, setup_note_);
  progress_->clear_finished();
  // A fair race: runs that share hardware go one after another, so each is measured alone.
  std::vector<std::string> devices;
  for (const RunRequest& r : requests) devices.push_back(r.backend.device);
  const bool at_once = race_->run_at_once();
  const auto waves = race_waves(devices, at_once);
  for (size_t i = 0; at_once && i < requests.size(); ++i)
    for (size_t j = 0; j < requests.size(); ++j)
      if (j != i && share_hardware(devices[i], devices[j]))
        requests[i].concurrent_with.push_back(requests[j].name);
  queued_waves_.clear();
  for (size_t w = 1; w < waves.size(); ++w) {
    queued_waves_.emplace_back();
    for (size_t index : waves[w]) queued_waves_.back().push_back(requests[index]);
  }
  std::vector<RunRequest> first;
  for (size_t index : waves.front()) first.push_back(requests[index]);
  fair_race_ = waves.size() > 1;
  const int started = start_wave(std::move(first));
  if (started == 0) fair_race_ = false;
  update_race_line();
  return started;
}

void MainWindow::update_race_line() {
  QString text;
  if (fair_race_ && queued_runs() > 0)
    text = tr("Fair race: these runs share hardware, so they run one after another and each is "
              "measured alone (%1 more to go). Tick \"Run at once\" under Race to run them side "
              "by side instead.")
               .arg(queued_runs());
  else if (fair_race_ && !active_.empty())
    text = tr("Fair race: its last run is running, measured alone.");
  message_->set_line(QStringLiteral("race"), Banner::Kind::Info, text);
}

int MainWindow::queued_runs() const {
  int count = 0;
  for (const auto& wave : queued_waves_) count += int(wave.size());
  return count;
}

int MainWindow::start_wave(std::vector<RunRequest> requests) {
  int started = 0;
  for (RunRequest& request : requests) {
    try {
      request.out_dir = new_run_dir(store_->runs_dir(), run_label(request));
    } catch (const std::exception& e) {
      message_->show_message(Banner::Kind::Error, QString::fromStdString(e.what()));
      break;
    }
    RunData data;
    data.dir = request.out_dir;
    data.info = {{"format", kRunFormat},
                 {"name", request.name},
                 {"created", iso_time_now()},
                 {"status", "running"},
                 {"model", model_to_json(request.model)},
                 {"config", train_config_to_json(request.train, request.backend)}};
    RunEntry* entry = store_->add_live(std::move(data));
    auto* controller = new RunController(request, cache_, this);
    connect(controller, &RunController::finished, this, [this, controller] { on_finished(controller); });
    active_.push_back({entry->id, controller});
    progress_->add(entry->id, QString::fromStdString(request.name));
    controller->start();
    ++started;
  }
  paused_ = false;
  if (started > 0) {
    tabs_->setCurrentIndex(0);
    timer_->start();
  }
  update_controls();
  update_share_warning();
  return started;
}

void MainWindow::tick() {
  bool any = false, started = false;
  for (const Active& a : active_) {
    FeedBatch batch = a.controller->feed().take();
    if (batch.empty()) continue;
    if (batch.start) {
      store_->set_started(a.id, *batch.start);
      progress_->set_plan(a.id, batch.start->plan);
      started = true;
    }
    if (!batch.steps.empty()) last_step_[a.id] = batch.steps.back();
    any |= !batch.steps.empty() || !batch.evals.empty() || !batch.samples.empty();
    store_->append(a.id, batch);
  }
  if (started) refresh_run_views();  // the plan places points on the epoch axis
  if (!any) return;
  ++ticks_;
  const bool bars = ticks_ % kBarsEveryTicks == 1;  // from the first points on
  for (ChartView* view : charts_) view->refresh(bars);
  if (bars) {
    for (const Active& a : active_) runs_panel_->update_run(a.id);
    update_key_numbers(true);  // its medians cost O(steps): with the bars, not at every tick
  }
  if (ticks_ % kProgressEveryTicks == 0) update_progress();  // the status line and headline
  // Draw as often as the budget allows: a cheap chart at the timer's rate, a heavy one (many
  // points, a big screen) less often, never more than kDrawBudget of a core.
  const auto now = std::chrono::steady_clock::now();
  if (now < next_replot_) return;
  QElapsedTimer cost;
  cost.start();
  for (ChartView* view : charts_) view->replot_if_dirty();
  timeline_->refresh();
  if (tabs_->currentWidget() == compare_) compare_->refresh(bars);
  const auto spent = std::chrono::nanoseconds(cost.nsecsElapsed());
  next_replot_ = now + std::max<std::chrono::nanoseconds>(std::chrono::milliseconds(kTickMs),
                                                          std::chrono::nanoseconds(int64_t(spent.count() / kDrawBudget)));
}

void MainWindow::on_finished(RunController* controller) {
  auto it = std::find_if(active_.begin(), active_.end(),
                         [&](const Active& a) { return a.controller == controller; });
  if (it == active_.end()) return;
  const int id = it->id;
  tick();  // whatever the feed still holds
  if (auto last = last_step_.find(id); last != last_step_.end()) {
    progress_->update(id, last->second, live_of(id), false);
    last_step_.erase(last);
  }
  const RunSummary& summary = controller->summary();
  store_->finish(id, summary.status, summary.message);
  if (RunEntry* entry = store_->find(id))
    progress_->finish(id, result_text(summary, entry->data, compare_->target_accuracy()));
  const QString name = QString::fromStdString(controller->request().name);
  if (summary.diverged)
    message_->show_message(Banner::Kind::Warning,
                           tr("Run %1 %2").arg(name, QString::fromStdString(summary.divergence)));
  if (summary.status == RunStatus::Failed) {
    if (controller->data_missing()) check_data(true);
    else
      message_->show_message(Banner::Kind::Error,
                             tr("Run %1 failed: %2\nIts record is kept and marked failed.")
                                 .arg(name, QString::fromStdString(summary.message)));
  }
  active_.erase(std::find_if(active_.begin(), active_.end(),
                             [&](const Active& a) { return a.controller == controller; }));
  controller->deleteLater();
  for (ChartView* view : charts_) {
    view->refresh(true);
    view->replot_if_dirty();
  }
  timeline_->refresh();
  compare_->refresh(true);
  runs_panel_->update_run(id);
  update_key_numbers(true);
  if (active_.empty() && !queued_waves_.empty()) {
    std::vector<RunRequest> next = std::move(queued_waves_.front());
    queued_waves_.erase(queued_waves_.begin());
    if (start_wave(std::move(next)) > 0) {
      update_race_line();
      return;
    }
    queued_waves_.clear();
  }
  if (active_.empty()) {
    timer_->stop();
    paused_ = false;
    fair_race_ = false;  // the race is over: its line goes
  }
  update_race_line();
  update_controls();
  update_share_warning();
}

void MainWindow::set_paused(bool paused) {
  if (active_.empty()) return;
  paused_ = paused;
  for (const Active& a : active_) {
    a.controller->set_paused(paused);
    store_->set_paused(a.id, paused);
  }
  update_progress();
  update_controls();
}

void MainWindow::stop_all() {
  queued_waves_.clear();  // a race stopped midway does not go on with its next runs
  for (const Active& a : active_) a.controller->stop();
}

void MainWindow::update_controls() {
  const bool running = !active_.empty();
  const QString problem = experiment_->problem();
  const auto chosen = devices_->selected();
  train_->setEnabled(!running && problem.isEmpty() && !chosen.empty());
  train_->setToolTip(!problem.isEmpty() ? problem
                     : chosen.empty()   ? tr("Tick a device to train on")
                     : chosen.size() > 1 ? devices_->plan()
                                         : tr("Train the setup on %1").arg(QString::fromStdString(chosen[0])));
  train_->setText(chosen.size() > 1 ? tr("▶ Race %1 runs").arg(chosen.size()) : tr("▶ Train"));
  // A message that the model cannot be built goes once the model can be.
  if (problem.isEmpty() && message_->text().startsWith(cannot_build_text(QString())))
    message_->dismiss();
  pause_->setEnabled(running);
  pause_->setText(paused_ ? tr("Resume") : tr("Pause"));
  stop_->setEnabled(running);
  bool gpu = false;
  for (const auto& d : chosen) gpu |= d != "cpu";
  experiment_->set_gpu_selected(gpu);
}

void MainWindow::update_share_warning() {
  int cpu_runs = 0, gpu_runs = 0;
  std::map<std::string, int> per_gpu;
  for (const Active& a : active_) {
    const std::string& device = a.controller->request().backend.device;
    if (device == "cpu") {
      ++cpu_runs;
      continue;
    }
    ++gpu_runs;
    // A run on several GPUs shares each of them ("cuda:0,1" and "cuda:1" share cuda:1).
    for (const GpuInfo& gpu : device_list_.gpus)
      if (share_hardware(device, "cuda:" + std::to_string(gpu.index)))
        ++per_gpu["cuda:" + std::to_string(gpu.index)];
  }
  QStringList notes;
  if (cpu_runs > 1)
    notes << tr("%1 runs share the CPU's %2 cores: each slows the others down, so their times are "
                "not what each would get alone.")
                 .arg(cpu_runs)
                 .arg(device_list_.cpu.logical_cores);
  if (cpu_runs > 0 && gpu_runs > 0)
    notes << tr("The GPU runs need CPU time to feed their GPUs, taken from the CPU run beside them.");
  for (const auto& [gpu, count] : per_gpu)
    if (count > 1) notes << tr("%1 runs share %2 and slow each other down.").arg(count).arg(QString::fromStdString(gpu));
  if (notes.isEmpty()) share_->dismiss();
  else share_->show_message(Banner::Kind::Warning, tr("Shared hardware: ") + notes.join(" "));
}

void MainWindow::refresh_run_views() {
  const std::vector<RunEntry*> checked = store_->checked();
  // A baseline the user unticks leaves the comparison (one chosen unticked from Compare's list
  // joins it, and stays until it is ticked and unticked).
  std::set<int> checked_ids;
  for (RunEntry* entry : checked) checked_ids.insert(entry->id);
  const int chosen_baseline = runs_panel_->baseline();
  if (chosen_baseline != 0 && shown_ids_.count(chosen_baseline) &&
      !checked_ids.count(chosen_baseline)) {
    shown_ids_ = checked_ids;
    runs_panel_->set_baseline(0);  // refreshes the views again
    return;
  }
  shown_ids_ = checked_ids;
  std::vector<const RunData*> data;
  std::vector<QColor> colors;
  for (RunEntry* entry : checked) {
    data.push_back(&entry->data);
    colors.push_back(entry->color);
  }
  for (ChartView* view : charts_) view->set_runs(data, colors);
  std::vector<QString> names;
  for (const std::string& name : display_run_names(data))
    names.push_back(QString::fromStdString(name));
  timeline_->set_runs(data, names);
  // Many runs are named once, above the charts, rather than in a legend in each of them.
  QStringList key;
  for (size_t i = 0; i < names.size(); ++i)
    key << QString("%1&nbsp;<span style='color:%2'>■</span>&nbsp;%3")  // numbered as in bars
               .arg(i + 1)
               .arg(colors[i].name(), names[i].toHtmlEscaped().replace(' ', "&nbsp;"));
  run_key_->setText(key.join(" &nbsp; "));
  run_key_->setVisible(checked.size() >= kFoldLegendRuns);
  apply_chart_theme();
  // The baseline may be any run; one not ticked joins the comparison, first.
  RunEntry* baseline = store_->find(runs_panel_->baseline());
  if (!baseline && !checked.empty()) baseline = checked.front();
  std::vector<RunEntry*> compared = checked;
  if (baseline && std::find(compared.begin(), compared.end(), baseline) == compared.end())
    compared.insert(compared.begin(), baseline);
  compare_baseline_id_ = baseline ? baseline->id : 0;
  compare_->set_runs(compared, store_->entries(), compare_baseline_id_);
  update_runs_menu();
  update_key_numbers(true);  // the headline lists the runs shown
  save_state();
}

void MainWindow::apply_chart_options() {
  ChartOptions options;
  options.x = XAxis(x_axis_->currentData().toInt());
  options.smoothing = smoothing_->value();
  smoothing_label_->setText(options.smoothing <= 1
                                ? tr("off (raw values)")
                                : tr("trailing mean of %1 steps").arg(options.smoothing));
  for (ChartView* view : charts_) view->set_options(options);
}

void MainWindow::set_presenter(bool on) {
  presenter_ = on;
  presenter_action_->setChecked(on);
  setup_column_->setVisible(!on);
  runs_panel_->setVisible(!on);
  // Through the style sheet, so that rows made later (a run's status line) are large too: a
  // widget under a style sheet takes its font from it, not from its parent.
  const double points = normal_font_.pointSizeF() > 0 ? normal_font_.pointSizeF() : 10;
  // Disabled controls keep a grey text: black for every state would make them look enabled.
  setStyleSheet(
      on ? QString("QMainWindow, QWidget { background: white; color: black; font-size: %1pt; }"
                   " QWidget:disabled { color: #9a9a9a; }"
                   " QLabel#key-numbers { font-size: %2pt; }")
               .arg(points * 1.5, 0, 'f', 1)
               .arg(points * 2.4, 0, 'f', 1)
         : QString());
  if (!on) {
    // Widgets the style sheet gave a font keep it when the sheet goes (spin boxes' editors, the
    // runs list's header): each is told to take its parent's again (none has one of its own).
    for (QWidget* widget : findChildren<QWidget*>()) widget->setFont(QFont());
  }
  apply_chart_theme();
  key_numbers_->setVisible(on);
  update_key_numbers(true);
  if (on) showFullScreen();
  else if (isFullScreen()) showNormal();
}

void MainWindow::apply_chart_theme() {
  // In presenter mode the charts' text grows with the screen: the window fills it.
  PlotTheme theme = presenter_ ? presenter_theme(height()) : PlotTheme{};
  theme.run_legend = run_key_->isHidden();
  if (theme.font_scale == chart_theme_.font_scale && theme.presenter == chart_theme_.presenter &&
      theme.run_legend == chart_theme_.run_legend)
    return;
  chart_theme_ = theme;
  for (ChartView* view : charts_) view->set_theme(theme);
  // Compare has no key of the runs above its charts: they name them themselves.
  PlotTheme compare_theme = theme;
  compare_theme.run_legend = true;
  compare_->speedup_chart()->set_theme(compare_theme);
  compare_->step_time_chart()->set_theme(compare_theme);
  compare_->scaling_chart()->set_theme(compare_theme);
  timeline_->set_theme(theme);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (presenter_) apply_chart_theme();
}

void MainWindow::update_runs_menu() {
  QMenu* menu = runs_button_->menu();
  menu->clear();
  const std::vector<RunEntry*> entries = store_->entries();
  std::vector<const RunData*> data;
  for (RunEntry* e : entries) data.push_back(&e->data);
  const auto names = display_run_names(data);
  for (size_t i = 0; i < entries.size(); ++i) {
    QPixmap swatch(12, 12);
    swatch.fill(entries[i]->color);
    QAction* action = menu->addAction(QIcon(swatch), QString::fromStdString(names[i]));
    action->setCheckable(true);
    action->setChecked(entries[i]->checked);
    const int id = entries[i]->id;
    connect(action, &QAction::toggled, this, [this, id](bool checked) {
      // After the menu is done with the action: ticking rebuilds the menu.
      QTimer::singleShot(0, this, [this, id, checked] { store_->set_checked(id, checked); });
    });
  }
  if (entries.empty()) menu->addAction(tr("No runs yet"))->setEnabled(false);
  menu->addSeparator();
  add_show_actions(menu, store_);
}

QString MainWindow::key_numbers() const {
  return key_numbers_->isVisible() ? key_numbers_->text() : QString();
}

LiveFigures MainWindow::live_of(int id) const {
  const RunEntry* entry = store_->find(id);
  if (!entry) return {};
  const auto plan = entry->data.info.find("plan");
  const int64_t total = plan != entry->data.info.end() && plan->is_object()
                            ? plan->value("total_steps", int64_t(0))
                            : 0;
  return live_figures(entry->data, total);
}

void MainWindow::update_progress() {
  for (const auto& [id, step] : last_step_) progress_->update(id, step, live_of(id), paused_);
  update_key_numbers(false);
}

void MainWindow::update_key_numbers(bool recompute) {
  if (!presenter_) return;
  // Compare's rows (O(steps)) with the bars; a live run's own figures, the same the status line
  // shows (live_figures), whenever its status line changes.
  if (recompute || key_rows_.size() != compare_->runs().size()) key_rows_ = compare_->rows();
  const std::vector<RunComparison>& rows = key_rows_;
  const std::vector<RunEntry*>& compared = compare_->runs();
  const int baseline = compare_->baseline_index();
  const double baseline_rate = baseline >= 0 && baseline < int(rows.size())
                                   ? rows[size_t(baseline)].images_per_second
                                   : kNoValue;
  // Live runs while training; otherwise every run shown, as Compare has them.
  std::vector<size_t> shown;
  for (size_t i = 0; i < compared.size() && i < rows.size(); ++i)
    if (active_.empty() || compared[i]->live) shown.push_back(i);
  // The room's eye takes in a few lines, not twenty: the latest, saying how many are left out.
  constexpr size_t kMostLines = 4;
  const size_t hidden = shown.size() > kMostLines ? shown.size() - kMostLines : 0;
  QStringList lines;
  for (size_t k = hidden; k < shown.size(); ++k) {
    const size_t i = shown[k];
    RunEntry* entry = compared[i];
    const RunComparison& row = rows[i];
    double rate = row.images_per_second;
    const bool live = entry->live && last_step_.count(entry->id);
    LiveFigures figures;
    if (entry->live) {
      figures = live_of(entry->id);
      rate = figures.images_per_second;
    }
    QString line =
        QString("<span style='color:%1'>■</span> %2: <b>%3</b> images/s")
            .arg(entry->color.name(), QString::fromStdString(row.name).toHtmlEscaped(),
                 std::isfinite(rate) ? QString::number(rate, 'f', 0) : QStringLiteral("–"));
    if (live)
      line += tr(" · ETA <b>%1</b>").arg(paused_ ? tr("paused") : duration_text(figures.eta_s));
    if (int(i) != baseline && std::isfinite(rate / baseline_rate))
      line += tr(" · <b>%1×</b> the baseline").arg(rate / baseline_rate, 0, 'f', 1);
    if (!row.flags.empty()) {
      QStringList flags;
      for (const std::string& flag : row.flags)
        flags << QString::fromStdString(flag_headline(flag));
      line += " <span style='color:#a04000; font-size: small'>⚠ " + flags.join("; ").toHtmlEscaped() +
              "</span>";
    }
    lines << line;
  }
  if (hidden > 0)
    lines.prepend(tr("<i>the latest %1 of %2 runs shown (%3 earlier not listed)</i>")
                      .arg(shown.size() - hidden)
                      .arg(shown.size())
                      .arg(hidden));
  key_numbers_->setText(lines.isEmpty() ? tr("Press ▶ Train: the figures appear here.")
                                        : lines.join("<br>"));
}

void MainWindow::show_recent(int count) {
  for (RunEntry* entry : store_->entries()) {
    if (count-- <= 0) break;
    store_->set_checked(entry->id, true);
  }
}

void MainWindow::show_warning(const QString& text) {
  message_->show_message(Banner::Kind::Warning, text);
}

bool MainWindow::open_setup(const QString& name_or_path, QString* error) {
  try {
    const Setup setup = load_setup(name_or_path);
    experiment_->set_experiment(setup.experiment);
    race_->clear();
    QStringList missing;
    std::vector<RunRequest> entries;
    for (const RaceEntry& entry : setup.race) {
      if (!devices_->offers(entry.device)) {
        missing << QString::fromStdString(entry.device);
        continue;
      }
      QString problem;
      auto request = request_for(entry.device, &problem);
      if (!request) throw ConfigError(problem.toStdString());
      if (entry.device == "cpu")
        request->backend.threads =
            entry.threads > 0 ? entry.threads : std::max(1, device_list_.cpu.logical_cores);
      if (!entry.name.empty()) request->name = entry.name;
      entries.push_back(*request);
    }
    if (setup.race.empty()) {  // a plain setup: its device, threads, replicas and sync
      if (!devices_->apply(setup.experiment.backend))
        missing << QString::fromStdString(setup.experiment.backend.device);
    } else if (entries.size() == 1) {  // what is left is a plain run, on the device pickers
      devices_->select_only(entries[0].backend.device);
      if (entries[0].backend.device == "cpu") devices_->set_threads(entries[0].backend.threads);
    } else {
      for (const RunRequest& r : entries) race_->add(r);
    }
    // Kept for the runs of this setup: starting them must not make the reason disappear.
    setup_note_.clear();
    if (!missing.isEmpty()) {
      setup_note_ =
          tr("This machine has no %1 (%2): %3 runs without it.")
              .arg(missing.join(", "),
                   device_list_.gpus.empty()
                       ? tr("no GPU: %1").arg(QString::fromStdString(device_list_.no_gpu_reason))
                       : tr("not among its GPUs"),
                   QFileInfo(setup.source).fileName());
      show_warning(setup_note_);
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

Experiment MainWindow::current_setup() const {
  Experiment setup = experiment_->experiment();
  // A setup is one run, as gpulab-cli trains it: the first the picker would start.
  const std::vector<std::string> chosen = devices_->selected();
  setup.backend = devices_->run_options(chosen.empty() ? "cpu" : chosen.front(), setup.backend);
  return setup;
}

bool MainWindow::save_setup_file(const QString& path, QString* error) const {
  try {
    if (!experiment_->problem().isEmpty()) throw ConfigError(experiment_->problem().toStdString());
    save_experiment(path.toStdString(), current_setup());
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

bool MainWindow::show_tab(const QString& name) {
  if (name == "live") tabs_->setCurrentIndex(0);
  else if (name == "compare") tabs_->setCurrentWidget(compare_);
  else return false;
  return true;
}

void MainWindow::check_data(bool offer_fetch) {
  const std::filesystem::path dir = data_dir();
  std::string missing;
  if (data::mnist_present(dir, &missing)) {
    data_->dismiss();
    return;
  }
  data_->show_message(Banner::Kind::Warning,
                      tr("MNIST is not in %1 (%2 is missing). gpulab needs its four files to train: "
                         "fetch them (about 12 MB, checked by SHA-256) or choose the folder that has them.")
                          .arg(QString::fromStdString(dir.string()), QString::fromStdString(missing)));
  connect(data_->add_button(tr("Fetch MNIST")), &QPushButton::clicked, this, &MainWindow::fetch_data);
  connect(data_->add_button(tr("Choose folder…")), &QPushButton::clicked, this, &MainWindow::choose_data_folder);
  if (offer_fetch) data_->raise();
}

void MainWindow::fetch_data() {
  if (fetcher_ && fetcher_->busy()) return;
  const std::filesystem::path dir = data_dir();
  delete fetcher_;
  fetcher_ = new DataFetcher(dir, this);
  data_->show_message(Banner::Kind::Info, tr("Fetching MNIST into %1…").arg(QString::fromStdString(dir.string())));
  QProgressBar* bar = data_->progress();
  bar->setRange(0, 0);
  QPushButton* cancel = data_->add_button(tr("Cancel"));
  connect(cancel, &QPushButton::clicked, fetcher_, &DataFetcher::cancel);
  connect(fetcher_, &DataFetcher::progress, this, [bar](qint64 received, qint64 total, const QString& what) {
    bar->setRange(0, total > 0 ? 1000 : 0);
    if (total > 0) bar->setValue(int(1000 * received / total));
    bar->setFormat(what + " %p%");
  });
  connect(fetcher_, &DataFetcher::finished, this, [this, dir](bool ok, const QString& text) {
    cache_->forget(dir);
    if (ok) {
      data_->show_message(Banner::Kind::Info, text + tr(". Ready to train."));
    } else {
      data_->show_message(Banner::Kind::Error, tr("Could not fetch MNIST: %1").arg(text));
      connect(data_->add_button(tr("Try again")), &QPushButton::clicked, this, &MainWindow::fetch_data);
      connect(data_->add_button(tr("Choose folder…")), &QPushButton::clicked, this, &MainWindow::choose_data_folder);
    }
  });
  fetcher_->start();
}

void MainWindow::choose_data_folder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Choose the folder with the MNIST files"));
  if (folder.isEmpty()) return;
  options_.data_dir = folder.toStdString();
  QSettings().setValue("data/dir", folder);
  check_data(true);
  if (data_->isHidden()) message_->show_message(Banner::Kind::Info, tr("Using MNIST from %1").arg(folder));
}

void MainWindow::export_chart_dialog(ChartView* view, ExportFormat format) {
  export_dialog(chart_kind_name(view->kind()), format,
                [view, format](const QString& path, QString* error) {
                  return view->export_to(path, format, error, kExportWidth, kExportHeight);
                });
}

void MainWindow::export_dialog(const QString& name, ExportFormat format,
                               const std::function<bool(const QString&, QString*)>& save) {
  const QString ext = export_format_name(format);
  const QString suggested =
      QDir(export_dir_.isEmpty() ? QDir::homePath() : export_dir_).filePath(name + "." + ext);
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), suggested,
                                                    tr("%1 files (*.%2)").arg(ext.toUpper(), ext));
  if (path.isEmpty()) return;
  export_dir_ = QFileInfo(path).absolutePath();
  QString error;
  if (save(path, &error))
    message_->show_message(Banner::Kind::Info, tr("Saved %1").arg(path));
  else
    message_->show_message(Banner::Kind::Error, error);
}

bool MainWindow::export_all(const QString& dir, QString* error) {
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + tr(": the folder could not be created");
    return false;
  }
  for (ChartView* view : charts_)
    for (ExportFormat format : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv}) {
      const QString path = QDir(dir).filePath(QString(chart_kind_name(view->kind())) + "." + export_format_name(format));
      if (!view->export_to(path, format, error, kExportWidth, kExportHeight)) return false;
    }
  // And the charts the runs may make besides: the scaling chart and the replica timeline.
  std::vector<const RunData*> runs;
  for (RunEntry* entry : store_->checked()) runs.push_back(&entry->data);
  return export_study_charts(dir, runs, error);
}

void MainWindow::lab_report_dialog() {
  const QString parent = QFileDialog::getExistingDirectory(this, tr("Where to put the lab report folder"));
  if (parent.isEmpty()) return;
  const QString dir = QDir(parent).filePath("gpulab-report-" + QDateTime::currentDateTime().toString("yyyy-MM-dd_HHmmss"));
  // What Compare shows: the ticked runs and the baseline, with the shared target.
  const std::vector<RunEntry*>& compared = compare_->runs();
  std::vector<const RunData*> runs;
  std::vector<QColor> colors;
  ChartOptions options;
  options.x = XAxis(x_axis_->currentData().toInt());
  options.smoothing = smoothing_->value();
  options.target_accuracy = compare_->target_accuracy();
  options.baseline = compare_->baseline_index();
  for (RunEntry* entry : compared) {
    runs.push_back(&entry->data);
    colors.push_back(entry->color);
  }
  QString error;
  QStringList written;
  if (write_lab_report(dir, runs, colors, options, &error, &written))
    message_->show_message(Banner::Kind::Info, tr("Lab report with %1 files in %2").arg(written.size()).arg(dir));
  else
    message_->show_message(Banner::Kind::Error, tr("Lab report failed: %1").arg(error));
}

void MainWindow::use_setup_of(int run_id) {
  RunEntry* entry = store_->find(run_id);
  if (!entry) return;
  try {
    Experiment e;
    e.model = model_from_json(entry->data.info.at("model"));
    if (entry->data.info.contains("config")) train_config_from_json(entry->data.info["config"], e.train, e.backend);
    experiment_->set_experiment(e);
    if (!devices_->apply(e.backend))
      message_->show_message(Banner::Kind::Warning,
                             tr("That run used %1, which this machine does not have.").arg(QString::fromStdString(e.backend.device)));
  } catch (const std::exception& error) {
    message_->show_message(Banner::Kind::Error, tr("Cannot reuse that run's setup: %1").arg(error.what()));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!active_.empty()) {
    const auto answer = QMessageBox::question(
        this, tr("Runs are training"),
        tr("%n run(s) are still training. Stop them and quit? What they recorded so far is kept.", "",
           int(active_.size())),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) {
      event->ignore();
      return;
    }
    stop_all();
  }
  event->accept();
}

}  // namespace gpulab::ui
