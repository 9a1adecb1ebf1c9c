// Grading a class: every hand-in found under the paths given (folders, .zip files, or a course
// platform's download of them) verified with verify_hand_in, one row per learner and lab, the
// last hand-in counting; and what the class measured, for class.csv, class.md and the charts
// (engine/classkit/class_report).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/classkit/hand_in_zip.hpp"
#include "engine/labs/lab.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

struct RunControl;

// A learner of the class's roster (`lab grade --roster FILE.csv`: id,name[,email]).
struct RosterLearner {
  std::string id, name, email;
};

// Reads a roster: a CSV with a header naming "id" and "name" (and optionally "email"), a learner a
// line. Throws ConfigError naming the file and line for a missing column, an empty id or name, or
// an id twice.
std::vector<RosterLearner> read_roster(const std::filesystem::path& file);

struct GradeOptions {
  std::string lab;           // verify's --lab: the instructor's copy, for every hand-in
  int64_t replay_steps = 0;  // > 0: verify's replay of each CPU run
  std::optional<std::filesystem::path> data_dir;
  ZipLimits zip_limits;
  // Set to stop grading (SIGINT, SIGTERM, the board closed): checked after each hand-in and by a
  // replay; grade_into then removes its work folder and throws GradingStopped.
  RunControl* control = nullptr;
  // --roster FILE.csv, read (read_roster): hand-ins matched to its learners, and a row for each
  // learner without one. Empty: no roster.
  std::vector<RosterLearner> roster;
  std::string roster_file;  // as given, for the messages
};

// grade_into stopped by GradeOptions::control: nothing of the grade was written.
struct GradingStopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One hand-in as graded.
struct ClassRow {
  std::string source;   // the folder or .zip it came from, as found (UTF-8, bad bytes as '?')
  std::string learner;  // manifest.json's; the folder's name where there is none
  std::string lab, submitted;  // manifest.json's "lab" and "handed_in"
  int score = -1, first_attempt_score = -1, quiz_questions = 0;  // -1: no answers.json read
  int written_answered = 0, written_questions = 0;
  std::vector<std::string> problems;  // empty: verified; else "file: what disagrees", in order
  std::string cpu, gpu;               // machine.json's CPU model and GPU names ("" for none)
  // The lab's key figures, recomputed from the hand-in's runs: ("gpu speedup", 12.3), ...
  std::vector<std::pair<std::string, double>> figures;
  // Those figures' runs that carry ⚠ ("cpu: quick: a few steps each, not for comparison"): marked
  // in class.csv and on the class chart's bars, as every other view marks a flagged run.
  std::vector<std::string> flagged_runs;
  std::vector<std::string> run_hashes;  // SHA-256 of each of its own runs' run.json, metrics.csv
  // Its tables and settings were recomputed against the lab (--lab's file, or the built-in lab
  // of the manifest's SHA-256): "no" in class.csv's lab_checked otherwise.
  bool lab_checked = false;
  // Not a hand-in at all (a FIFO, a device, a socket, a link to one or to nothing): never opened,
  // its one problem says what it is; counted as not graded.
  bool no_hand_in = false;
  std::string roster_id;  // --roster's id of the learner ("" without a roster, or not on it)
  // A course platform's folder the hand-in came in ("Ada Lovelace_12345_assignsubmission_file"):
  // the name and id it gives, "" where there is none.
  std::string platform_name, platform_id;
  // The rubric's points and the most there are (-1: no rubric, the lab was not read).
  double points = -1, max_points = -1;
  std::optional<LabRubric> rubric;  // the lab's, where it was read
  int lab_quiz_questions = 0, lab_written_questions = 0;
  std::vector<std::string> run_created;  // run.json's "created" beside each of run_hashes
  std::string host;                      // machine.json's host
  bool verified() const { return problems.empty(); }
};

struct ClassGrade {
  std::vector<ClassRow> rows;     // one per learner and lab (its last hand-in), by lab then learner
  std::vector<ClassRow> earlier;  // the hand-ins a later one of the same learner and lab replaced
  size_t hand_ins = 0;            // the hand-ins found and graded (rows + earlier)
  size_t not_graded = 0;          // paths that are no hand-in (ClassRow::no_hand_in), in rows
  size_t missing = 0;  // roster learners without a hand-in of a lab graded: a row each, in rows
};

// The hand-ins under `paths`: a hand-in folder (it holds manifest.json or answers.json), a .zip,
// or a folder of those, possibly one level down ("Ada_123_assignsubmission_file/Ada.zip"). A
// folder with none, or a file that is neither, is returned too and graded as a row saying so.
// `skip` (the output folder) is never looked into.
std::vector<std::filesystem::path> find_hand_ins(const std::vector<std::filesystem::path>& paths,
                                                 const std::filesystem::path& skip);

// The folder of the hand-in at `path`, to read: `path` itself for a hand-in folder; for a .zip,
// the hand-in it holds, unpacked into `work` (emptied first) through unpack_hand_in_zip. "" with
// `problem` set to the one line saying why there is none ("ada.zip: the entry \"../x\" points
// outside the zip's folder (\"..\")"); then nothing unpacked is left in `work`. lab grade and
// the window's class board open hand-ins through it.
std::filesystem::path open_hand_in(const std::filesystem::path& path,
                                   const std::filesystem::path& work, const ZipLimits& limits,
                                   std::string* problem);

// Grades one hand-in folder or .zip; a zip is unpacked under `work` (removed after). Never throws
// for what the hand-in holds: every problem is in the row.
ClassRow grade_hand_in(const std::filesystem::path& path, const std::filesystem::path& work,
                       const GradeOptions& options);

// A key figure "far outside" the class: more than kOutlierRatio times the median of at least
// kOutlierPeers other learners' on the same hardware (GPU model, else CPU model), or less than
// that median over it.
inline constexpr double kOutlierRatio = 2.0;
inline constexpr size_t kOutlierPeers = 2;

// Flags (in flagged_runs, never as a problem: a person looks) each key figure far outside the
// others' of the same lab on the same hardware, naming both figures.
void flag_outliers(ClassGrade& grade);

// Flags each GPU row's images/s more than kOutlierRatio away from a shipped reference run of the
// same lab experiment recorded on the same GPU model (`references`, load_reference_runs), naming
// both figures and where the reference was recorded: a learner alone on an H100 still has a peer.
void flag_against_references(ClassGrade& grade, const std::vector<RunData>& references);

// Grades every hand-in of `found` (progress(done, total) after each), keeps each learner's last
// per lab, and flags rows of different learners that hold the same run.
ClassGrade grade_class(const std::vector<std::filesystem::path>& found,
                       const std::filesystem::path& work, const GradeOptions& options,
                       const std::function<void(size_t, size_t)>& progress = {});

// `lab grade` whole: finds the hand-ins under `paths` (never looking into `out`), unpacks zips into
// a work folder made inside `out` (removed afterwards, also when `progress` throws to stop) and
// grades them. No hand-in found is an empty grade. Throws ConfigError when `out` cannot be made or
// written.
ClassGrade grade_into(const std::vector<std::filesystem::path>& paths,
                      const std::filesystem::path& out, const GradeOptions& options,
                      const std::function<void(size_t, size_t)>& progress = {});

}  // namespace gpulab
