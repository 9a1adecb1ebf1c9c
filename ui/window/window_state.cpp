// The window's state file.
#include "ui/window/window_state.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/records/record_reader.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab::ui {
namespace fs = std::filesystem;
namespace {

fs::path state_path(const fs::path& runs_dir) { return runs_dir / ".gpulab-window.json"; }
fs::path setup_path(const fs::path& runs_dir) { return runs_dir / ".gpulab-setup.json"; }

}  // namespace

WindowState load_window_state(const fs::path& runs_dir) {
  WindowState state;
  try {
    // Read as a record's files are: a FIFO, a folder or a link loop here is passed over.
    std::string text;
    if (!read_record_file(state_path(runs_dir), kMaxRunJsonBytes, &text)) return state;
    const nlohmann::json j = nlohmann::json::parse(text);
    state.checked = j.value("checked", std::vector<std::string>{});
    state.baseline = j.value("baseline", std::string());
    state.colors = j.value("colors", std::map<std::string, int>{});
    state.target_accuracy = j.value("target_accuracy", state.target_accuracy);
    state.present = true;
  } catch (const std::exception&) {
    return WindowState{};
  }
  return state;
}

bool save_window_state(const fs::path& runs_dir, const WindowState& state) {
  const nlohmann::json j = {{"checked", state.checked},
                            {"baseline", state.baseline},
                            {"colors", state.colors},
                            {"target_accuracy", state.target_accuracy}};
  try {
    fs::create_directories(runs_dir);
    write_file_atomically(state_path(runs_dir), j.dump(2) + "\n");
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::optional<Experiment> load_saved_setup(const fs::path& runs_dir) {
  try {
    // Only a regular file: a FIFO would block the window's start.
    std::error_code error;
    if (!fs::is_regular_file(setup_path(runs_dir), error)) return std::nullopt;
    return load_experiment(setup_path(runs_dir));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool save_setup(const fs::path& runs_dir, const Experiment& setup) {
  try {
    fs::create_directories(runs_dir);
    save_experiment(setup_path(runs_dir), setup);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace gpulab::ui
