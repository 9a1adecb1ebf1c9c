// The Labs tab: the built-in labs and lab files opened, listed with their minutes, hardware and
// the learner's progress; the chosen lab's page; its experiments started through the window's own
// run path, and its results, charts and answers kept in the runs folder between sessions.
#pragma once

#include <QWidget>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/outside_load.hpp"
#include "engine/session/session.hpp"
#include "ui/labs/lab_progress.hpp"

class QLineEdit;
class QStackedWidget;
class QTreeWidget;

class QTimer;

namespace gpulab::ui {

class Banner;
class LabPage;
class RunStore;

// What the tab needs of the window.
struct LabsContext {
  RunStore* store = nullptr;
  DeviceList devices;
  // Starts runs as the window starts every run (the runs list, progress rows, fair-race waves);
  // returns how many started (0: the window said why, e.g. MNIST is missing).
  std::function<int(std::vector<RunRequest>)> start;
  std::function<bool()> busy;  // runs are training or waiting to start
  std::function<void()> show_live;  // a running experiment's link to the Live tab
};

class LabsTab : public QWidget {
  Q_OBJECT

 public:
  explicit LabsTab(LabsContext context, QWidget* parent = nullptr);
  ~LabsTab() override;  // waits for a matrix-multiply benchmark still timing

  // Opens a lab file (again, if it is open): listed and shown when it reads cleanly; otherwise
  // its problems (file:line: problem) are reported and the other labs stay. Returns whether it
  // loaded.
  bool open_lab(const std::filesystem::path& path);
  void open_lab_dialog();
  bool select_lab(const std::string& name);  // by name ("cnn-on-gpu") or source

  // Writes the lab's hand-in folder (engine/labs/lab_hand_in) with its charts as the page draws
  // them, and says on the page where it went; a folder holding something else is refused, said
  // in the tab's message bar. The dialog asks for the folder first. With `zip`, the folder is
  // also packed into LEARNER-LAB.zip beside it (engine/classkit/hand_in_zip).
  bool hand_in(const std::string& lab_name, const std::filesystem::path& dir, bool zip = false);
  void hand_in_dialog(const std::string& lab_name, bool zip);

  // Starts an experiment of the shown lab, or every one this machine can run (empty name).
  int run_experiments(const std::string& lab_name, const std::string& experiment);

  QTreeWidget* list() const { return list_; }
  QLineEdit* learner() const { return learner_; }    // the learner's name, kept in the settings
  // A lab's page is made the first time it is shown or asked for: a page is hundreds of widgets,
  // and a session looks at few of the labs.
  LabPage* page(const std::string& lab_name);  // null when no such lab is loaded
  LabPage* current_page();                     // the chosen lab's, shown in the tab
  QString message() const;  // the tab's message bar: problems of lab files, refusals
  const std::vector<Lab>& labs() const { return labs_; }

 private:
  void add_lab(Lab lab);
  LabPage* page_at(size_t index);  // made, filled and added to the stack when first needed
  void show_chosen();              // the chosen lab's page, once the tab is on screen
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;
  void fit_list();
  bool eventFilter(QObject* watched, QEvent* event) override;
  // Every lab's progress column, and the states, results and charts of the page on screen; a page
  // made but not on screen is marked stale and filled when it is next shown or asked for
  // (page_at): filling every page made so far held the window up to 0.2 s at each run's start.
  void refresh();
  void refresh_lab(size_t index, bool fill_page = false);
  void answer(size_t lab, int question, int choice);
  void run_matmul(size_t lab, const LabExperiment& e);
  void save();
  void report(const QString& text, bool error);

  LabsContext context_;
  std::vector<Lab> labs_;
  std::vector<LabPage*> pages_;  // one per lab, null until made (page_at)
  std::vector<bool> stale_;      // per lab: its page was not filled at the last refresh
  LabProgress progress_;
  // Runs recorded on a GPU elsewhere, shown where this machine cannot run an experiment
  // (engine/labs/reference_runs); read once, when the first page is made (read_references).
  void read_references();
  std::filesystem::path references_dir_;  // empty where $GPULAB_REFERENCE_RUNS names no folder
  bool references_read_ = false;
  ReferenceRuns references_;
  Banner* message_;
  QTreeWidget* list_;
  QLineEdit* learner_;
  QStackedWidget* stack_;
  QString open_dir_, hand_in_dir_;
  // One matrix-multiply benchmark at a time, on a thread of its own, so the window answers.
  std::thread bench_;
  std::string bench_lab_, bench_experiment_;  // what it times; empty when none
  // Other programs' load on the CPU over the last second, taken each second, so that a Run says
  // at once, before it starts, when the machine is busy (busy_machine_notice).
  OutsideLoadMeter load_meter_;
  QTimer* load_timer_ = nullptr;
  nlohmann::json recent_load_;
};

}  // namespace gpulab::ui
