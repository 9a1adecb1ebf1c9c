// What the Labs tab keeps between sessions, in <runs>/.gpulab-labs.json beside the window's own
// state file: per lab, the run folder of each experiment, the matrix-multiply timings and the quiz
// answers; and the lab files opened, to open them again.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/devices/matmul_bench.hpp"

namespace gpulab::ui {

struct LabRecord {
  std::map<std::string, std::string> runs;                  // experiment -> run folder
  std::map<std::string, std::vector<MatmulTiming>> matmul;  // experiment -> its timings
  // question -> the text of the choice picked: by text, so that an edited lab file never moves
  // an answer onto another question or choice.
  std::map<std::string, std::string> answers;
};

struct LabProgress {
  std::map<std::string, LabRecord> labs;  // by the lab's source (":/labs/x.md", or its file)
  std::vector<std::string> files;         // lab files opened from the window, in order
};

std::filesystem::path lab_progress_path(const std::filesystem::path& runs_dir);

// A missing file is an empty progress. A damaged one (not JSON, or not this shape) is renamed
// aside (".gpulab-labs.json.damaged", the next free number after it), so nothing in it is lost
// and the window starts clean; `problem` then says what was wrong and where the file went.
LabProgress load_lab_progress(const std::filesystem::path& runs_dir, std::string* problem);
// Written atomically. Returns false with the reason when the file cannot be written.
bool save_lab_progress(const std::filesystem::path& runs_dir, const LabProgress& progress,
                       std::string* problem);

}  // namespace gpulab::ui
