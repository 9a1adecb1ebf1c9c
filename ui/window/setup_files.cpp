// Setups in and out of the window: run requests, setup files, demos and a run's own setup.
#include "ui/window/setup_files.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QScopedValueRollback>
#include <algorithm>

#include "engine/base/errors.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/run_record.hpp"
#include "ui/setup/demo_setups.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/data_banner.hpp"

namespace gpulab::ui {

QString cannot_build_text(const QString& problem) {
  return QObject::tr("The model cannot be built: %1").arg(problem);
}

SetupFiles::SetupFiles(Parts parts, QWidget* window)
    : QObject(window), parts_(parts), window_(window) {
  // The race line-up takes the setup on each ticked device.
  connect(parts_.race, &RacePanel::add_requested, this, [this] {
    QString problem;
    const auto chosen = parts_.devices->selected();
    if (chosen.empty()) problem = tr("Tick a device first.");
    for (const std::string& device : chosen) {
      if (auto request = request_for(device, &problem)) parts_.race->add(*request);
    }
    if (!problem.isEmpty()) parts_.message->show_message(Banner::Kind::Error, problem);
  });
  // A device ticked or a thread count changed after a race was opened: ▶ Train trains that
  // choice, and the race waits in its panel for Start race.
  connect(parts_.devices, &DevicePicker::selection_changed, this, [this] {
    if (!opening_) race_chosen_ = false;
  });
}

std::optional<RunRequest> SetupFiles::request_for(const std::string& device,
                                                  QString* problem) const {
  if (!parts_.experiment->problem().isEmpty()) {
    *problem = cannot_build_text(parts_.experiment->problem());
    return std::nullopt;
  }
  const Experiment e = parts_.experiment->experiment();
  RunRequest r;
  r.model = e.model;
  r.train = e.train;
  r.backend = parts_.devices->run_options(device, e.backend);
  r.data_dir = parts_.data->chosen_dir();
  r.telemetry_hz = parts_.telemetry_hz;
  r.name = auto_run_name(r);
  try {
    validate(r.train);
    plan_model(r.model);
  } catch (const std::exception& error) {
    *problem = QString::fromStdString(error.what());
    return std::nullopt;
  }
  return r;
}

std::vector<RunRequest> SetupFiles::requests(QString* problem) const {
  const auto chosen = parts_.devices->selected();
  if (chosen.empty()) {
    *problem = tr("Tick a device to train on.");
    return {};
  }
  std::vector<RunRequest> requests;
  for (const std::string& device : chosen) {
    auto request = request_for(device, problem);
    if (!request) return {};
    requests.push_back(*request);
  }
  return requests;
}

bool SetupFiles::open(const QString& name_or_path, QString* error) {
  ExperimentPanel* experiment = parts_.experiment;
  DevicePicker* devices = parts_.devices;
  const DeviceList& device_list = *parts_.device_list;
  const QScopedValueRollback<bool> opening(opening_, true);
  try {
    const Setup setup = load_setup(name_or_path);
    experiment->set_experiment(setup.experiment);
    // From the setup's own replicas and sync, not the picker's last ones: a demo opened after a
    // replicated run had raced every setup at 2 replicas.
    devices->set_replicas(setup.experiment.backend.replicas);
    devices->set_sync(setup.experiment.backend.sync);
    parts_.race->clear();
    race_chosen_ = false;
    QStringList missing;
    std::vector<RunRequest> entries;
    for (const RaceEntry& entry : setup.race) {
      if (!devices->offers(entry.device)) {
        missing << QString::fromStdString(entry.device);
        continue;
      }
      QString problem;
      auto request = request_for(entry.device, &problem);
      if (!request) throw ConfigError(problem.toStdString());
      if (entry.device == "cpu")
        request->backend.threads =
            entry.threads > 0 ? entry.threads : std::max(1, device_list.cpu.logical_cores);
      if (!entry.name.empty()) request->name = entry.name;
      entries.push_back(*request);
    }
    if (setup.race.empty()) {  // a plain setup: its device, threads, replicas and sync
      if (!devices->apply(setup.experiment.backend))
        missing << QString::fromStdString(setup.experiment.backend.device);
    } else if (entries.size() == 1) {  // what is left is a plain run, on the device pickers
      devices->select_only(entries[0].backend.device);
      if (entries[0].backend.device == "cpu") devices->set_threads(entries[0].backend.threads);
    } else {
      for (const RunRequest& r : entries) parts_.race->add(r);
      race_chosen_ = true;
    }
    // Kept for the runs of this setup: starting them must not make the reason disappear.
    note_.clear();
    if (!missing.isEmpty()) {
      // The reason ends the sentence: it may hold parentheses of its own, and "(no GPU: no
      // driver (…))" doubled them.
      note_ = tr("This machine has no %1, so %2 runs without it: %3.")
                  .arg(missing.join(", "), QFileInfo(setup.source).fileName(),
                       device_list.gpus.empty()
                           ? tr("no GPU, %1").arg(QString::fromStdString(device_list.no_gpu_reason))
                           : tr("it is not among this machine's GPUs"));
      parts_.message->show_message(Banner::Kind::Warning, note_);
    }
    emit opened();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

Experiment SetupFiles::current() const {
  Experiment setup = parts_.experiment->experiment();
  // A setup is one run, as gpulab-cli trains it: the first the picker would start.
  const std::vector<std::string> chosen = parts_.devices->selected();
  setup.backend =
      parts_.devices->run_options(chosen.empty() ? "cpu" : chosen.front(), setup.backend);
  return setup;
}

bool SetupFiles::save(const QString& path, QString* error) const {
  try {
    if (!parts_.experiment->problem().isEmpty())
      throw ConfigError(parts_.experiment->problem().toStdString());
    // Never over a file that is no setup (a lab's .md, a run's run.json).
    check_output_file(path.toStdString(), "Save setup", setup_kind());
    save_experiment(path.toStdString(), current());
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

void SetupFiles::use_setup_of(const RunData& run) {
  try {
    Experiment e;
    e.model = model_from_json(run.info.at("model"));
    if (run.info.contains("config")) train_config_from_json(run.info["config"], e.train, e.backend);
    // The learning rates changed while it trained become the setup's plan, so the run is
    // repeated as it went (a plan of its own is in its config, and among those changes).
    if (!run.lr_changes.empty()) {
      e.train.lr_changes.clear();
      for (const LrChange& change : run.lr_changes)
        e.train.lr_changes.push_back({change.step, change.lr});
    }
    parts_.experiment->set_experiment(e);
    if (!parts_.devices->apply(e.backend))
      parts_.message->show_message(Banner::Kind::Warning,
                                   tr("That run used %1, which this machine does not have.")
                                       .arg(QString::fromStdString(e.backend.device)));
  } catch (const std::exception& error) {
    parts_.message->show_message(Banner::Kind::Error,
                                 tr("Cannot reuse that run's setup: %1").arg(error.what()));
  }
}

void SetupFiles::add_actions(QMenu* file) {
  Banner* message = parts_.message;
  file->addAction(tr("&Open setup…"), QKeySequence::Open, this, [this, message] {
    const QString path = QFileDialog::getOpenFileName(window_, tr("Open a setup"), QString(),
                                                      tr("gpulab setups (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!open(path, &error))
      message->show_message(Banner::Kind::Error, error);
    else if (message->isHidden())
      message->show_message(Banner::Kind::Info, tr("Loaded %1").arg(path));
  });
  QMenu* demos = file->addMenu(tr("&Demos"));
  for (const QString& name : demo_names())
    demos->addAction(name, this, [this, message, name] {
      QString error;
      if (!open(name, &error)) message->show_message(Banner::Kind::Error, error);
    });
  file->addAction(tr("&Save setup…"), QKeySequence::Save, this, [this, message] {
    const QString path = QFileDialog::getSaveFileName(
        window_, tr("Save the setup"), "experiment.json", tr("gpulab setups (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!save(path, &error))
      message->show_message(Banner::Kind::Error, error);
    else
      message->show_message(
          Banner::Kind::Info,
          tr("Saved %1; train it from a terminal with: gpulab-cli train --model %1").arg(path));
  });
}

}  // namespace gpulab::ui
