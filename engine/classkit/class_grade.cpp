// Grading a class: finding its hand-ins, verifying each (a zip unpacked first, under the work
// folder), reading what the report lists of it, and keeping each learner's last hand-in.
#include "engine/classkit/class_grade.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <system_error>
#include <tuple>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/sha256.hpp"
#include "engine/base/text.hpp"
#include "engine/classkit/hand_in_verify.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A path or name as UTF-8 for the report: a byte that is not UTF-8 becomes '?'.
std::string printable(std::string text) {
  for (size_t at = invalid_utf8_at(text); at != std::string::npos; at = invalid_utf8_at(text))
    text[at] = '?';
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';  // one row, one line
  return text;
}

bool is_zip(const fs::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".zip";
}

// What `path` is when it is neither a folder nor a regular file (following links), in words: such
// a path is never opened (a FIFO would block the read, /dev/zero never ends). "" otherwise.
std::string special_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status link = fs::symlink_status(path, error);
  const fs::file_status status = fs::status(path, error);
  const std::string via = fs::is_symlink(link) ? "a link to " : "";
  if (fs::is_symlink(link) && !fs::exists(status)) return "a link to nothing";
  if (fs::is_fifo(status)) return via + "a FIFO (a named pipe)";
  if (fs::is_character_file(status)) return via + "a character device";
  if (fs::is_block_file(status)) return via + "a block device";
  if (fs::is_socket(status)) return via + "a socket";
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status))
    return via + "a special file";
  return "";
}

