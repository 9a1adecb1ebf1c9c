// What the window keeps between launches (window_state): read once at start, then written when
// it changes (ticks, colours, baseline, target) and, at close, the setup when it changed, so a
// window that was only looked at leaves the runs folder as it found it.
#pragma once

#include <QObject>
#include <filesystem>
#include <memory>
#include <string>

namespace gpulab::ui {

class CompareView;
class DevicePicker;
class ExperimentPanel;
class RunStore;
class RunsPanel;
class SetupFiles;
struct WindowState;

class KeptState : public QObject {
  Q_OBJECT

 public:
  struct Parts {
    RunStore* store;
    RunsPanel* runs;
    ExperimentPanel* experiment;
    DevicePicker* devices;
    CompareView* compare;
    SetupFiles* setup;
  };
  KeptState(std::filesystem::path runs_dir, Parts parts, QObject* parent = nullptr);
  ~KeptState() override;

  // Reads the state and the setup into the window, and ties Setup's and Compare's targets.
  void restore();
  void set_baseline(int run_id) { baseline_id_ = run_id; }  // the run Compare compares with
  void save();        // the state, when it changed since it was read or last written
  void save_setup();  // the setup, when it changed

 signals:
  void target_changed();

 private:
  std::filesystem::path runs_dir_;
  Parts parts_;
  bool restoring_ = true;  // no state is saved until it has been read
  std::unique_ptr<WindowState> saved_state_;
  std::string saved_setup_;
  int baseline_id_ = 0;
};

}  // namespace gpulab::ui
