// Grading a class: finding its hand-ins, verifying each (a zip unpacked first, under the work
// folder), reading what the report lists of it, and keeping each learner's last hand-in.
#include "engine/classkit/class_grade.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "engine/base/errors.hpp"
#include "engine/base/sha256.hpp"
#include "engine/base/text.hpp"
#include "engine/classkit/hand_in_verify.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/records/record_reader.hpp"

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

// A JSON object of the hand-in, or null where it is missing or damaged (verify says which).
json object_in(const fs::path& file) {
  try {
    std::string text;
    if (!read_record_file(file, kMaxRunJsonBytes, &text)) return json();
    json j = json::parse(text);
    return j.is_object() ? j : json();
  } catch (const std::exception&) {
    return json();
  }
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
  const json manifest = object_in(dir / kManifestFile);
  // Bounded where read: a learner's name of megabytes made the class chart take minutes.
  if (const std::string learner = string_in(manifest, "learner"); !learner.empty())
    row.learner = bounded_name(learner);
  row.lab = bounded_name(string_in(manifest, "lab"));
  row.submitted = string_in(manifest, "handed_in");
  const json answers = object_in(dir / "answers.json");
  if (!answers.is_null()) {
    row.score = int_in(answers, "score", -1);
    row.first_attempt_score = int_in(answers, "first_attempt_score", -1);
    const json questions = answers.value("answers", json::array());
    row.quiz_questions = questions.is_array() ? int(questions.size()) : 0;
    row.written_answered = int_in(answers, "written_answered", 0);
    const json written = answers.value("written", json::array());
    row.written_questions = written.is_array() ? int(written.size()) : 0;
  }
  const json machine = object_in(dir / "machine.json");
  if (machine.is_object()) {
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
      for (const char* file : {"run.json", "metrics.csv"}) try {
          row.run_hashes.push_back(sha256_file(dir / folder / file));
        } catch (const RecordError&) {  // missing: verify names it
        }
    }
}

}  // namespace

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
      if (fs::is_regular_file(entry, error) && is_zip(entry)) {
        found.push_back(entry);
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
    verdict = verify_hand_in(dir, verify);
  } catch (const std::exception& e) {  // MNIST missing for a replay, a file that vanished
    row.problems.push_back(printable(e.what()));
  }
  for (const HandInProblem& p : verdict.problems)
    row.problems.push_back(printable(prefix + p.file + ": " + p.message));
  read_facts(row, dir);
  row.figures = key_figures(verdict, row.flagged_runs);
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
    if (progress) progress(i + 1, found.size());
  }
  // The last hand-in of a learner per lab counts; a row without a learner or lab stands alone.
  std::map<std::pair<std::string, std::string>, size_t> last;
  std::vector<bool> counts(all.size(), true);
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].lab.empty()) continue;
    const auto key = std::make_pair(all[i].learner, all[i].lab);
    const auto seen = last.find(key);
    if (seen == last.end()) {
      last[key] = i;
    } else if (all[i].submitted >= all[seen->second].submitted) {
      counts[seen->second] = false;
      seen->second = i;
    } else {
      counts[i] = false;
    }
  }
  ClassGrade grade;
  grade.hand_ins = all.size();
  for (size_t i = 0; i < all.size(); ++i)
    (counts[i] ? grade.rows : grade.earlier).push_back(std::move(all[i]));
  // Two learners holding one run: flagged on both rows.
  std::map<std::string, std::vector<size_t>> holders;
  for (size_t i = 0; i < grade.rows.size(); ++i)
    for (const std::string& hash :
         std::set<std::string>(grade.rows[i].run_hashes.begin(), grade.rows[i].run_hashes.end()))
      holders[hash].push_back(i);
  std::set<std::pair<size_t, size_t>> said;
  for (const auto& [hash, rows] : holders)
    for (size_t a : rows)
      for (size_t b : rows)
        if (a != b && grade.rows[a].learner != grade.rows[b].learner && said.insert({a, b}).second)
          grade.rows[a].problems.push_back("holds the same run as the hand-in of " +
                                           grade.rows[b].learner + " (" + grade.rows[b].source +
                                           "): one run handed in by two learners");
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
  // Zips are unpacked here, inside `out`, and nowhere else; removed when grading is done.
  std::string work = (out / ".grading-XXXXXX").string();
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
