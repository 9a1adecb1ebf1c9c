// The learning rate of a training run, changed while it trains (as ConvNetJS lets learners do):
// a field beside the run controls showing the run's learning rate now, and Apply (Enter applies
// too), which the run takes from its next step on; a line under them confirms the step.
#pragma once

#include <QWidget>
#include <optional>

class QLabel;
class QLineEdit;
class QPushButton;
class QTimer;

namespace gpulab::ui {

class Banner;
class RunScheduler;
class RunStore;
class RunsPanel;

class LrControl : public QWidget {
  Q_OBJECT

 public:
  explicit LrControl(QWidget* parent = nullptr);

  struct Parts {
    RunScheduler* scheduler;
    RunStore* store;
    RunsPanel* runs;
    Banner* message;  // says why a value typed cannot be used
  };
  void attach(Parts parts);

  // Enabled while a run trains; the run it acts on, its learning rate now, the status line.
  void update();
  // The field's value to the run, from its next step on; false with the reason on the message
  // bar (not a number, not positive, a run that keeps its learning rate).
  bool apply();
  // The run the control acts on: the runs list's current row while it trains, else the latest
  // run started that trains; 0 when none trains.
  int target() const;

  QLineEdit* field() const { return field_; }
  QPushButton* apply_button() const { return apply_; }
  QLabel* status() const { return status_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fit_field();

  Parts parts_{};
  QLineEdit* field_;
  QPushButton* apply_;
  QLabel* status_;
  QTimer* follow_;     // the field follows the run's learning rate (a schedule) while it trains
  int shown_run_ = 0;  // the run whose learning rate the field shows
  // The last value applied, until the run reports the step it took effect at.
  struct Asked {
    int run = 0;
    double lr = 0;
    size_t changes_before = 0;  // the run's lr_changes when it was asked for
  };
  std::optional<Asked> asked_;
};

}  // namespace gpulab::ui
