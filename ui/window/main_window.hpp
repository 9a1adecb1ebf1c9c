// The gpulab window: set up an experiment, pick devices, train (one run, or a race), watch the
// live plots, compare runs against a baseline and export charts. Training runs on its own
// threads; a ~30 Hz timer drains their feeds into the plots, so neither waits for the other.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <QMainWindow>

#include "engine/devices.hpp"
#include "engine/experiment.hpp"
#include "engine/session.hpp"
#include "ui/charts/chart_render.hpp"

class QAction;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSplitter;
class QTabWidget;
class QTimer;
class QToolButton;

namespace gpulab::ui {

class Banner;
class ChartView;
class CompareView;
class DataCache;
class DataFetcher;
class DevicePicker;
class ExperimentPanel;
class ProgressList;
class RacePanel;
class ReplicaTimeline;
class RunController;
class RunStore;
class RunsPanel;
struct WindowState;

struct WindowOptions {
  std::filesystem::path runs_dir;                 // empty: default_runs_dir()
  std::optional<std::filesystem::path> data_dir;  // empty: the usual search
  bool presenter = false;
  std::optional<DeviceList> devices;  // empty: list_devices()
  double telemetry_hz = 10;  // as gpulab-cli
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
  // "live" or "compare"; returns false for another name.
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
  const std::vector<ChartView*>& live_charts() const { return charts_; }
  ReplicaTimeline* replica_timeline() { return timeline_; }
  QString message() const;       // the message bar's text, empty when hidden
  QString share_warning() const;  // the race warning, empty when runs do not share hardware
  QString data_message() const;
  QPushButton* train_button() { return train_; }
  QPushButton* pause_button() { return pause_; }
  QPushButton* stop_button() { return stop_; }
  QTabWidget* tabs() { return tabs_; }
  QToolButton* runs_button() { return runs_button_; }
  QString key_numbers() const;  // what the presenter's large figures say
  ProgressList* progress() { return progress_; }
  RacePanel* race() { return race_; }
  // Exports every live chart into `dir` as PNG, SVG, PDF and CSV.
  bool export_all(const QString& dir, QString* error);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Active {
    int id;
    RunController* controller;
  };
  void build_menus();
  QWidget* build_setup_column();
  QWidget* build_live_tab();
  std::optional<RunRequest> request_for(const std::string& device, QString* problem);
  int start_requests(std::vector<RunRequest> requests);
  int start_wave(std::vector<RunRequest> requests);
  int queued_runs() const;
  void tick();
  void on_finished(RunController* controller);
  void update_controls();
  void update_share_warning();
  void refresh_run_views();
  void apply_chart_options();
  void check_data(bool offer_fetch);
  void fetch_data();
  void choose_data_folder();
  void export_chart_dialog(ChartView* view, ExportFormat format);
  // Asks where to save a chart (named `name` by default) and saves it there with `save`.
  void export_dialog(const QString& name, ExportFormat format,
                     const std::function<bool(const QString&, QString*)>& save);
  void lab_report_dialog();
  void use_setup_of(int run_id);
  std::filesystem::path data_dir() const;
  void fit_to_screen();
  void restore_state();
  void save_state();
  void update_runs_menu();
  // The presenter's headline; `recompute`: Compare's rows too (O(steps)), not only live figures.
  void update_key_numbers(bool recompute);
  void update_progress();             // the live runs' status lines, then the headline
  LiveFigures live_of(int id) const;  // one source for both
  void apply_chart_theme();
  static QString cannot_build_text(const QString& problem);

  WindowOptions options_;
  DeviceList device_list_;
  std::shared_ptr<DataCache> cache_;
  RunStore* store_;
  ExperimentPanel* experiment_;
  DevicePicker* devices_;
  RacePanel* race_;
  ProgressList* progress_;
  QPushButton* train_;
  QPushButton* pause_;
  QPushButton* stop_;
  Banner* message_;
  Banner* share_;
  Banner* data_;
  QTabWidget* tabs_;
  std::vector<ChartView*> charts_;
  ReplicaTimeline* timeline_;  // a ticked data-parallel run's replicas
  CompareView* compare_;
  RunsPanel* runs_panel_;
  QComboBox* x_axis_;
  QSlider* smoothing_;
  QLabel* smoothing_label_;
  QLabel* run_key_;  // the shown runs' colours and names, once for all charts, when many
  QWidget* setup_column_;
  QSplitter* center_split_;
  QAction* presenter_action_;
  QTimer* timer_;
  DataFetcher* fetcher_ = nullptr;
  std::vector<Active> active_;
  std::vector<std::vector<RunRequest>> queued_waves_;  // a fair race's runs still to start
  std::map<int, StepMetrics> last_step_;  // per live run, for its progress row
  std::vector<RunComparison> key_rows_;   // Compare's rows as the headline last read them
  QString setup_note_;      // why a setup's runs are missing (no GPU), kept while they train
  bool fair_race_ = false;  // runs of a race going one after another, each alone
  void update_race_line();  // the message bar's line on the race: runs to go, or none
  bool paused_ = false;
  int ticks_ = 0;
  std::chrono::steady_clock::time_point next_replot_{};
  bool presenter_ = false;
  PlotTheme chart_theme_;  // the charts' now
  bool restoring_ = true;  // no state is saved until it has been read
  // What the state file and the setup file hold: they are written only when that changes, so a
  // window that was only looked at leaves the runs folder as it found it.
  std::unique_ptr<WindowState> saved_state_;
  std::string saved_setup_;
  int compare_baseline_id_ = 0;
  std::set<int> shown_ids_;   // the runs ticked at the last refresh
  QToolButton* runs_button_;  // which runs are shown, also in presenter mode
  QLabel* key_numbers_;       // presenter mode: images/s, ETA and speedup, large
  QFont normal_font_;
  QString export_dir_;
};

}  // namespace gpulab::ui
