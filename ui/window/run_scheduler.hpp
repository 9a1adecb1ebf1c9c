// Run scheduling: the window's runs, each on its own RunController, started in waves (a fair
// race runs what shares hardware one after another, each measured alone), paused, stopped, and
// what the message bars say about a race's runs to go and about runs sharing hardware.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/session/session.hpp"

namespace gpulab::ui {

class DataCache;
class RunController;
class RunStore;

class RunScheduler : public QObject {
  Q_OBJECT

 public:
  struct Active {
    int id;  // the run's entry in the store
    RunController* controller;
  };

  RunScheduler(RunStore* store, std::shared_ptr<DataCache> cache, QObject* parent = nullptr);

  // Starts the requests, all at once when `at_once`, else those that share hardware in waves.
  // Returns how many runs started now.
  int start(std::vector<RunRequest> requests, bool at_once);
  void set_paused(bool paused);
  void stop_all();  // the runs stop, and a race's later waves do not start
  bool paused() const { return paused_; }
  bool any_running() const { return !active_.empty() || !queued_waves_.empty(); }
  const std::vector<Active>& active() const { return active_; }
  // The race's line on the message bar (empty: none): its runs to go, else its verdict once it has
  // ended; and the warning on runs that share a CPU or a GPU (empty: they do not).
  QString race_line() const;
  QString share_warning(const DeviceList& devices) const;

 signals:
  void run_started(int id, const QString& name);  // before its thread starts
  void wave_started();                            // once per wave that started runs
  // A run ended; it is still in active() (its feed may hold its last steps).
  void run_ending(int id, gpulab::ui::RunController* controller);
  void run_ended(int id);  // no longer in active()
  void changed();          // runs ended or started: the controls and message lines follow
  void paused_changed();
  void error(const QString& text);

 private:
  int start_wave(std::vector<RunRequest> requests);
  int queued_runs() const;
  void on_finished(RunController* controller);

  RunStore* store_;
  std::shared_ptr<DataCache> cache_;
  std::vector<Active> active_;
  std::vector<std::vector<RunRequest>> queued_waves_;  // a fair race's runs still to start
  bool fair_race_ = false;  // runs of a race going one after another, each alone
  // The runs of the last start of two or more (their entries, in the order asked), and its
  // verdict once they have all ended (race_verdict), which the race's line then says.
  std::vector<int> race_ids_;
  bool racing_ = false, race_one_after_another_ = false;
  QString verdict_;
  bool paused_ = false;
};

}  // namespace gpulab::ui
