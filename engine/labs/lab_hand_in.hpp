// A lab's hand-in: one folder a learner gives their teacher, written the same way from
// `gpulab-cli lab run`, `gpulab-cli lab hand-in` and the window's "Hand in…": README.md (the
// report), the results tables (results.csv, results.md), the charts (PNG and SVG, drawn into the
// folder by the caller, which can draw), answers.json (the quiz and the written answers),
// machine.json, the runs the tables use (runs/, reference-runs/) and manifest.json
// (engine/labs/hand_in_manifest).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// answers.json's "format": how a folder is known to be a hand-in. /2 added the learner, every
// attempt at each quiz question and the written answers; /1 is still read.
inline constexpr const char* kHandInFormat = "gpulab-hand-in/2";
inline constexpr const char* kHandInFormatV1 = "gpulab-hand-in/1";

struct LabHandIn {
  std::vector<LabRunResult> results;  // as lab_results_table takes them
  std::vector<int> answers;           // per question, the choice picked; -1 for none
  // Per question, every answer given in order; where empty, its answer is its only attempt.
  std::vector<std::vector<QuizAttempt>> attempts;
  std::map<std::string, std::string> written;  // a "## Questions" item -> the learner's answer
  std::string learner;                         // the name manifest.json and the report give
  DeviceList machine;                 // the machine handing in (list_devices())
  std::string host;                   // its name
  std::string date;                   // iso_time_now()
  std::string made_by;                // "gpulab-cli lab run", "the gpulab window", ...
  // Per chart of the lab: "" when the caller drew hand_in_chart_file(lab, i, "png") and "svg"
  // into the folder, else why it is not there ("no finished runs to draw").
  std::vector<std::string> charts_missing;
  // The caller drew the benchmarks' chart (kMatmulChartStem .png and .svg, engine/labs/
  // matmul_chart) into the folder: the report shows it. Otherwise an earlier one is removed.
  bool matmul_chart = false;
};

// "results.csv" for the first table, "results-2.md" for the second's Markdown, ...
std::string hand_in_table_file(size_t table, const std::string& format);

// "chart-1-throughput.png": a chart's file by its place in the lab, its kind and the format.
std::string hand_in_chart_file(const Lab& lab, size_t chart, const std::string& format);

// Throws ConfigError ("<flag> DIR: <why>; <what to do>") unless `dir` can take a hand-in of
// `lab`: it does not exist yet and can be made, or it is a folder that is empty or holds only a
// previous hand-in of this lab (and, from `lab run`, its runs/ folder), none of them a link.
void check_hand_in_folder(const std::filesystem::path& dir, const Lab& lab,
                          const std::string& flag);

// Writes the hand-in into `dir` (made when missing), each file atomically, and returns the files
// written. A chart of a previous hand-in that is not drawn this time is removed, so the folder
// never shows a chart of other runs. Throws RecordError when a file cannot be written.
std::vector<std::filesystem::path> write_hand_in(const std::filesystem::path& dir, const Lab& lab,
                                                 const LabHandIn& hand_in);

// Answers given to a headless run (`lab run --answers FILE.json`): a hand-in's answers.json, or
// any JSON with {"answers": [{"question": TEXT, "answer": CHOICE TEXT}, ...]}, matched by text as
// the window keeps them. Per question of the lab, the choice; -1 where none is given. Throws
// ConfigError naming `flag`, the file and the question when one is not in the lab or its answer
// is not one of its choices.
std::vector<int> read_given_answers(const std::filesystem::path& file, const Lab& lab,
                                    const std::string& flag);

// Written answers given on the command line (`lab hand-in --answers FILE.json`): the file's
// "written" list, [{"question": TEXT, "answer": TEXT}, ...] as a hand-in's answers.json has it,
// matched by the question's text. Empty when the file has no "written". Throws ConfigError naming
// `flag`, the file and the question when one is not among the lab's "## Questions" (listing them)
// or an answer is not text.
std::map<std::string, std::string> read_given_written(const std::filesystem::path& file,
                                                      const Lab& lab, const std::string& flag);

// The quiz answers, their attempts and the written answers a progress record keeps, into `h`.
void add_record_answers(LabHandIn& h, const Lab& lab, const LabRecord* record);

// Per question, its attempts as the hand-in reports them: h.attempts, else the answer alone.
std::vector<std::vector<QuizAttempt>> hand_in_attempts(const Lab& lab, const LabHandIn& h);
// The number of questions whose first attempt was right.
int first_attempt_score(const Lab& lab, const LabHandIn& h);

// The parts, for the writer and the tests.
std::string hand_in_readme(const Lab& lab, const LabHandIn& hand_in);
std::string hand_in_answers_json(const Lab& lab, const LabHandIn& hand_in);
std::string hand_in_machine_json(const LabHandIn& hand_in);

}  // namespace gpulab
