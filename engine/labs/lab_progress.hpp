// What a learner did in the labs, kept in <runs>/.gpulab-labs.json: per lab, the run folder of
// each experiment, the matrix-multiply timings and the quiz answers; and the lab files opened. The
// window keeps it as the learner works; `gpulab-cli lab hand-in` reads it, so a lab worked in the
// window can be handed in from a terminal.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/devices/matmul_bench.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

// One answer given to a quiz question, in the order given.
struct QuizAttempt {
  std::string answer;  // the choice's text
  std::string time;    // iso_time_now() when it was given; "" where it was not kept
};

struct LabRecord {
  std::map<std::string, std::string> runs;                  // experiment -> run folder
  std::map<std::string, std::vector<MatmulTiming>> matmul;  // experiment -> its timings
  // experiment -> other programs' load while it timed (run.json's "outside_load" shape), so its
  // rows carry ⚠ as a run measured under load does; absent where it was not measured.
  std::map<std::string, nlohmann::json> matmul_load;
  // question -> the text of the choice picked: by text, so that an edited lab file never moves
  // an answer onto another question or choice.
  std::map<std::string, std::string> answers;
  // question -> every answer given, in order (the last is `answers`'): a hand-in reports the
  // first-attempt score beside the final one.
  std::map<std::string, std::vector<QuizAttempt>> attempts;
  // A question of the lab's "## Questions" list -> the learner's answer in words.
  std::map<std::string, std::string> written;
};

// Records an answer to a quiz question: appended to its attempts and kept as its answer. Returns
// false, recording nothing, when the lab's quiz-attempts are used up for that question.
bool record_quiz_answer(const Lab& lab, LabRecord& record, const std::string& question,
                        const std::string& answer, const std::string& time);
// How many more answers `question` takes: -1 for any number (no quiz-attempts in the lab).
int quiz_attempts_left(const Lab& lab, const LabRecord* record, const std::string& question);
// The attempts of a question as kept, or, for an answer kept before attempts were (an older
// progress file, `lab run --answers`), that answer as the only attempt, with no time.
std::vector<QuizAttempt> quiz_attempts(const LabRecord* record, const std::string& question);

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

// The answers kept by text as the choices they name, per question (-1: none, or a choice the
// lab no longer has).
std::vector<int> quiz_answers(const Lab& lab, const LabRecord* record);

// The name a lab's experiment runs under in the runs list: "lenet5 cpu · cnn-on-gpu" (the lab's
// name keeps two labs' "cpu" runs apart).
std::string lab_run_name(const Lab& lab, const LabExperiment& e);
std::string lab_run_name(const std::string& experiment, const std::string& lab);
// An experiment's run among `runs` (newest first): the folder the record names (as canonical
// paths), else one of that folder's name with the experiment's run name (a runs folder copied or
// moved), else the newest run named lab_run_name (a record kept in the runs folder when the
// progress file was not, or its run deleted). -1 when there is none.
int experiment_run(const Lab& lab, const LabExperiment& e, const LabRecord* record,
                   const std::vector<const RunData*>& runs);

// The short note of a results table's row for an experiment not run that needs hardware
// `devices` lack (`missing`, from missing_hardware): "no GPU on this machine" where there is no
// GPU at all, else what is missing. The experiment's card gives the whole reason.
std::string skipped_note(const std::string& missing, const DeviceList& devices);

// Every experiment's result as the window shows it, from a lab's record and the runs of its runs
// folder (newest first): a training experiment's run (experiment_run), a benchmark's timings, and
// an experiment not run that needs hardware `devices` lack: its reference run among
// `references` (reference_result: the learner's own run always wins), else skipped saying so.
// What `lab hand-in` hands in.
std::vector<LabRunResult> lab_results_from(const Lab& lab, const LabRecord* record,
                                           const std::vector<RunData>& runs,
                                           const DeviceList& devices,
                                           const ReferenceRuns& references = {});

}  // namespace gpulab
