// The gpulab window: set up an experiment, pick devices, train (one run, or a race), watch the
// live plots, compare runs against a baseline and export charts. Training runs on its own
// threads; a ~30 Hz timer drains their feeds into the plots, so neither waits for the other.
// The window composes its parts and its jobs (ui/window/: run scheduling, the live board, setup
// files, the data banner, export and lab report, presenter mode); each tab is a widget of its own.
#pragma once

#include <QFont>
#include <QMainWindow>
#include <QPointer>
#include <QRect>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/devices/devices.hpp"
#include "engine/session/session.hpp"
#include "engine/training/experiment.hpp"
#include "ui/charts/chart_render.hpp"

class QAction;
class QLabel;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QToolButton;

namespace gpulab::ui {

class Banner;
class ChartView;
class ClassBoard;
class CompareView;
class DataBanner;
class DataCache;
class DevicePicker;
class ExperimentPanel;
class HandInView;
class KeptState;
class InsideTab;
class LabsTab;
class LiveBoard;
class LiveTab;
class ProgressList;
class RacePanel;
class ReplicaTimeline;
class ReportActions;
class RunControls;
class RunScheduler;
class RunStore;
class RunsPanel;
class SetupFiles;

struct WindowOptions {
  std::filesystem::path runs_dir;                 // empty: default_runs_dir()
  std::optional<std::filesystem::path> data_dir;  // empty: the usual search
  bool presenter = false;
  std::optional<DeviceList> devices;  // empty: list_devices()
  double telemetry_hz = 10;           // as gpulab-cli
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(WindowOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts the current setup once per ticked device. Returns how many runs started; 0 with the
  // reason on the message bar when it cannot (invalid layers, no device, missing data).
  int start_training();
  int start_race();
  void set_paused(bool paused);
  void stop_all();
  bool any_running() const;  // runs training, or a race's runs still waiting to start
  void set_presenter(bool on);
  // Ticks the `count` most recent runs, so they show in the plots.
  void show_recent(int count);
  // A tab by the name add_tab gave it ("live", "compare", "labs"); false for another name.
  bool show_tab(const QString& name);
  // Opens a setup file or a shipped demo by name ("race"). A setup with a race fills the race
  // line-up with the entries this machine can run; those it cannot are named on the message bar.
  bool open_setup(const QString& name_or_path, QString* error);
  // The setup as "Save setup…" writes it: the experiment, with the device, threads, replicas and
  // sync of the first run the device picker would start.
  Experiment current_setup() const;
  bool save_setup_file(const QString& path, QString* error) const;
  void show_warning(const QString& text);

  // For tests, and for anyone scripting the window.
  ExperimentPanel* experiment() { return experiment_; }
  DevicePicker* device_picker() { return devices_; }
  RunStore* store() { return store_; }
  RunsPanel* runs_panel() { return runs_panel_; }
  CompareView* compare() { return compare_; }
  ChartView* chart(ChartKind kind);
  const std::vector<ChartView*>& live_charts() const;
  ReplicaTimeline* replica_timeline();
  LiveTab* live() const { return live_; }
  QString message() const;        // the message bar's text, empty when hidden
  QString share_warning() const;  // the race warning, empty when runs do not share hardware
  QString data_message() const;
  QPushButton* train_button();
  QPushButton* pause_button();
  QPushButton* stop_button();
  QTabWidget* tabs() { return tabs_; }
  QToolButton* runs_button();
  QString key_numbers() const;  // what the presenter's large figures say
  ProgressList* progress();
  RacePanel* race() { return race_; }
  LabsTab* labs() { return labs_; }
  InsideTab* inside() { return inside_; }
  // File → Open class folder…: the class board over a folder `gpulab-cli lab grade` wrote (one
  // board, shown again for another folder). null until opened.
  // The board closes with Close (deleted then, with the hand-ins it unpacked); a learner's runs it
  // opened in the window leave with it.
  ClassBoard* open_class_folder(const std::filesystem::path& folder);
  ClassBoard* class_board();
  // A learner's hand-in opened from the board (its runs in place of the user's, read-only).
  HandInView* hand_in() { return hand_in_; }
  // The runs list shown: the user's, or a hand-in's.
  RunsPanel* shown_runs_panel();
  // Exports every live chart into `dir` as PNG, SVG, PDF and CSV.
  bool export_all(const QString& dir, QString* error);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  QWidget* build_setup_column();
  void build_menus();
  // Adds a tab: `name` is what show_tab takes ("live"), `title` what the tab bar says.
  void add_tab(QWidget* tab, const QString& name, const QString& title);
  void update_run_lines();  // the race's line and the shared-hardware warning
  void refresh_run_views();
  void apply_chart_theme();
  void fit_headline();  // the presenter's headline sized to the window's height
  void fit_to_screen();

  WindowOptions options_;
  DeviceList device_list_;
  std::shared_ptr<DataCache> cache_;
  RunStore* store_;
  // The window's jobs, each in a file of its own (ui/window/).
  RunScheduler* scheduler_;
  LiveBoard* board_;
  DataBanner* data_banner_;
  SetupFiles* setup_files_;
  ReportActions* reports_;
  KeptState* kept_;  // what the window keeps between launches
  RunControls* controls_;
  // Its parts.
  ExperimentPanel* experiment_;
  DevicePicker* devices_;
  RacePanel* race_;
  Banner* message_;
  Banner* share_;
  Banner* data_;
  QTabWidget* tabs_;
  LiveTab* live_;
  CompareView* compare_;
  LabsTab* labs_;
  QPointer<ClassBoard> class_board_;
  HandInView* hand_in_;
  QStackedWidget* runs_lists_;  // the user's runs list, or a hand-in's
  InsideTab* inside_;
  RunsPanel* runs_panel_;
  QLabel* key_numbers_;  // presenter mode: images/s, ETA and speedup, large
  QWidget* setup_column_;
  QSplitter* center_split_;
  QAction* presenter_action_;
  bool presenter_ = false;
  // What leaving presenter mode restores.
  Qt::WindowStates state_before_presenter_;
  QRect geometry_before_presenter_;
  QFont normal_font_;
  PlotTheme chart_theme_;    // the charts' now
  std::set<int> shown_ids_;  // the runs ticked at the last refresh
  const RunStore* shown_store_ = nullptr;  // whose runs they were
};

}  // namespace gpulab::ui
