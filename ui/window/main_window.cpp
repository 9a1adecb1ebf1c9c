// The gpulab window: its parts, the layout, and how its jobs are wired together.
#include "ui/window/main_window.hpp"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "datasets/mnist_files.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/classboard/class_board.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/inside/inside_tab.hpp"
#include "ui/labs/labs_tab.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/setup/wheel_guard.hpp"
#include "ui/widgets/floating_bar.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/data_banner.hpp"
#include "ui/window/hand_in_view.hpp"
#include "ui/window/kept_state.hpp"
#include "ui/window/live_board.hpp"
#include "ui/window/live_tab.hpp"
#include "ui/window/presenter_mode.hpp"
#include "ui/window/report_actions.hpp"
#include "ui/window/run_controls.hpp"
#include "ui/window/run_scheduler.hpp"
#include "ui/window/setup_files.hpp"

namespace gpulab::ui {

MainWindow::MainWindow(WindowOptions options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)), cache_(std::make_shared<DataCache>()) {
  if (options_.runs_dir.empty()) options_.runs_dir = default_runs_dir();
  device_list_ = options_.devices ? *options_.devices : list_devices();
  normal_font_ = font();
  setWindowTitle(tr("gpulab: deep learning on your own hardware, measured"));
  store_ = new RunStore(options_.runs_dir, this);
  scheduler_ = new RunScheduler(store_, cache_, this);

  message_ = new Banner(this);
  message_->setObjectName("message");
  share_ = new Banner(this);
  share_->setObjectName("share-warning");
  data_ = new Banner(this);
  data_->setObjectName("data-message");
  data_banner_ = new DataBanner(options_.data_dir, data_, message_, cache_, this);
  controls_ = new RunControls(this);
  key_numbers_ = new QLabel(this);
  key_numbers_->setObjectName("key-numbers");
  key_numbers_->setTextFormat(Qt::RichText);
  key_numbers_->setWordWrap(true);
  key_numbers_->hide();

  // The tabs: each is a widget of its own, added here (the Live tab first, where runs start).
  tabs_ = new QTabWidget(this);
  live_ = new LiveTab(this);
  add_tab(live_, "live", tr("Live"));
  compare_ = new CompareView(this);
  add_tab(compare_, "compare", tr("Compare"));
  // The Labs tab starts its runs as ▶ Train does, with this window's data folder and sampling.
  labs_ = new LabsTab({store_, device_list_,
                       [this](std::vector<RunRequest> requests) {
                         for (RunRequest& r : requests) {
                           r.data_dir = options_.data_dir;
                           r.telemetry_hz = options_.telemetry_hz;
                         }
                         board_->stay_on_the_tab_shown(true);
                         const TrainOptions first =
                             requests.empty() ? TrainOptions{} : requests.front().train;
                         const int started = controls_->start(std::move(requests));
                         if (started == 0) board_->stay_on_the_tab_shown(false);
                         // The Setup panel shows what the lab's runs test against, not the
                         // window's own settings, which they do not use.
                         if (started > 0)
                           experiment_->show_running_targets(first.target_accuracy,
                                                             first.eval_every);
                         return started;
                       },
                       [this] { return any_running(); },
                       [this] { show_tab("live"); }},
                      this);
  add_tab(labs_, "labs", tr("Labs"));
  // The Inside tab classifies with the test set of the folder the runs use now.
  inside_ =
      new InsideTab({store_, cache_, [this] { return data_banner_->dir(); }, device_list_}, this);
  add_tab(inside_, "inside", tr("Inside"));
  inside_->accept_drops_on(this, [this] { show_tab("inside"); });
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
  // Messages ("Saved…", a failed run) float over the bottom of the tabs' pane, above a reserve
  // as high as they are: the tabs' content gives up that room, and nothing moves or is covered
  // (over the whole column they covered the runs list's last row and Show/Import, and in
  // presenter mode the charts' keys; above the tabs they pushed everything down 40 px).
  auto* tabs_pane = new QWidget(this);
  auto* tabs_pane_layout = new QVBoxLayout(tabs_pane);
  tabs_pane_layout->setContentsMargins(0, 0, 0, 0);
  tabs_pane_layout->setSpacing(0);
  tabs_pane_layout->addWidget(center_scroll, 1);
  auto* message_room = new QWidget(tabs_pane);
  message_room->setObjectName("message-room");
  message_room->setFixedHeight(0);
  tabs_pane_layout->addWidget(message_room);
  center_split_ = new QSplitter(Qt::Vertical, this);
  center_split_->addWidget(tabs_pane);
  runs_lists_ = new QStackedWidget(this);
  runs_lists_->addWidget(runs_panel_);
  center_split_->addWidget(runs_lists_);
  center_split_->setStretchFactor(0, 4);
  center_split_->setStretchFactor(1, 1);
  center_split_->setCollapsible(0, false);
  auto* center = new QWidget(this);
  auto* center_layout = new QVBoxLayout(center);
  center_layout->setContentsMargins(4, 4, 4, 4);
  center_layout->addLayout(controls_->layout());
  center_layout->addWidget(share_);
  center_layout->addWidget(data_);
  auto* hand_in_line = new Banner(this);
  hand_in_line->setObjectName("hand-in-line");
  center_layout->addWidget(hand_in_line);
  hand_in_ = new HandInView(runs_lists_, hand_in_line, this);
  center_layout->addWidget(center_split_, 1);
  controls_->follow_width(center);
  new FloatingBar(message_, tabs_pane, message_room);

  auto* split = new QSplitter(Qt::Horizontal, this);
  setup_column_ = build_setup_column();
  split->addWidget(setup_column_);
  split->addWidget(center);
  split->setCollapsible(1, false);
  split->setStretchFactor(1, 1);
  split->setSizes({430, 1100});
  setCentralWidget(split);

  setup_files_ = new SetupFiles(
      {experiment_, devices_, race_, &device_list_, data_banner_, options_.telemetry_hz, message_},
      this);
  reports_ = new ReportActions({live_, compare_, store_, message_}, this);
  controls_->attach({scheduler_, setup_files_, data_banner_, experiment_, devices_, race_, message_,
                     store_, runs_panel_});
  board_ = new LiveBoard(
      {scheduler_, store_, live_, compare_, runs_panel_, progress(), tabs_, message_, key_numbers_},
      this);
  kept_ = new KeptState(options_.runs_dir,
                        {store_, runs_panel_, experiment_, devices_, compare_, setup_files_}, this);
  connect(kept_, &KeptState::target_changed, board_, [this] { board_->update_key_numbers(true); });
  build_menus();

  connect(scheduler_, &RunScheduler::changed, this, [this] {
    if (!scheduler_->any_running()) experiment_->show_own_targets();
    update_run_lines();
    controls_->update();
  });
  connect(scheduler_, &RunScheduler::paused_changed, controls_, &RunControls::update);
  connect(scheduler_, &RunScheduler::error, this,
          [this](const QString& text) { message_->show_message(Banner::Kind::Error, text); });
  // A run of the user's starting brings their runs back: the charts would not show it otherwise.
  connect(board_, &LiveBoard::plans_arrived, hand_in_, &HandInView::close);
  connect(board_, &LiveBoard::plans_arrived, this, &MainWindow::refresh_run_views);
  connect(board_, &LiveBoard::data_missing, data_banner_, [this] { data_banner_->check(true); });
  connect(store_, &RunStore::runs_changed, this, &MainWindow::refresh_run_views);
  connect(runs_panel_, &RunsPanel::baseline_changed, this, &MainWindow::refresh_run_views);
  connect(hand_in_, &HandInView::changed, this, &MainWindow::refresh_run_views);
  connect(hand_in_, &HandInView::baseline_changed, this, &MainWindow::refresh_run_views);
  // The run clicked in the list shows its model on the Inside tab, where it saved one (a click,
  // not the current row, which moves as the list is rebuilt).
  connect(runs_panel_->tree(), &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    if (item) inside_->show_run(item->data(0, Qt::UserRole).toInt());
  });
  connect(runs_panel_, &RunsPanel::use_setup_requested, this, [this](int id) {
    if (RunEntry* entry = store_->find(id)) setup_files_->use_setup_of(entry->data);
  });
  connect(runs_panel_, &RunsPanel::message, this,
          [this](const QString& text) { message_->show_message(Banner::Kind::Info, text); });
  // Queued: the new baseline refills the comparison's own combo box, which is still emitting.
  connect(
      compare_, &CompareView::baseline_chosen, this,
      [this](int id) { shown_runs_panel()->set_baseline(id); }, Qt::QueuedConnection);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == compare_) compare_->refresh(true);
  });
  connect(experiment_, &ExperimentPanel::changed, controls_, &RunControls::update);
  // Added, not replacing: several fields clamped in a row all stay readable.
  const auto warn = [this](const QString& text) {
    message_->add_message(Banner::Kind::Warning, text);
  };
  connect(experiment_, &ExperimentPanel::message, this, warn);
  connect(devices_, &DevicePicker::message, this, warn);
  connect(message_, &Banner::closed, this, [this] { setup_files_->clear_note(); });
  connect(devices_, &DevicePicker::selection_changed, controls_, &RunControls::update);
  connect(setup_files_, &SetupFiles::opened, controls_, &RunControls::update);
  connect(race_, &RacePanel::entries_changed, controls_, &RunControls::update);

  connect(store_, &RunStore::background_loading, this, [this](int pending, const QString& problem) {
    if (!problem.isEmpty())
      message_->show_message(Banner::Kind::Warning,
                             tr("A run record could not be read and is not listed:\n") + problem);
    // A line of its own, replaced as the loading goes: the warning about records that could not
    // be read, said at start, stays beside it (it was replaced within seconds).
    else if (pending > 0)
      message_->set_line("large-runs", Banner::Kind::Info,
                         tr("Loading %n large run record(s) in the background; each appears "
                            "in the list when read, drawn as means of consecutive steps.",
                            "", pending));
    else
      message_->set_line("large-runs", Banner::Kind::Info, tr("Large run records loaded."));
  });
  const QStringList problems = store_->load_all();
  if (!problems.isEmpty())
    message_->show_message(
        Banner::Kind::Warning,
        tr("%n run record(s) could not be read and are not listed:\n", "", int(problems.size())) +
            problems.mid(0, 5).join("\n"));
  kept_->restore();
  refresh_run_views();
  data_banner_->check(false);
  controls_->update();
  fit_to_screen();
  if (options_.presenter) set_presenter(true);
}