bool is_hand_in_folder(const fs::path& dir) {
  std::error_code error;
  return fs::exists(dir / kManifestFile, error) || fs::exists(dir / "answers.json", error);
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::string string_in(const json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto value = j.find(key);
  return value != j.end() && value->is_string() ? value->get<std::string>() : "";
}

int int_in(const json& j, const char* key, int otherwise) {
  if (!j.is_object()) return otherwise;
  const auto value = j.find(key);
  return value != j.end() && value->is_number_integer() ? value->get<int>() : otherwise;
}

// The key figures of the lab's first table: each experiment's images/s, speedup and GFLOP/s
// (a benchmark's at its largest size, the last of its rows), as the runs give them; none from a
// reference run. `flags` gets "experiment: flag" for each of those rows whose run carries ⚠ (its
// note: quick, cancelled, shared hardware, outside load).
std::vector<std::pair<std::string, double>> key_figures(const HandInVerdict& verdict,
                                                        std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, double>> figures;
  if (verdict.tables.empty()) return figures;
  const LabResultsTable& table = verdict.tables.front();
  const auto column = [&](const std::string& name) {
    const auto at = std::find(table.header.begin(), table.header.end(), name);
    return at == table.header.end() ? -1 : int(at - table.header.begin());
  };
  const int experiment = column("experiment"), size = column("size"), note = column("note");
  if (experiment < 0) return figures;
  std::map<std::string, size_t> index;
  const auto& references = verdict.reference_experiments;
  for (const auto& row : table.rows) {
    if (size_t(experiment) >= row.size() || std::find(references.begin(), references.end(),
                                                      row[size_t(experiment)]) != references.end())
      continue;  // a reference run's figures were measured elsewhere, not by the learner
    if (note >= 0 && size_t(note) < row.size())
      if (const size_t mark = row[size_t(note)].find("⚠"); mark != std::string::npos) {
        const std::string flag = row[size_t(experiment)] + ": " +
                                 row[size_t(note)].substr(mark + std::string("⚠ ").size());
        if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
      }
    for (const char* key : {"images/s", "speedup", "GFLOP/s"}) {
      const int c = column(key);
      if (c < 0 || size_t(c) >= row.size() || row[size_t(c)].empty()) continue;
      char* end = nullptr;
      const double value = std::strtod(row[size_t(c)].c_str(), &end);
      if (end == row[size_t(c)].c_str()) continue;  // "not reached"
      const std::string stem = row[size_t(experiment)] + " " + key;
      const std::string at =
          size >= 0 && !row[size_t(size)].empty() ? " at " + row[size_t(size)] : "";
      if (const auto seen = index.find(stem); seen != index.end())
        figures[seen->second] = {stem + at, value};
      else {
        index[stem] = figures.size();
        figures.emplace_back(stem + at, value);
      }
    }
  }
  return figures;
}

// The folder of an unpacked zip that is the hand-in: the zip's top (as `lab hand-in --zip` packs
// it, one folder) or the zip itself; "" when none holds a manifest.
fs::path hand_in_in(const fs::path& unpacked) {
  if (is_hand_in_folder(unpacked)) return unpacked;
  std::vector<fs::path> found;
  for (const fs::path& entry : sorted_entries(unpacked))
    if (fs::is_directory(entry) && is_hand_in_folder(entry)) found.push_back(entry);
  return found.size() == 1 ? found.front() : fs::path();
}

void read_facts(ClassRow& row, const fs::path& dir) {
  const json manifest = hand_in_object(dir / kManifestFile);
  // Bounded where read: a learner's name of megabytes made the class chart take minutes.
  if (const std::string learner = string_in(manifest, "learner"); !learner.empty())
    row.learner = bounded_name(learner);
  row.lab = bounded_name(string_in(manifest, "lab"));
  row.submitted = string_in(manifest, "handed_in");
  const json answers = hand_in_object(dir / "answers.json");
  if (!answers.is_null()) {
    row.score = int_in(answers, "score", -1);
    row.first_attempt_score = int_in(answers, "first_attempt_score", -1);
    const json questions = answers.value("answers", json::array());
    row.quiz_questions = questions.is_array() ? int(questions.size()) : 0;
    row.written_answered = int_in(answers, "written_answered", 0);
    const json written = answers.value("written", json::array());
    row.written_questions = written.is_array() ? int(written.size()) : 0;
  }
  const json machine = hand_in_object(dir / "machine.json");
  if (machine.is_object()) {
    row.host = string_in(machine, "host");
    row.cpu = string_in(machine.value("cpu", json::object()), "model");
    const json gpus = machine.value("gpus", json::array());
    std::vector<std::string> names;
    if (gpus.is_array())
      for (const json& gpu : gpus) names.push_back(string_in(gpu, "name"));
    for (size_t i = 0; i < names.size(); ++i) row.gpu += (i ? " + " : "") + names[i];
  }
  // Its own runs (a reference run ships with gpulab: every learner may hold it).
  const json experiments =
      manifest.is_object() ? manifest.value("experiments", json::array()) : json::array();
  if (experiments.is_array())
    for (const json& e : experiments) {
      const std::string folder = string_in(e, "run");
      if (folder.empty() || !e.is_object() || e.value("reference", false)) continue;
      const std::string created = string_in(hand_in_object(dir / folder / "run.json"), "created");
      for (const char* file : {"run.json", "metrics.csv"}) try {
          row.run_hashes.push_back(sha256_file(dir / folder / file));
          row.run_created.push_back(created);
        } catch (const RecordError&) {  // missing: verify names it
        }
    }
}

// The work folder of a grade: ".grading-PID-XXXXXX" in the --out folder.
const std::string kWorkPrefix = ".grading-";

// Work folders an earlier grade of `out` left (killed before it could remove its own): those of a
// process that is gone, and those of gpulab versions that named no process (".grading-XXXXXX").
// A grade still running keeps its own.
void remove_stale_work_folders(const fs::path& out) {
  std::error_code error;
  for (const fs::path& entry : sorted_entries(out)) {
    const std::string name = entry.filename().string();
    if (name.rfind(kWorkPrefix, 0) != 0 || fs::is_symlink(entry, error) ||
        !fs::is_directory(entry, error))
      continue;
    const std::string rest = name.substr(kWorkPrefix.size());
    const size_t dash = rest.find('-');
    char* end = nullptr;
    const long pid = dash == std::string::npos ? 0 : std::strtol(rest.c_str(), &end, 10);
    const bool named = dash != std::string::npos && end == rest.c_str() + dash && pid > 0;
    if (named && (::kill(pid_t(pid), 0) == 0 || errno == EPERM)) continue;  // still grading
    fs::remove_all(entry, error);
  }
}

// A course platform's folder per submission (Moodle's "Ada Lovelace_12345_assignsubmission_file")
// at `path` or just above it: the name and id it gives.
void platform_folder(const fs::path& path, std::string* name, std::string* id) {
  static const std::regex folder(R"(^(.+)_([0-9]+)_assignsubmission_[a-z]+$)");
  for (const fs::path& p : {path, path.parent_path()}) {
    const std::string text = p.filename().string();
    std::smatch match;
    if (std::regex_match(text, match, folder)) {
      *name = printable(match[1].str());
      *id = match[2].str();
      return;
    }
  }
}

// A name as a roster and a typed name are compared: case, spaces, '-', '_' and '.' aside.
std::string name_key(const std::string& name) {
  std::string key;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.' || c == '\t') continue;
    key += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

const RosterLearner* roster_by_id(const std::vector<RosterLearner>& roster, const std::string& id) {
  for (const RosterLearner& learner : roster)
    if (!id.empty() && learner.id == id) return &learner;
  return nullptr;
}

// The roster's learner a typed name is: by name, id or email.
const RosterLearner* roster_by_name(const std::vector<RosterLearner>& roster,
                                    const std::string& typed) {
  const std::string key = name_key(typed);
  if (key.empty()) return nullptr;
  for (const RosterLearner& learner : roster)
    if (name_key(learner.name) == key || learner.id == typed ||
        (!learner.email.empty() && name_key(learner.email) == key))
      return &learner;
  return nullptr;
}

std::string roster_text(const RosterLearner& learner) {
  return learner.name + " (roster id " + learner.id + ")";
}

// Each row matched to the roster: its roster id, and a problem where the hand-in names someone
// not on it, or another learner than the course platform's folder it came in.
void match_roster(std::vector<ClassRow>& rows, const GradeOptions& options) {
  const std::string file = options.roster_file.empty() ? "--roster" : options.roster_file;
  for (ClassRow& row : rows) {
    if (row.no_hand_in) continue;
    const RosterLearner* platform = roster_by_id(options.roster, row.platform_id);
    const bool named = !row.lab.empty();  // the manifest was read: its learner is the row's
    const RosterLearner* typed = named ? roster_by_name(options.roster, row.learner) : nullptr;
    if (!named) {
      // A hand-in that could not be read: its row is under the learner its folder gives.
      if (platform) row.learner = platform->name;
      if (const RosterLearner* by_file =
              platform ? platform : roster_by_name(options.roster, row.learner))
        row.roster_id = by_file->id;
      continue;
    }
    const std::string folder = row.platform_name + "_" + row.platform_id;
    if (!row.platform_id.empty() && !platform)
      row.problems.push_back("the course platform's folder \"" + folder + "_...\" gives the id " +
                             row.platform_id + ", which is not on " + file);
    if (platform && typed && platform != typed) {
      row.problems.push_back("manifest.json names " + roster_text(*typed) +
                             ", but it came in the course platform's "
                             "folder of " +
                             roster_text(*platform) + " (\"" + folder +
                             "_...\"): handed in under another learner's name");
    } else if (platform && !typed) {
      row.problems.push_back("manifest.json names \"" + row.learner + "\", who is not on " + file +
                             ", but it came in the course platform's folder of " +
                             roster_text(*platform) + ": check whose hand-in it is");
    } else if (!platform && !typed) {
      row.problems.push_back("manifest.json names \"" + row.learner + "\", who is not on " + file +
                             ": no learner of the class");
    }
    row.roster_id = platform ? platform->id : typed ? typed->id : "";
  }
}

// Who a row is, for "one row per learner and lab": the roster's id where there is one.
std::string learner_key(const ClassRow& row) {
  return row.roster_id.empty() ? "name:" + row.learner : "id:" + row.roster_id;
}

// Two hand-ins of one learner and lab from the same person handing in again: the same course
// platform folder's id, or (outside a platform) the same machine.
bool same_submitter(const ClassRow& a, const ClassRow& b) {
  if (!a.platform_id.empty() || !b.platform_id.empty()) return a.platform_id == b.platform_id;
  return !a.host.empty() && a.host == b.host;
}

// "2026-11-27T08:00:00Z" or "an unknown time".
std::string when(const std::string& time) { return time.empty() ? "at an unknown time" : time; }

// The rubric's points of a row, from its final problems.
void score(ClassRow& row) {
  if (!row.rubric || row.no_hand_in || row.lab.empty()) return;
  const LabRubric& r = *row.rubric;
  row.max_points = (r.quiz_first + r.quiz_final) * row.lab_quiz_questions +
                   r.written * row.lab_written_questions + r.verified;
  row.points = r.quiz_first * std::max(row.first_attempt_score, 0) +
               r.quiz_final * std::max(row.score, 0) +
               r.written * std::min(row.written_answered, row.lab_written_questions) +
               (row.verified() ? r.verified : 0);
}

}  // namespace

std::vector<RosterLearner> read_roster(const fs::path& file) {
  std::string text;
  try {
    if (!read_record_file(file, kMaxRunJsonBytes, &text))
      throw ConfigError("--roster " + file.string() +
                        ": no such file; give a CSV of id,name[,email]");
  } catch (const RecordError& e) {
    throw ConfigError("--roster " + file.string() + ": " + e.what());
  }
  const auto rows = csv_rows(text);
  const auto column = [&](const char* name) {
    if (rows.empty()) return -1;
    for (size_t c = 0; c < rows[0].size(); ++c)
      if (name_key(rows[0][c]) == name) return int(c);
    return -1;
  };
  const int id = column("id"), name = column("name"), email = column("email");
  if (id < 0 || name < 0)
    throw ConfigError("--roster " + file.string() +
                      ": its first line names no \"id\" and \"name\" columns; give a CSV "
                      "whose header is id,name (and optionally email), a learner a line");
  std::vector<RosterLearner> roster;
  std::set<std::string> ids;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    const auto cell = [&](int c) {
      return c >= 0 && size_t(c) < row.size() ? printable(row[size_t(c)]) : std::string();
    };
    RosterLearner learner{cell(id), cell(name), cell(email)};
    const std::string where = "--roster " + file.string() + ": line " + std::to_string(r + 1);
    if (learner.id.empty() || learner.name.empty())
      throw ConfigError(where + ": a learner needs an id and a name");
    if (!ids.insert(learner.id).second)
      throw ConfigError(where + ": the id " + learner.id + " is there twice");
    roster.push_back(std::move(learner));
  }
  return roster;
}

