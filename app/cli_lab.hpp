// gpulab-cli lab: list the built-in labs, check a lab file, run a lab's experiments headless
// and hand a lab in: the hand-in folder (engine/labs/lab_hand_in) with its tables and charts;
// verify a hand-in and grade a class (engine/classkit).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gpulab {
struct RunControl;
}

namespace gpulab::cli {

struct LabFlags {
  std::vector<std::string> check;  // lab check FILE.md...
  std::string run;                 // lab run NAME|FILE.md
  std::string hand_in;             // lab hand-in NAME|FILE.md
  std::string runs_dir;            // lab hand-in --runs-dir
  std::string answers;             // lab run --answers FILE.json
  std::string learner;             // lab hand-in|run --learner NAME
  std::string verify;              // lab verify HANDIN
  std::string lab_file;            // lab verify --lab FILE.md
  int64_t replay = 0;              // lab verify|grade --replay STEPS
  bool zip = false;                // lab hand-in --zip
  bool force = false;              // lab hand-in --zip, lab grade --out: replace other files
  std::vector<std::string> grade;  // lab grade PATH...
  std::string roster;              // lab grade --roster FILE.csv
  std::string out;
  std::string data_dir;
  bool quick = false;
  bool quiet = false;
};

struct LabCommands {
  CLI::App* list = nullptr;
  CLI::App* check = nullptr;
  CLI::App* run = nullptr;
  CLI::App* hand_in = nullptr;
  CLI::App* verify = nullptr;
  CLI::App* grade = nullptr;
};
LabCommands add_lab_command(CLI::App& app, LabFlags& flags);

int run_lab_list();
// The hand-in folder from the runs and quiz answers the window kept in --runs-dir.
int run_lab_hand_in(const LabFlags& flags, int argc, char** argv);
// Checks a hand-in (engine/classkit): one line per problem on stdout, exit 1 when there is any,
// else one line saying what was checked.
int run_lab_verify(const LabFlags& flags, RunControl& control);
// Grades a class's hand-ins into --out (class.csv, class.md, the class charts): 0 when every
// hand-in was graded, whatever problems they have (app/cli_lab_grade.cpp).
int run_lab_grade(const LabFlags& flags, RunControl& control, int argc, char** argv);
// Prints every problem as "file:line: problem" on stderr; 1 when there is any.
int run_lab_check(const LabFlags& flags);
// Runs through execute_run, as `gpulab-cli train` does; `control` cancels (Ctrl-C).
int run_lab(const LabFlags& flags, RunControl& control, int argc, char** argv);

}  // namespace gpulab::cli
