// The live-run board: a ~30 Hz timer drains the running runs' feeds into the run store, the
// charts, the progress rows and presenter mode's key numbers (images/s, ETA, speedup, large),
// and draws no more often than a budget of 1% of a core allows.
#pragma once

#include <QObject>
#include <QString>
#include <chrono>
#include <map>
#include <vector>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/training/trainer.hpp"

class QLabel;
class QTabWidget;
class QTimer;

namespace gpulab::ui {

class Banner;
class CompareView;
class LiveTab;
class ProgressList;
class RunController;
class RunScheduler;
class RunStore;
class RunsPanel;

class LiveBoard : public QObject {
  Q_OBJECT

 public:
  // What the board reads and writes; none is owned by it.
  struct Parts {
    RunScheduler* scheduler;
    RunStore* store;
    LiveTab* live;
    CompareView* compare;
    RunsPanel* runs;
    ProgressList* progress;
    QTabWidget* tabs;
    Banner* message;
    QLabel* key_numbers;  // shown in presenter mode only
  };
  LiveBoard(Parts parts, QObject* parent = nullptr);

  void tick();  // what the timer does: drain, refresh, draw within the budget
  // The status lines of the live runs, then the headline.
  void update_progress();
  // The presenter's headline; `recompute`: Compare's rows too (O(steps)), not only live figures.
  void update_key_numbers(bool recompute);
  void set_presenter(bool on);
  // The headline's text size and the most runs it lists (presenter_mode.hpp's headline_size).
  void fit_headline(int runs, double points);
  QString key_numbers() const;  // what the headline says, empty when hidden
  // Runs started from here on (until every run has ended) leave the tab shown as it is: a lab's
  // ▶ Run keeps the learner in the lab, whose card offers the Live tab. Otherwise each wave of
  // runs brings the Live tab forward.
  void stay_on_the_tab_shown(bool stay) { follow_runs_ = !stay; }
  bool eventFilter(QObject* watched, QEvent* event) override;

 signals:
  void data_missing();   // a run failed for want of MNIST
  void plans_arrived();  // runs started: their plans place points on the epoch axis

 private:
  void run_ending(int id, RunController* controller);
  void run_ended(int id);
  LiveFigures live_of(int id) const;  // one source for the status line and the headline

  Parts parts_;
  QTimer* timer_;
  int ticks_ = 0;
  std::chrono::steady_clock::time_point next_replot_{};
  std::map<int, StepMetrics> last_step_;  // per live run, for its progress row
  std::vector<RunComparison> key_rows_;   // Compare's rows as the headline last read them
  bool presenter_ = false;
  bool follow_runs_ = true;
  int headline_runs_ = 4;        // the most runs the headline lists: the lines it keeps room for
  double headline_points_ = 24;  // its text size where no line wraps
  double fitted_points_ = 0;     // the size its room was last fitted for
};

}  // namespace gpulab::ui
