// engine/labs: guided labs read from Markdown, the built-in labs, their results tables and the
// reference runs (recorded on a GPU elsewhere) shown in them. The top room of the engine: over
// engine/session and engine/analysis.
//
// Guided labs: a Markdown file with a small header and fenced blocks that declare experiments,
// results tables, charts and quiz questions (docs/labs.md), read into a Lab with every problem
// found named by file and line. No Qt: the CLI and the window read labs through this.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/session/session.hpp"
#include "engine/training/experiment.hpp"

namespace gpulab {

// One problem in a lab file: "labs/cnn.md:12: unknown key \"batchsize\" in an experiment".
struct LabProblem {
  std::string file;
  int line = 0;  // from 1
  std::string problem;
  std::string to_string() const;
};

// ```experiment: one training run (the keys of `gpulab-cli train` and of a setup's "train"), or
// one benchmark (`bench: matmul` with its sizes).
struct LabExperiment {
  int line = 0;
  std::string name;        // unique in the lab: the row of the results table
  bool baseline = false;   // speedups are over this one (the first experiment when none says so)
  std::string compare_to;  // this row's speedup is over that experiment instead of the baseline
  std::string model_name;  // the preset or file as written
  Experiment experiment;   // model and training settings, checked
  std::string bench;       // "" for training; "matmul" for a matrix-multiply benchmark
  std::vector<int> sizes;  // bench: the square matrix sizes
  bool needs_gpu() const;
};

// ```table: the results table's columns, over some or all experiments.
struct LabTable {
  int line = 0;
  std::vector<std::string> columns;      // kLabColumns names
  std::vector<std::string> experiments;  // empty: every experiment, in order
};

// ```chart: a chart of the experiments' runs, as `gpulab-cli export --chart` draws it.
struct LabChart {
  int line = 0;
  std::string kind;  // loss, accuracy, step-time, throughput, gpu, speedup
  std::string title;
  std::vector<std::string> experiments;  // empty: every training experiment
};

struct QuizChoice {
  std::string text;
  bool correct = false;
  std::string why;  // the feedback shown when this choice is picked
};

// ```quiz: one question, multiple choice or true/false (two choices, "True" and "False").
struct QuizQuestion {
  int line = 0;
  std::string question;
  bool true_false = false;
  std::vector<QuizChoice> choices;  // exactly one is correct
};

// The lab in reading order: Markdown text, code shown as code, and the declared blocks (index
// into the Lab's vector of that kind).
struct LabBlock {
  enum class Kind { Text, Code, Experiment, Table, Chart, Quiz };
  Kind kind = Kind::Text;
  int line = 0;
  std::string text;      // Text: the Markdown; Code: the code; empty for the declared blocks
  std::string language;  // Code: the info string
  int index = -1;
};

// How `lab grade` scores a hand-in (the header's `rubric:`): points per quiz question right at the
// first attempt and right in the end, per written answer given, and for a hand-in that verifies.
struct LabRubric {
  double quiz_first = 0, quiz_final = 1, written = 1, verified = 0;
  bool stated = false;  // the lab's header gave it; else these defaults
};

struct Lab {
  std::string name;    // the file's stem: "cnn-on-gpu"
  std::string source;  // the file it came from (":/labs/cnn-on-gpu.md" for a built-in lab)
  std::string title;
  int minutes = 0;
  std::vector<std::string> hardware;  // cpu, gpu, multi-gpu
  // The header's `quiz-attempts: N`: how many answers the window takes per quiz question (the
  // reason is shown after the last); 0, the default, for as many as the learner likes.
  int quiz_attempts = 0;
  // The header's `rubric: quiz-first 1, quiz-final 1, written 2, verified 5` (any of them; the
  // rest keep their defaults).
  LabRubric rubric;
  // The numbered items under the lab's "## Questions" heading, each on one line: the questions
  // the learner answers in words, kept in the progress file and handed in with answers.json.
  std::vector<std::string> questions;
  std::string sha256;  // of the lab file's bytes: a hand-in's manifest names the lab by it
  std::vector<LabBlock> blocks;
  std::vector<LabExperiment> experiments;
  std::vector<LabTable> tables;
  std::vector<LabChart> charts;
  std::vector<QuizQuestion> quiz;
  std::vector<LabProblem> problems;  // empty when the lab is valid

  bool ok() const { return problems.empty(); }
  const LabExperiment* experiment(const std::string& name) const;
  const LabExperiment* baseline() const;  // nullptr when the lab has no experiment
  std::string hardware_text() const;      // "cpu, gpu"
};

// The results table's columns, in the spelling a ```table block uses.
const std::vector<std::string>& lab_columns();
// The header keys and the hardware a lab may name.
const std::vector<std::string>& lab_hardware_kinds();

// The largest lab file read, in bytes and in lines: the window lays a lab's text out as it opens,
// and Qt's layout of Markdown slows with the lines of a paragraph (a 500 KB file froze it for
// minutes), so a lab past these is refused with them, before it is read. The built-in labs are
// under 9 KB and 230 lines.
inline constexpr size_t kMaxLabBytes = size_t(64) << 10;
inline constexpr int kMaxLabLines = 1000;
// "the file has 524288 bytes; a lab file has at most 65536 bytes and 1000 lines: split it ...".
std::string lab_size_limit_text(const std::string& found);

// Reads a lab from its text. `source` names the file in problems; `base_dir` is where a model
// file an experiment names, and an image its Markdown shows, are looked for (an image anywhere
// else is a problem: engine/labs/markdown_images). Never throws: what is wrong is in Lab::problems
// (text past kMaxLabBytes or kMaxLabLines, or not UTF-8, is refused whole).
Lab parse_lab(std::string_view text, const std::string& source,
              const std::filesystem::path& base_dir = {});
// Reads a lab file; a file that cannot be read is a problem at line 0.
Lab load_lab_file(const std::filesystem::path& path);

// The labs built into the program (resources/labs), by name.
std::vector<std::string> builtin_lab_names();
std::vector<Lab> builtin_labs();
// The source (":/labs/NAME.md") of the built-in lab whose text `file` holds byte for byte (the
// source tree's copy, say), or "" when it is no built-in's copy: opened as a file, it is that lab,
// not a second one of the same title.
std::string builtin_lab_source_of(const std::filesystem::path& file);
// A file when `name_or_path` names one, else a built-in lab ("cnn-on-gpu" or "cnn-on-gpu.md");
// throws ConfigError listing the built-in labs when neither exists.
Lab load_lab(const std::string& name_or_path);

// The run a training experiment starts, as `lab run` and the window start it: its model and
// settings, named after the experiment.
RunRequest lab_run_request(const LabExperiment& e);
// Why a machine with `devices` cannot run `e` (a GPU it lacks), or "" when it can.
std::string missing_hardware(const LabExperiment& e, const DeviceList& devices);

// Grading one answer: whether the choice is right, and the feedback to show.
struct QuizFeedback {
  bool correct = false;
  std::string why;
};
QuizFeedback grade(const QuizQuestion& question, int choice);  // throws ConfigError on a bad choice
// Answers: one choice per question, -1 for unanswered. The number right.
int quiz_score(const Lab& lab, const std::vector<int>& answers);

}  // namespace gpulab
