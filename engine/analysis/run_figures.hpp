// One run's figures read from its record, without Qt: what run.json says (a field as a number or a
// string), its steps per epoch, the median step and its phases, its live pace, the caveats and
// flags that mark its figures, and a large record thinned for drawing.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// A field of run.json by its path ({"config", "batch"}): the field, or null where any step of
// the path is missing; a number (else NaN); a string (else `fallback`).
const nlohmann::json* info_field(const nlohmann::json& info,
                                 std::initializer_list<const char*> path);
double info_number(const nlohmann::json& info, std::initializer_list<const char*> path);
std::string info_string(const nlohmann::json& info, std::initializer_list<const char*> path,
                        const std::string& fallback = "");

// The parts of a step, in the order the stacked breakdown draws them: kStepPhases.
inline constexpr int kPhaseCount = int(kStepPhases.size());
const char* phase_name(int phase);  // data, copy, forward, backward, all-reduce, optimizer
double phase_ms(const StepTimes& times, int phase);
int phase_index(const std::string& name);  // -1 for none
// The breakdown's last part: the step's time outside every phase (the loop, starting threads).
inline constexpr const char* kOtherPhase = "other";

// What the step-time breakdown shows of a run: the steps around its median step time (the middle
// tenth, at least the median step), their mean time and mean phases, and the rest of their time
// as other_ms, so the phases add up to that step. NaN without steps.
struct MedianStep {
  double step_ms = kNoValue;
  std::vector<double> phases_ms;  // by phase number
  double other_ms = kNoValue;
  int steps = 0;
};
MedianStep median_step(const RunData& run);

// How much of the compute is matrix products: over the recorded steps that measured it (the CPU
// backend's; StepTimes::matmul_ms), their time in convolution and fully connected kernels against
// their forward and backward time. percent is 100 x matmul_ms / compute_ms; every field NaN (and
// steps 0) where no step measured it: a GPU run, a record from before it was kept.
struct MatmulShare {
  double matmul_ms = kNoValue;   // summed over those steps
  double compute_ms = kNoValue;  // their forward_ms + backward_ms, summed
  double percent = kNoValue;
  int64_t steps = 0;
};
MatmulShare matmul_share(const RunData& run);
// "72 % of forward and backward in matrix products (convolutions and GEMMs): 3.60 of 5.00 ms a
// step" (the means over those steps), or "" where not measured: gpulab-cli train's line.
std::string matmul_share_text(const MatmulShare& share);

// A run's pace: the one figure every view, file and command calls "images/s" (the runs list, the
// status line, Compare and its CSV, the headline, a race's verdict, lab tables, hand-ins, the class
// board, gpulab-cli's lines). The images of a step over the median step's time (median_step), so
// that the set-up in a run's first steps (about 115 ms in step 1 of the first GPU run of a process,
// against 0.3 ms after it) and evaluations do not count. Where the other figure, images over the
// run's training seconds, is shown, it is named "over the whole run".
// The images of a step: the summary's images over its steps, else the recorded steps' own.
double pace_images_per_second(double images, double steps, double median_step_ms);
double run_images_per_second(const RunData& run);

// Thins a large record for drawing: at most `max_steps` steps, each the mean of a run of
// consecutive steps (placed at the last of them, so the x axes stay true), and replicas.csv rows
// kept for those steps only. Sets run.steps_per_point. Evaluations and samples stay whole.
void thin_for_drawing(RunData& run, size_t max_steps);

// Steps per epoch of a run: run.json's plan, else counted from the steps of its first epoch.
int64_t steps_per_epoch(const RunData& run);

// Where run.json's summary disagrees with what the run's own files measured (an edited or
// damaged record), one "figures disagree: ..." sentence each: more images than its steps hold,
// images/s faster or a mean step shorter than any step in metrics.csv, a test accuracy that is
// not eval.csv's last test evaluation. Empty for a record that agrees with itself.
std::vector<std::string> record_disagreements(const RunData& run);

// Why a run's figures may not be what it gets alone, one short sentence each: its
// record_disagreements, it ran at the same time as other runs on its hardware (run.json
// "shared_hardware"), or other programs loaded the CPU while it ran ("outside_load"). Empty for
// a clean measurement.
std::vector<std::string> run_caveats(const RunData& run);

// Everything that marks a run's figures with ⚠ wherever they are shown: its run_caveats, and a
// status that cuts its figures short ("cancelled after 44 steps", "failed", "diverged"). Empty for
// a clean measurement, finished or still running.
std::vector<std::string> run_flags(const RunData& run);
// A flag's headline, where room is short: the part before its first colon ("measured under
// outside load").
std::string flag_headline(const std::string& flag);
// A run's name as charts show it: with " ⚠" when it has flags.
std::string flagged_name(const std::string& name, const RunData& run);
// The same mark from flags already read (run_flags): one place says how a flag is shown.
std::string flagged_name(const std::string& name, const std::vector<std::string>& flags);

// A live run's figures, one source for its status line and the presenter's headline: images/s
// over its last kLiveSteps steps (NaN before the first step is measured) and the time left at its
// pace so far, evaluations included (NaN without a plan or a step).
inline constexpr size_t kLiveSteps = 20;
struct LiveFigures {
  int64_t step = 0;
  double images_per_second = kNoValue;
  double eta_s = kNoValue;
};
LiveFigures live_figures(const RunData& run, int64_t total_steps);

// Flags or caveats as one line, "; " between them (comparison.csv, a chart's per-run flags).
std::string join_flags(const std::vector<std::string>& flags);

}  // namespace gpulab
