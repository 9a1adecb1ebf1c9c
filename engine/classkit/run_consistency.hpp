// Whether a run's record agrees with itself and with the experiment it claims to be: what
// `lab verify` checks of each run a hand-in holds.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

// The share of a run's training seconds its steps may miss or exceed: the steps' times are
// measured inside the training time, which also holds the loop's own work between steps.
inline constexpr double kStepTimeTolerance = 0.25;

// Each disagreement of a record with itself as (the record's file name: "run.json",
// "metrics.csv", "eval.csv"; what is wrong): metrics.csv's rows against the summary's steps, step
// numbers and time stamps that do not increase, the steps' times against the training seconds,
// images/s against images and seconds, eval.csv's last test accuracy against the summary's
// (record_disagreements).
std::vector<std::pair<std::string, std::string>> run_inconsistencies(const RunData& run);

// The run's time stamps against each other: metrics.csv's and eval.csv's against run.json's
// wall and training seconds (taken last, on the same clock), eval.csv's training seconds against
// the steps' stamps, and telemetry.csv's samples against the run's length. Part of
// run_inconsistencies; a finished run only.
std::vector<std::pair<std::string, std::string>> timing_disagreements(const RunData& run);

// Where the run's model and settings in run.json are not the lab experiment's, one line each (a
// --quick run's shorter step budget and evaluation interval allowed).
std::vector<std::string> setting_differences(const RunData& run, const LabExperiment& experiment);

// Before a hand-in is written, from the window or `lab hand-in`: a result whose run (found in
// `runs` by its folder) is one of gpulab's shipped reference runs, copied into the learner's runs,
// gives "the run DIR of \"EXPERIMENT\" is the reference run ... not a run of yours: ...", which
// refuses the hand-in; "" when none is. `gpus` are this machine's GPU names (shipped_run_of).
std::string shipped_run_problem(const std::vector<LabRunResult>& results,
                                const std::vector<RunData>& runs,
                                const std::vector<std::string>& gpus);

// A line for each run taken for an experiment whose model or settings are not the experiment's
// (setting_differences), said before the hand-in is written since `lab verify` will name it.
std::vector<std::string> setting_warnings(const Lab& lab, const std::vector<LabRunResult>& results,
                                          const std::vector<RunData>& runs);

}  // namespace gpulab