void flag_outliers(ClassGrade& grade) {
  // Per lab, figure and hardware: each learner's figure against the median of the others'.
  std::map<std::tuple<std::string, std::string, std::string>,
           std::vector<std::pair<size_t, double>>>
      groups;
  for (size_t i = 0; i < grade.rows.size(); ++i) {
    const ClassRow& row = grade.rows[i];
    const std::string hardware = row.gpu.empty() ? row.cpu : row.gpu;
    if (hardware.empty()) continue;
    for (const auto& [name, value] : row.figures)
      if (std::isfinite(value) && value > 0)
        groups[{row.lab, name, hardware}].emplace_back(i, value);
  }
  for (const auto& [key, figures] : groups) {
    if (figures.size() < kOutlierPeers + 1) continue;
    for (const auto& [i, value] : figures) {
      std::vector<double> others;
      for (const auto& [j, v] : figures)
        if (j != i) others.push_back(v);
      std::sort(others.begin(), others.end());
      const size_t n = others.size();
      const double median = n % 2 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
      if (!(value > median * kOutlierRatio || value * kOutlierRatio < median)) continue;
      char text[512];
      std::snprintf(text, sizeof text,
                    "%s: %.4g is %.1f× the median of the %zu others on %s (%.4g): far outside the "
                    "class on the same hardware; look at its runs",
                    std::get<1>(key).c_str(), value, value / median, n, std::get<2>(key).c_str(),
                    median);
      grade.rows[i].flagged_runs.push_back(text);
    }
  }
}