MainWindow::~MainWindow() {
  // The board first, while the views its hand-in leaves are all here.
  delete class_board_.data();
  kept_->save();
  kept_->save_setup();
  // Controllers join their threads as they go; the runs are recorded as cancelled.
  for (const RunScheduler::Active& a : scheduler_->active()) a.controller->stop();
}

QWidget* MainWindow::build_setup_column() {
  experiment_ = new ExperimentPanel(this);
  devices_ = new DevicePicker(device_list_, this);
  race_ = new RacePanel(this);
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

void MainWindow::add_tab(QWidget* tab, const QString& name, const QString& title) {
  tab->setProperty("tab-name", name);
  tabs_->addTab(tab, title);
}

bool MainWindow::show_tab(const QString& name) {
  for (int i = 0; i < tabs_->count(); ++i)
    if (tabs_->widget(i)->property("tab-name").toString() == name) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  return false;
}

ClassBoard* MainWindow::open_class_folder(const std::filesystem::path& folder) {
  if (class_board_) class_board_->deleteLater();
  class_board_ = new ClassBoard(folder, this);
  // A learner's runs in Compare, as the board asks; they leave with the board, whose temporary
  // folder holds an unpacked zip's.
  class_board_->set_runs_opener([this](const ClassBoard::HandInRuns& runs) {
    ClassBoard::RunsOpened opened;
    opened.runs = hand_in_->open(runs.folder, runs.learner, runs.lab, &opened.problems);
    if (opened.runs > 0) {
      show_tab("compare");
      raise();
      activateWindow();
    }
    return opened;
  });
  connect(class_board_, &QObject::destroyed, hand_in_, &HandInView::close);
  class_board_->show();
  return class_board_;
}

ClassBoard* MainWindow::class_board() { return class_board_.data(); }

RunsPanel* MainWindow::shown_runs_panel() {
  return hand_in_->panel() ? hand_in_->panel() : runs_panel_;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  setup_files_->add_actions(file);
  file->addAction(tr("Open &lab…"), this, [this] { labs_->open_lab_dialog(); });
  file->addAction(tr("Open &class folder…"), this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(
        this,
        tr("Open class folder: a class's hand-ins, or the --out folder of gpulab-cli lab grade"));
    if (!folder.isEmpty()) open_class_folder(folder.toStdString());
  });
  file->addAction(tr("Open &weights…"), this, [this] {
    show_tab("inside");
    inside_->open_weights_dialog();
  });
  file->addSeparator();
  file->addAction(tr("&Import runs…"), runs_panel_, &RunsPanel::import_runs);
  reports_->add_actions(file);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Train"), QKeySequence(Qt::CTRL | Qt::Key_Return), controls_,
                 &RunControls::start_training);
  run->addAction(tr("Start &race"), controls_, &RunControls::start_race);
  run->addAction(tr("&Pause / resume"), QKeySequence(Qt::CTRL | Qt::Key_P), this,
                 [this] { controls_->set_paused(!scheduler_->paused()); });
  run->addAction(tr("&Stop"), QKeySequence(Qt::CTRL | Qt::Key_Period), this, &MainWindow::stop_all);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  presenter_action_ = view->addAction(tr("&Presenter mode"), QKeySequence(Qt::Key_F11), this,
                                      [this](bool on) { set_presenter(on); });
  presenter_action_->setCheckable(true);
  view->addAction(tr("&Fit all charts"), live_, &LiveTab::fit_all);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About gpulab"), this, [this] {
    QString gpus = device_list_.gpus.empty()
                       ? tr("no GPU: %1").arg(QString::fromStdString(device_list_.no_gpu_reason))
                       : tr("%n GPU(s)", "", int(device_list_.gpus.size()));
    QMessageBox::about(
        this, tr("About gpulab"),
        tr("<b>gpulab</b>: train a CNN on MNIST on the CPU and GPUs and measure it.<br>"
           "CPU: %1, %2 cores, %3<br>%4<br>Runs are kept in %5")
            .arg(QString::fromStdString(device_list_.cpu.model))
            .arg(device_list_.cpu.logical_cores)
            .arg(QString::fromStdString(device_list_.cpu.blas), gpus,
                 QString::fromStdString(options_.runs_dir.string())));
  });
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

