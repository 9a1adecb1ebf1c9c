// What the window keeps between launches, in a small file in the runs folder
// (.gpulab-window.json) beside the runs it speaks of: which runs are ticked, the baseline, each
// run's colour, the target accuracy; and the setup, as .gpulab-setup.json (a setup file).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/training/experiment.hpp"

namespace gpulab::ui {

struct WindowState {
  std::vector<std::string> checked;   // run folders
  std::string baseline;               // a run folder; empty: the first ticked run
  std::map<std::string, int> colors;  // run folder -> palette slot
  double target_accuracy = 0.98;      // Setup and Compare share it
  bool present = false;               // false: no state file yet (a first start)
  bool operator==(const WindowState&) const = default;
};

// A missing or unreadable file gives the defaults: the state is a convenience, never a failure.
WindowState load_window_state(const std::filesystem::path& runs_dir);
// Returns false when the file cannot be written (a read-only runs folder): nothing else breaks.
bool save_window_state(const std::filesystem::path& runs_dir, const WindowState& state);

std::optional<Experiment> load_saved_setup(const std::filesystem::path& runs_dir);
bool save_setup(const std::filesystem::path& runs_dir, const Experiment& setup);

}  // namespace gpulab::ui