void flag_against_references(ClassGrade& grade, const std::vector<RunData>& references) {
  const std::string suffix = " images/s";
  for (ClassRow& row : grade.rows) {
    if (row.gpu.empty()) continue;
    for (const auto& [name, value] : row.figures) {
      if (!name.ends_with(suffix) || !std::isfinite(value) || value <= 0) continue;
      const std::string experiment = name.substr(0, name.size() - suffix.size());
      for (const RunData& reference : references) {
        const std::string where = recorded_on(reference);  // "NVIDIA H100 80GB HBM3, 2026-11-27"
        if (reference.name() != lab_run_name(experiment, row.lab) ||
            where.substr(0, where.rfind(", ")) != row.gpu)
          continue;
        const double shipped = run_images_per_second(reference);
        if (!(shipped > 0) || !(value > shipped * kOutlierRatio || value * kOutlierRatio < shipped))
          continue;
        char text[512];
        std::snprintf(text, sizeof text,
                      "%s: %.4g is %.2f× the %.4g of the reference run that ships with gpulab, "
                      "recorded on %s: far from what this GPU gave there; look at its runs",
                      name.c_str(), value, value / shipped, shipped, where.c_str());
        row.flagged_runs.push_back(text);
      }
    }
  }
}

std::vector<fs::path> find_hand_ins(const std::vector<fs::path>& paths, const fs::path& skip) {
  std::vector<fs::path> found;
  std::error_code error;
  const auto skipped = [&](const fs::path& p) {
    return !skip.empty() && fs::equivalent(p, skip, error);
  };
  for (const fs::path& path : paths) {
    if (!fs::is_directory(path, error) || is_hand_in_folder(path)) {
      found.push_back(path);  // a hand-in, a zip, or what is neither: its row says so
      continue;
    }
    for (const fs::path& entry : sorted_entries(path)) {
      if (skipped(entry)) continue;
      if (is_zip(entry) && !fs::is_directory(entry, error)) {
        found.push_back(entry);  // a FIFO or device named .zip too: its row says what it is
      } else if (fs::is_directory(entry, error)) {
        if (is_hand_in_folder(entry)) {
          found.push_back(entry);
          continue;
        }
        // A course platform's folder per submission, holding the learner's zip or folder.
        size_t inside = 0;
        for (const fs::path& deeper : sorted_entries(entry))
          if ((fs::is_regular_file(deeper, error) && is_zip(deeper)) ||
              (fs::is_directory(deeper, error) && is_hand_in_folder(deeper))) {
            found.push_back(deeper);
            ++inside;
          }
        if (!inside) found.push_back(entry);  // graded as "holds no hand-in"
      }
    }
  }
  return found;
}

