// Setups in and out of the window: the runs the setup column asks for, setup files and demos
// opened into it (a race fills the race line-up), the setup saved as gpulab-cli trains it, and a
// recorded run's setup taken back into it.
#pragma once

#include <QObject>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/session.hpp"
#include "engine/training/experiment.hpp"

class QMenu;
class QWidget;

namespace gpulab::ui {

class Banner;
class DataBanner;
class DevicePicker;
class ExperimentPanel;
class RacePanel;

// The message that the model cannot be built, for `problem`.
QString cannot_build_text(const QString& problem);

class SetupFiles : public QObject {
  Q_OBJECT

 public:
  struct Parts {
    ExperimentPanel* experiment;
    DevicePicker* devices;
    RacePanel* race;
    const DeviceList* device_list;
    DataBanner* data;  // the data folder a run is given
    double telemetry_hz;
    Banner* message;
  };
  SetupFiles(Parts parts, QWidget* window);

  // The run the setup column describes, on `device`; empty, with the reason, when it cannot run.
  std::optional<RunRequest> request_for(const std::string& device, QString* problem) const;
  // The runs ▶ Train starts: one per ticked device; none, with the reason, when one cannot run.
  std::vector<RunRequest> requests(QString* problem) const;
  // Opens a setup file or a shipped demo by name; devices the machine lacks are named on the
  // message bar, and kept as note() while the setup's runs train.
  bool open(const QString& name_or_path, QString* error);
  Experiment current() const;  // the experiment, on the first device the picker would start
  bool save(const QString& path, QString* error) const;
  void use_setup_of(const RunData& run);
  const QString& note() const { return note_; }
  // Whether the last setup opened was a race (a demo's, two or more of its runs on this machine)
  // that the device picker has not been changed from since: ▶ Train then starts that race, as
  // `gpulab --setup NAME --train` does, with the race's own runs and names.
  bool race_chosen() const { return race_chosen_; }
  void clear_note() { note_.clear(); }
  // Open setup…, Demos and Save setup… in the File menu.
  void add_actions(QMenu* file);

 signals:
  void opened();  // a setup or demo was opened into the setup column and the race line-up

 private:
  Parts parts_;
  QWidget* window_;
  QString note_;  // why a setup's runs are missing (no GPU), kept while they train
  bool race_chosen_ = false;
  bool opening_ = false;  // the picker's changes while a setup is opened are the setup's own
};

}  // namespace gpulab::ui
