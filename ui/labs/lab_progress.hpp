// What the Labs tab keeps between sessions, in <runs>/.gpulab-labs.json beside the window's own
// state file: the engine's (engine/labs/lab_progress), which `gpulab-cli lab hand-in` reads too.
#pragma once

#include "engine/labs/lab_progress.hpp"

namespace gpulab::ui {

using gpulab::lab_progress_path;
using gpulab::LabProgress;
using gpulab::LabRecord;
using gpulab::load_lab_progress;
using gpulab::save_lab_progress;

}  // namespace gpulab::ui
