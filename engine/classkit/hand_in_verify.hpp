// engine/classkit: the instructor's side of the labs, over engine/labs. Verifying a hand-in:
// every problem found as (file, what disagrees), so that `gpulab-cli lab verify` prints them and
// a grader can verify each hand-in of a class with the same code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

struct RunControl;

// One disagreement: the hand-in's file ("runs/lenet5-cpu/run.json", relative to the hand-in)
// and what is wrong with it.
struct HandInProblem {
  std::string file;
  std::string message;
  std::string to_string() const { return file + ": " + message; }
};

struct VerifyOptions {
  // The instructor's copy of the lab (a file or a built-in lab's name): the manifest's SHA-256
  // must be its. Empty: the built-in lab of the manifest's name, where its SHA-256 matches.
  std::string lab;
  int64_t replay_steps = 0;  // > 0: retrain that many steps of each CPU run and compare losses
  std::optional<std::filesystem::path> data_dir;  // MNIST for the replay (default_data_dir)
};

struct HandInVerdict {
  std::vector<HandInProblem> problems;  // empty: the hand-in verifies
  // What was checked, and what could not be ("results.csv not recomputed: ..."), one line each.
  std::vector<std::string> notes;
  // For a person to look at, not problems: "runs/mlp-cpu: its steps took a median ... when
  // recorded but ... replayed here" (a replay's pace on the same CPU model).
  std::vector<std::string> flags;
  std::string learner, lab;  // as manifest.json names them
  // The tables were recomputed and the runs' settings checked against the lab: --lab's file, or
  // the built-in lab of the manifest's SHA-256. Without it, no verdict says "verified".
  bool lab_checked = false;
  // The lab's rubric and how many quiz and written questions it has, where the lab was read
  // (--lab's file, or the built-in lab of the manifest's name): what a grade scores against.
  std::optional<LabRubric> rubric;
  int lab_quiz_questions = 0, lab_written_questions = 0;
  int files = 0, runs = 0, cells = 0, points = 0, replayed = 0;
  // The lab's tables as the runs in the hand-in give them (not as its results.csv says): what a
  // grader takes the key figures from. Empty when the lab was not found or is not the hand-in's.
  std::vector<LabResultsTable> tables;
  // The experiments whose row a reference run fills: recorded elsewhere, not the learner's figure.
  std::vector<std::string> reference_experiments;
};

// Checks the hand-in folder `dir`: manifest.json's hashes (missing, added and changed files);
// the lab file's hash against options.lab; answers.json's scores against the lab's quiz; every
// results table cell and chart point (chart-N-KIND.csv) recomputed from the runs in the hand-in
// with the code that wrote it; each run against itself and against its experiment's settings;
// two experiments holding one run; and, with replay_steps, the first steps of each CPU run
// trained again. Never throws for what is in the folder: a file that cannot be read is a problem
// naming it. `control` cancels a replay.
HandInVerdict verify_hand_in(const std::filesystem::path& dir, const VerifyOptions& options,
                             RunControl* control = nullptr);

// The JSON object in a hand-in's `file` (manifest.json, answers.json, a run.json), or null where
// it is missing or damaged: what is wrong with it is verify_hand_in's to say.
nlohmann::json hand_in_object(const std::filesystem::path& file);

}  // namespace gpulab