fs::path open_hand_in(const fs::path& path, const fs::path& work, const ZipLimits& limits,
                      std::string* problem) {
  std::error_code error;
  if (fs::is_regular_file(path, error) && is_zip(path)) {
    fs::remove_all(work, error);
    const std::string name = printable(path.filename().string());
    const std::string refused = unpack_hand_in_zip(path, work, limits);
    const fs::path dir = refused.empty() ? hand_in_in(work) : fs::path();
    if (dir.empty()) {
      *problem = name + ": " +
                 (!refused.empty() ? printable(refused)
                                   : "holds no hand-in: no manifest.json at its top or in one "
                                     "folder there (as gpulab-cli lab hand-in --zip packs it)");
      fs::remove_all(work, error);
    }
    return dir;
  }
  if (!fs::is_directory(path, error)) {
    *problem = printable(path.string()) +
               ": neither a hand-in folder nor a .zip; give hand-ins as gpulab-cli lab hand-in "
               "writes them";
    return {};
  }
  if (!is_hand_in_folder(path)) {
    *problem = printable(path.string()) + ": holds no hand-in (no manifest.json, no .zip)";
    return {};
  }
  return path;
}

ClassRow grade_hand_in(const fs::path& path, const fs::path& work, const GradeOptions& options) {
  ClassRow row;
  row.source = printable(path.string());
  row.learner = printable((is_zip(path) ? path.stem() : path.filename()).string());
  platform_folder(path, &row.platform_name, &row.platform_id);
  if (const std::string what = special_file(path); !what.empty()) {
    row.no_hand_in = true;
    row.problems.push_back(row.source + ": " + what +
                           ", not a hand-in: nothing was read from it; give hand-in folders or "
                           ".zip files as gpulab-cli lab hand-in writes them");
    return row;
  }
  std::string problem;
  const fs::path dir = open_hand_in(path, work, options.zip_limits, &problem);
  if (dir.empty()) {
    row.problems.push_back(problem);
    return row;
  }
  // Where a problem's file is: for a zip, inside its top folder.
  const std::string prefix =
      dir == path || dir == work ? "" : printable(dir.filename().string()) + "/";
  VerifyOptions verify;
  verify.lab = options.lab;
  verify.replay_steps = options.replay_steps;
  verify.data_dir = options.data_dir;
  HandInVerdict verdict;
  try {
    verdict = verify_hand_in(dir, verify, options.control);
  } catch (const std::exception& e) {  // MNIST missing for a replay, a file that vanished
    row.problems.push_back(printable(e.what()));
  }
  for (const HandInProblem& p : verdict.problems)
    row.problems.push_back(printable(prefix + p.file + ": " + p.message));
  row.lab_checked = verdict.lab_checked;
  row.rubric = verdict.rubric;
  row.lab_quiz_questions = verdict.lab_quiz_questions;
  row.lab_written_questions = verdict.lab_written_questions;
  read_facts(row, dir);
  row.figures = key_figures(verdict, row.flagged_runs);
  row.flagged_runs.insert(row.flagged_runs.end(), verdict.flags.begin(), verdict.flags.end());
  std::error_code error;
  if (dir != path) fs::remove_all(work, error);
  return row;
}