int MainWindow::start_training() { return controls_->start_training(); }
int MainWindow::start_race() { return controls_->start_race(); }
void MainWindow::set_paused(bool paused) { controls_->set_paused(paused); }
void MainWindow::stop_all() { scheduler_->stop_all(); }
bool MainWindow::any_running() const { return scheduler_->any_running(); }

void MainWindow::update_run_lines() {
  message_->set_line(QStringLiteral("race"), Banner::Kind::Info, scheduler_->race_line());
  const QString shared = scheduler_->share_warning(device_list_);
  if (shared.isEmpty())
    share_->dismiss();
  else
    share_->show_message(Banner::Kind::Warning, shared);
}

void MainWindow::refresh_run_views() {
  // A learner's hand-in, while one is open, is what the charts and Compare show; the user's runs
  // and what is kept of them stay as they were.
  RunStore* shown = hand_in_->store() ? hand_in_->store() : store_;
  RunsPanel* panel = shown_runs_panel();
  const std::vector<RunEntry*> checked = shown->checked();
  if (shown != shown_store_) shown_ids_.clear();  // ids are per store
  shown_store_ = shown;
  // A baseline the user unticks leaves the comparison (one chosen unticked from Compare's list
  // joins it, and stays until it is ticked and unticked).
  std::set<int> checked_ids;
  for (RunEntry* entry : checked) checked_ids.insert(entry->id);
  const int chosen_baseline = panel->baseline();
  if (chosen_baseline != 0 && shown_ids_.count(chosen_baseline) &&
      !checked_ids.count(chosen_baseline)) {
    shown_ids_ = checked_ids;
    panel->set_baseline(0);  // refreshes the views again
    return;
  }
  shown_ids_ = checked_ids;
  std::vector<const RunData*> data;
  std::vector<QColor> colors;
  for (RunEntry* entry : checked) {
    data.push_back(&entry->data);
    colors.push_back(entry->color);
  }
  live_->set_runs(data, colors);
  apply_chart_theme();
  // The baseline may be any run; one not ticked joins the comparison, first.
  RunEntry* baseline = shown->find(panel->baseline());
  if (!baseline && !checked.empty()) baseline = checked[size_t(default_baseline(data))];
  std::vector<RunEntry*> compared = checked;
  if (baseline && std::find(compared.begin(), compared.end(), baseline) == compared.end())
    compared.insert(compared.begin(), baseline);
  const int baseline_id = baseline ? baseline->id : 0;
  compare_->set_runs(compared, shown->entries(), baseline_id);
  fill_runs_menu(controls_->runs_button()->menu(), shown);
  board_->update_key_numbers(true);  // the headline lists the runs shown
  if (shown != store_) return;
  kept_->set_baseline(baseline_id);
  kept_->save();
}

