// Every run the window knows: those recorded in the runs folder (loaded at start, so nothing is
// lost between launches, and watched, so runs another program records there appear), imported
// folders (remembered), and live runs that grow as their feeds are drained. Entries never move in
// memory, so charts can point at their records.
#pragma once

#include <QColor>
#include <QObject>
#include <QStringList>
#include <atomic>
#include <set>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/records/run_record.hpp"
#include "ui/runs/run_feed.hpp"

class QFileSystemWatcher;
class QTimer;

namespace gpulab::ui {

struct RunEntry {
  int id = 0;
  RunData data;
  bool live = false;     // a run of this window still training
  bool checked = false;  // shown in the plots
  int color_slot = 0;    // into run_color's palette; kept in the window state
  QColor color;          // run_color(color_slot)
  bool paused = false;   // a live run held by Pause
};

// A record whose CSV files are larger than this is read on a thread of its own, so the window
// answers while it loads, and drawn from a thinned copy of at most kMaxDrawnSteps steps.
inline constexpr std::uintmax_t kBackgroundLoadBytes = std::uintmax_t(16) << 20;
inline constexpr size_t kMaxDrawnSteps = 20000;

class RunStore : public QObject {
  Q_OBJECT

 public:
  explicit RunStore(std::filesystem::path runs_dir, QObject* parent = nullptr);
  ~RunStore() override;

  const std::filesystem::path& runs_dir() const { return runs_dir_; }
  // Makes this a store of runs that are not the user's (a learner's hand-in opened from the class
  // board), `owner` naming them ("Ada's hand-in"); called before load_all. They are listed, ticked
  // and compared as any run but never written to: rename, remove and import refuse, saying so;
  // the folder is neither made nor watched, and no import is remembered.
  void set_read_only(const QString& owner) { owner_ = owner; }
  bool read_only() const { return !owner_.isEmpty(); }
  const QString& owner() const { return owner_; }
  // The runs folder and every remembered import; problems (unreadable records) are returned.
  // Large records are loaded in the background afterwards (background_loading tells).
  QStringList load_all();
  int loading_in_background() const { return pending_; }
  // A run folder, or a folder of run folders. Returns how many runs were added.
  int import_folder(const std::filesystem::path& folder, QStringList* problems);

  RunEntry* add_live(RunData data);
  // A live run's first news: its folder and plan.
  void set_started(int id, const RunStart& start);
  void append(int id, FeedBatch& batch);  // moves the records in
  // A run that ended: run.json is read again for its final status and summary.
  void finish(int id, RunStatus status, const std::string& message);

  bool rename(int id, const QString& name, QString* error);
  // Deletes the run's folder (the caller asks first). Returns false with a message.
  bool remove(int id, QString* error);
  void set_checked(int id, bool checked);
  // Ticks the `count` newest runs and unticks the rest (0: unticks every run), in one change.
  void show_only_latest(int count);
  // What survives a restart (window_state.hpp): ticks and colours, by run folder. Applied to the
  // runs loaded so far and to runs imported later.
  void restore(const std::vector<std::string>& checked, const std::map<std::string, int>& colors);
  std::vector<std::string> checked_dirs();
  std::map<std::string, int> color_slots();
  void set_paused(int id, bool paused);
  // Looks at the runs folder again: runs another program (gpulab-cli) started there are added,
  // those of them still running are read again as they change, and runs whose folder is gone
  // (deleted outside the window) are dropped. The folder is watched, so
  // this runs by itself a moment after the folder changes.
  void rescan();

  RunEntry* find(int id);
  std::vector<RunEntry*> entries();  // newest first
  // Ticked runs in the order they were made: the first is the default baseline, as the first
  // run of a lab is usually the reference.
  std::vector<RunEntry*> checked();

 signals:
  void runs_changed();           // added, removed, renamed, ticked
  void run_updated(int id);      // status or summary changed
  // Large records still loading in the background; `problem` when the one just read failed.
  void background_loading(int pending, const QString& problem);

 private:
  RunEntry* add(RunData data);
  // Every run's display_name, among all the runs here (engine/records/run_names' name_runs).
  void name_all();
  void load_in_background(std::vector<std::filesystem::path> folders);
  void remember_imports();
  void watch_runs_dir();
  RunEntry* find_dir(const std::filesystem::path& dir);
  // The palette slot used by fewest runs (only the ticked ones when `among_checked`), lowest first.
  int free_color_slot(const RunEntry* except, bool among_checked) const;
  void set_color_slot(RunEntry& entry, int slot);

  // Why a read-only store refuses a change, in one line naming the owner.
  QString read_only_refusal() const;

  std::filesystem::path runs_dir_;
  QString owner_;  // empty: the user's own runs
  std::vector<std::unique_ptr<RunEntry>> entries_;
  std::vector<std::filesystem::path> imports_;
  int next_id_ = 1;
  std::map<std::string, int> saved_colors_;
  std::vector<std::string> saved_checked_;  // ticks to give runs that arrive later
  std::thread loader_;
  std::atomic<bool> stop_loading_{false};
  int pending_ = 0;
  QFileSystemWatcher* watcher_ = nullptr;
  QTimer* rescan_timer_ = nullptr;      // a burst of changes is looked at once
  std::set<std::string> watched_runs_;  // folders of other programs' runs still running
  std::set<std::string> loading_dirs_;  // large records the background load has not added yet
};

}  // namespace gpulab::ui