ClassGrade grade_class(const std::vector<fs::path>& found, const fs::path& work,
                       const GradeOptions& options,
                       const std::function<void(size_t, size_t)>& progress) {
  std::vector<ClassRow> all;
  for (size_t i = 0; i < found.size(); ++i) {
    all.push_back(grade_hand_in(found[i], work / ("hand-in-" + std::to_string(i)), options));
    if (options.control && options.control->cancel.load())
      throw GradingStopped(std::string("grading stopped by ") +
                           (options.control->cancelled_by.load()
                                ? options.control->cancelled_by.load()
                                : "a request") +
                           " after " + std::to_string(i + 1) + " of " +
                           std::to_string(found.size()) + " hand-ins; nothing was written");
    if (progress) progress(i + 1, found.size());
  }
  if (!options.roster.empty()) match_roster(all, options);
  // The last hand-in of a learner per lab counts, where the same person handed in again; two
  // hand-ins claiming one learner from different people both stay, each saying so. A row without
  // a learner or lab stands alone.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> claims;
  for (size_t i = 0; i < all.size(); ++i)
    if (!all[i].lab.empty()) claims[{learner_key(all[i]), all[i].lab}].push_back(i);
  std::vector<bool> counts(all.size(), true);
  std::vector<bool> again(all.size(), false);  // a hand-in found before in another place
  for (const auto& [key, rows] : claims) {
    // Each submitter's last hand-in; the earlier ones listed as replaced.
    std::vector<size_t> last;
    std::map<size_t, std::vector<std::string>> places;  // a hand-in found more than once
    for (size_t i : rows) {
      const auto same = std::find_if(last.begin(), last.end(),
                                     [&](size_t j) { return same_submitter(all[i], all[j]); });
      if (same == last.end()) {
        last.push_back(i);
      } else if (!all[i].submitted.empty() && all[i].submitted == all[*same].submitted) {
        // One hand-in in two places, not a second hand-in: the zip `lab hand-in --zip` packed
        // beside its folder, or a copy under another name, which the row says with both places
        // (it replaced the other quietly).
        std::vector<std::string>& seen = places[*same];
        if (seen.empty()) seen.push_back(all[*same].source);
        const auto zip = [](const std::string& p) { return fs::path(p).extension() == ".zip"; };
        const bool packed =
            std::none_of(seen.begin(), seen.end(),
                         [&](const std::string& p) { return zip(p) == zip(all[i].source); }) &&
            std::any_of(seen.begin(), seen.end(), [&](const std::string& p) {
              return fs::path(p).parent_path() == fs::path(all[i].source).parent_path();
            });
        if (!packed)
          all[*same].problems.push_back("the same hand-in of " + all[i].learner + " for " +
                                        all[i].lab + " (handed in " + when(all[i].submitted) +
                                        ") is in " + seen.front() + " and in " + all[i].source +
                                        ": one is a copy of the other; find out whose each is");
        seen.push_back(all[i].source);
        counts[i] = false;
        again[i] = true;
      } else if (all[i].submitted >= all[*same].submitted) {
        counts[*same] = false;
        *same = i;
      } else {
        counts[i] = false;
      }
    }
    for (size_t a : last)
      for (size_t b : last)
        if (a != b)
          all[a].problems.push_back(
              "two hand-ins claim " + all[a].learner + " for " + all[a].lab + ": this one (" +
              all[a].source + ", handed in " + when(all[a].submitted) + ") and " + all[b].source +
              " (handed in " + when(all[b].submitted) + ", from another " +
              (all[a].platform_id.empty() ? "machine" : "course platform folder") +
              "); neither replaces the other: find out whose each is");
  }
  ClassGrade grade;
  for (const ClassRow& row : all) (row.no_hand_in ? grade.not_graded : grade.hand_ins) += 1;
  for (size_t i = 0; i < all.size(); ++i)
    if (!again[i]) (counts[i] ? grade.rows : grade.earlier).push_back(std::move(all[i]));
  // Two learners holding one run: flagged on both rows, each saying which hand-in came first and
  // which record of the run was made first.
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> holders;  // -> row, created
  for (size_t i = 0; i < grade.rows.size(); ++i) {
    const ClassRow& row = grade.rows[i];
    std::set<std::string> seen;
    for (size_t h = 0; h < row.run_hashes.size(); ++h)
      if (seen.insert(row.run_hashes[h]).second)
        holders[row.run_hashes[h]].emplace_back(
            i, h < row.run_created.size() ? row.run_created[h] : "");
  }
  std::set<std::pair<size_t, size_t>> said;
  for (const auto& [hash, rows] : holders)
    for (const auto& [a, created_a] : rows)
      for (const auto& [b, created_b] : rows) {
        ClassRow &row = grade.rows[a], &other = grade.rows[b];
        if (a == b || learner_key(row) == learner_key(other) || !said.insert({a, b}).second)
          continue;
        const bool first_in = row.submitted < other.submitted;
        std::string made = "their records of it were both made " + when(created_a);
        if (created_a != created_b)
          made = "the record in " +
                 (created_a < created_b ? std::string("this hand-in") : other.learner + "'s") +
                 " was made first (" + when(std::min(created_a, created_b)) + ", the other " +
                 when(std::max(created_a, created_b)) + ")";
        row.problems.push_back(
            "holds the same run as the hand-in of " + other.learner + " (" + other.source +
            "): one run handed in by two learners; " +
            (row.submitted == other.submitted
                 ? std::string("both handed in ") + when(row.submitted)
                 : (first_in ? std::string("this one") : other.learner + "'s") +
                       " was handed in first (" + when(std::min(row.submitted, other.submitted)) +
                       ", the other " + when(std::max(row.submitted, other.submitted)) + ")") +
            "; " + made);
      }
  // Roster learners without a hand-in of a lab graded: a row each, saying so.
  if (!options.roster.empty()) {
    std::set<std::string> labs;
    for (const ClassRow& row : grade.rows)
      if (!row.lab.empty()) labs.insert(row.lab);
    for (const std::string& lab : labs)
      for (const RosterLearner& learner : options.roster) {
        const bool handed_in =
            std::any_of(grade.rows.begin(), grade.rows.end(), [&](const ClassRow& r) {
              return (r.lab == lab || r.lab.empty()) && r.roster_id == learner.id;
            });
        if (handed_in) continue;
        ClassRow row;
        row.learner = learner.name;
        row.roster_id = learner.id;
        row.lab = lab;
        row.problems.push_back("no hand-in of " + lab + " found for this learner of " +
                               options.roster_file);
        grade.rows.push_back(std::move(row));
        ++grade.missing;
      }
  }
  flag_outliers(grade);
  flag_against_references(grade, load_reference_runs(reference_runs_dir()).runs);
  for (ClassRow& row : grade.rows) score(row);
  const auto order = [](const ClassRow& a, const ClassRow& b) {
    return std::tie(a.lab, a.learner, a.submitted) < std::tie(b.lab, b.learner, b.submitted);
  };
  std::stable_sort(grade.rows.begin(), grade.rows.end(), order);
  std::stable_sort(grade.earlier.begin(), grade.earlier.end(), order);
  return grade;
}