void MainWindow::set_presenter(bool on) {
  presenter_ = on;
  presenter_action_->setChecked(on);
  setup_column_->setVisible(!on);
  runs_lists_->setVisible(!on);
  set_presenter_style(this, on, normal_font_);
  live_->set_presenter(on);  // before the theme, which follows whether it names the runs
  apply_chart_theme();
  if (on) fit_headline();
  board_->set_presenter(on);
  if (on) {
    if (!isFullScreen()) {
      state_before_presenter_ = windowState();
      geometry_before_presenter_ = geometry();
    }
    showFullScreen();
  } else if (isFullScreen()) {
    // Back to the window it was, maximized too (showNormal() un-maximized it each time), and
    // where it was when it was not.
    setWindowState(state_before_presenter_);
    if (!(state_before_presenter_ & (Qt::WindowMaximized | Qt::WindowFullScreen)))
      setGeometry(geometry_before_presenter_);
    show();
  }
}

void MainWindow::apply_chart_theme() {
  const PlotTheme theme = window_chart_theme(presenter_, height(), !live_->run_key_shown());
  if (theme.font_scale == chart_theme_.font_scale && theme.presenter == chart_theme_.presenter &&
      theme.run_legend == chart_theme_.run_legend)
    return;
  chart_theme_ = theme;
  live_->set_theme(theme);
  compare_->set_theme(theme);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (!presenter_) return;
  apply_chart_theme();
  fit_headline();
}

