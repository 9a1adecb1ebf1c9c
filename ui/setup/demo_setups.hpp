// Setups by name or path, the shipped demos among them (resources/demos, compiled into the
// program, so `gpulab --setup race.json` works from any folder). A setup is what the window saves
// (a model with a "train" object); a demo may add a "race": the devices to run it on side by side.
#pragma once

#include <string>
#include <vector>

#include <QString>
#include <QStringList>

#include "engine/training/experiment.hpp"

namespace gpulab::ui {

struct RaceEntry {
  std::string device;  // "cpu", "cuda:0"
  int threads = 0;     // CPU threads; 0: every core
  std::string name;    // the run's name; empty: the usual one
};

struct Setup {
  Experiment experiment;
  std::vector<RaceEntry> race;  // empty: a plain setup
  QString description;
  QString source;  // the file it came from (":/demos/race.json" for a shipped demo)
};

// The shipped demos' names: "cpu-threads", "race", "race-to-99".
QStringList demo_names();
// A file when `name_or_path` names one; else a shipped demo ("race" or "race.json"). Throws
// ConfigError naming the file, or listing the demos when neither exists.
Setup load_setup(const QString& name_or_path);

}  // namespace gpulab::ui