ClassGrade grade_into(const std::vector<fs::path>& paths, const fs::path& out,
                      const GradeOptions& options,
                      const std::function<void(size_t, size_t)>& progress) {
  std::error_code error;
  // class.csv and the charts added to a hand-in (lab grade H --out H, the class board on one
  // hand-in) would break its manifest: an input left as it was handed in.
  for (fs::path folder = fs::weakly_canonical(fs::absolute(out, error), error); !folder.empty();
       folder = folder.parent_path()) {
    if (is_hand_in_folder(folder))
      throw ConfigError(out.string() + ": is inside the hand-in " + folder.string() +
                        ", and files added there break it; give a folder outside every hand-in");
    if (folder == folder.root_path()) break;
  }
  fs::create_directories(out, error);
  remove_stale_work_folders(out);
  // Zips are unpacked here, inside `out`, and nowhere else; removed when grading is done.
  std::string work = (out / (kWorkPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (error || !mkdtemp(work.data()))
    throw ConfigError(out.string() + ": cannot be written (" +
                      (error ? error.message() : std::string("no folder can be made in it")) +
                      "); give a folder you can write");
  try {
    ClassGrade grade = grade_class(find_hand_ins(paths, out), work, options, progress);
    fs::remove_all(work, error);
    return grade;
  } catch (...) {
    fs::remove_all(work, error);
    throw;
  }
}

}  // namespace gpulab