void MainWindow::fit_headline() {
  const HeadlineSize size = headline_size(height(), normal_font_);
  board_->fit_headline(size.runs, size.points);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  const size_t running = scheduler_->active().size();
  if (running > 0) {
    const auto answer = QMessageBox::question(
        this, tr("Runs are training"),
        tr("%n run(s) are still training. Stop them and quit? What they recorded so far is kept.",
           "", int(running)),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) {
      event->ignore();
      return;
    }
    stop_all();
  }
  event->accept();
}

// What the window answers for its jobs and parts.
ChartView* MainWindow::chart(ChartKind kind) { return live_->chart(kind); }
const std::vector<ChartView*>& MainWindow::live_charts() const { return live_->charts(); }
ReplicaTimeline* MainWindow::replica_timeline() { return live_->timeline(); }
QString MainWindow::message() const { return message_->text(); }
QString MainWindow::share_warning() const { return share_->text(); }
QString MainWindow::data_message() const { return data_->text(); }
QString MainWindow::key_numbers() const { return board_->key_numbers(); }
QPushButton* MainWindow::train_button() { return controls_->train(); }
QPushButton* MainWindow::pause_button() { return controls_->pause(); }
QPushButton* MainWindow::stop_button() { return controls_->stop(); }
QToolButton* MainWindow::runs_button() { return controls_->runs_button(); }
ProgressList* MainWindow::progress() { return controls_->progress(); }
void MainWindow::show_warning(const QString& text) {
  message_->show_message(Banner::Kind::Warning, text);
}
bool MainWindow::open_setup(const QString& name_or_path, QString* error) {
  return setup_files_->open(name_or_path, error);
}
Experiment MainWindow::current_setup() const { return setup_files_->current(); }
bool MainWindow::save_setup_file(const QString& path, QString* error) const {
  return setup_files_->save(path, error);
}
bool MainWindow::export_all(const QString& dir, QString* error) {
  return reports_->export_all(dir, error);
}

void MainWindow::show_recent(int count) {
  for (RunEntry* entry : store_->entries()) {
    if (count-- <= 0) break;
    store_->set_checked(entry->id, true);
  }
}

}  // namespace gpulab::ui
