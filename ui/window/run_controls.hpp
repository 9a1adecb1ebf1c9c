// The run controls above the plots: ▶ Train (▶ Race N runs with several devices ticked), Pause,
// Stop, "Runs shown" and the training run's learning rate (lr_control), the live runs' progress
// rows beside them (under them in a narrow column), and what starting the setup or the race
// line-up takes (a model that builds, a device, MNIST).
#pragma once

#include <QObject>
#include <vector>

#include "engine/session/session.hpp"

class QBoxLayout;
class QHBoxLayout;
class QLayout;
class QPushButton;
class QToolButton;
class QWidget;

namespace gpulab::ui {

class Banner;
class DataBanner;
class DevicePicker;
class ExperimentPanel;
class LrControl;
class ProgressList;
class RacePanel;
class RunScheduler;
class RunStore;
class RunsPanel;
class SetupFiles;

class RunControls : public QObject {
  Q_OBJECT

 public:
  // The buttons and progress rows, in the window; attach() gives them what they act on, which
  // the window builds after them (the setup column).
  explicit RunControls(QWidget* window);
  QLayout* layout() const;
  // The progress rows go under the buttons while `column` (the widget the layout is in) is too
  // narrow for them beside the buttons.
  void follow_width(QWidget* column);

  struct Parts {
    RunScheduler* scheduler;
    SetupFiles* setup;
    DataBanner* data;
    ExperimentPanel* experiment;
    DevicePicker* devices;
    RacePanel* race;
    Banner* message;
    RunStore* store;
    RunsPanel* runs;
  };
  void attach(Parts parts);

  // Each returns how many runs started; 0 with the reason on the message bar.
  // The setup, once per ticked device; or the race a demo opened (race_chosen).
  int start_training();
  int start_race();      // the race line-up
  // These runs, as a fair race where they share hardware (the Labs tab's Run buttons come here).
  int start(std::vector<RunRequest> requests);
  void set_paused(bool paused);
  void update();  // enabled, labels and tooltips, after any change of runs or setup

  QPushButton* train() const { return train_; }
  QPushButton* pause() const { return pause_; }
  QPushButton* stop() const { return stop_; }
  QToolButton* runs_button() const { return runs_button_; }
  LrControl* learning_rate() const { return lr_; }
  ProgressList* progress() const { return progress_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fit_width();
  bool race_chosen() const;  // the setup opened was a race, which ▶ Train starts

  Parts parts_{};
  QPushButton* train_;
  QPushButton* pause_;
  QPushButton* stop_;
  QToolButton* runs_button_;  // which runs are shown, also in presenter mode
  LrControl* lr_;             // the training run's learning rate, changed while it trains
  ProgressList* progress_;
  QHBoxLayout* buttons_;
  QBoxLayout* row_;  // the buttons, and the progress rows beside or under them
  QWidget* column_ = nullptr;
};

}  // namespace gpulab::ui
