// Verifying a hand-in: its manifest, its answers, each of its runs, its tables and charts
// recomputed from those runs with the code that wrote them, and a replay of its CPU runs.
#include "engine/classkit/hand_in_verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "datasets/mnist.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/sha256.hpp"
#include "engine/base/text.hpp"
#include "engine/classkit/hand_in_agreement.hpp"
#include "engine/classkit/replay.hpp"
#include "engine/classkit/run_consistency.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_charts.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/markdown_images.hpp"
#include "engine/labs/matmul_chart.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A JSON file of the hand-in, or null with the problem said.
json read_json(const fs::path& dir, const std::string& name, std::vector<HandInProblem>& problems) {
  std::string text;
  try {
    if (!read_record_file(dir / name, kMaxRunJsonBytes, &text)) {
      problems.push_back({name, "missing; the hand-in is not whole"});
      return json();
    }
    json j = json::parse(text);
    if (!j.is_object()) problems.push_back({name, "not a JSON object"});
    return j.is_object() ? j : json();
  } catch (const json::exception& e) {
    problems.push_back({name, std::string("not JSON (") + e.what() + ")"});
  } catch (const RecordError& e) {
    problems.push_back({name, e.what()});
  }
  return json();
}

std::string text_at(const json& j, const char* key) {
  const auto value = j.find(key);
  return value != j.end() && value->is_string() ? value->get<std::string>() : "";
}

int choice_of(const QuizQuestion& q, const json& answer) {
  if (!answer.is_string()) return -1;
  for (size_t k = 0; k < q.choices.size(); ++k)
    if (q.choices[k].text == answer.get<std::string>()) return int(k);
  return -1;
}

// Two cells of a chart's CSV agree: the same text, or numbers within a part in a million (the
// CSV keeps nine digits, and another compiler or CPU may round the last of them otherwise).
bool same_point(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a.empty() || b.empty()) return false;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a);
  const double y = std::strtod(b.c_str(), &end_b);
  if (*end_a != '\0' || *end_b != '\0' || !std::isfinite(x) || !std::isfinite(y)) return false;
  return std::abs(x - y) <= 1e-6 * std::max(std::abs(x), std::abs(y));
}

class Verifier {
 public:
  Verifier(const fs::path& dir, const VerifyOptions& options, RunControl* control)
      : dir_(dir), options_(options), control_(control) {}
  HandInVerdict run();

 private:
  void problem(const std::string& file, const std::string& message) {
    verdict_.problems.push_back({file, message});
  }
  void check_files();
  void find_lab();
  void keep_scoring() {
    verdict_.rubric = lab_.rubric;
    verdict_.lab_quiz_questions = int(lab_.quiz.size());
    verdict_.lab_written_questions = int(lab_.questions.size());
  }
  void check_answers();
  void check_report_images();
  void check_runs();
  void note_version_difference(const std::string& name, const fs::path& folder);
  void check_shipped(const std::string& folder, const RunData& run,
                     const std::vector<std::string>& machine_gpus);
  void check_tables();
  void check_charts();
  void check_chart(const std::string& file, const std::string& expected);
  void replay();

  fs::path dir_;
  VerifyOptions options_;
  RunControl* control_;
  HandInVerdict verdict_;
  json manifest_;
  Lab lab_;
  bool have_lab_ = false;
  std::vector<LabRunResult> results_;
  struct HeldRun {
    std::string folder, experiment;
    RunData run;
    bool reference = false;
  };
  std::vector<HeldRun> runs_;
  // --lab is another version of the hand-in's lab: what its runs differ in is said in one line.
  bool other_version_ = false;
  std::vector<std::string> version_differences_;
};

HandInVerdict Verifier::run() {
  std::error_code error;
  if (!fs::is_directory(dir_, error)) {
    problem(dir_.string(), "not a folder; give a hand-in folder (it holds manifest.json)");
    return verdict_;
  }
  if (!fs::exists(dir_ / kManifestFile, error)) {
    problem(kManifestFile,
            "missing: this folder is no checkable hand-in; hand the lab in again with "
            "gpulab-cli lab hand-in LAB --learner NAME (or the window's Hand in…)");
    return verdict_;
  }
  manifest_ = read_json(dir_, kManifestFile, verdict_.problems);
  if (manifest_.is_null()) return verdict_;
  if (text_at(manifest_, "format") != kManifestFormat)
    problem(kManifestFile, "its \"format\" is not \"" + std::string(kManifestFormat) +
                               "\": not a manifest gpulab wrote");
  // Bounded where read: a name of megabytes would otherwise label every line and chart after.
  const std::string learner = text_at(manifest_, "learner");
  if (const std::string why = name_problem(learner); !why.empty())
    problem(kManifestFile, "its learner's name " + why);
  verdict_.learner = bounded_name(learner);
  verdict_.lab = bounded_name(text_at(manifest_, "lab"));
  if (verdict_.learner.empty())
    problem(kManifestFile, "names no learner; hand the lab in with --learner NAME");
  check_files();
  check_report_images();
  find_lab();
  check_answers();
  check_runs();
  if (have_lab_) check_tables();
  if (have_lab_) check_charts();
  for (HandInProblem& p :
       hand_in_disagreements(dir_, manifest_, hand_in_object(dir_ / "answers.json"),
                             hand_in_object(dir_ / "machine.json"), verdict_.tables))
    verdict_.problems.push_back(std::move(p));
  if (options_.replay_steps > 0) replay();
  verdict_.lab_checked = have_lab_;
  verdict_.notes.insert(
      verdict_.notes.begin(),
      "checked " + std::to_string(verdict_.files) + " files against manifest.json, " +
          std::to_string(verdict_.runs) + " runs against themselves" +
          (have_lab_ ? " and the lab's settings, " + std::to_string(verdict_.cells) +
                           " table cells and " + std::to_string(verdict_.points) +
                           " chart points recomputed from them"
                     : "") +
          (verdict_.replayed ? ", " + std::to_string(verdict_.replayed) + " CPU runs replayed"
                             : ""));
  return verdict_;
}

void Verifier::check_files() {
  const json files = manifest_.value("files", json::object());
  if (!files.is_object() || files.empty()) {
    problem(kManifestFile, "lists no files (\"files\"); the hand-in cannot be checked");
    return;
  }
  std::set<std::string> listed;
  for (const auto& [name, hash] : files.items()) {
    listed.insert(name);
    const fs::path relative = fs::path(name).lexically_normal();
    if (relative.is_absolute() || name.empty() || *relative.begin() == "..") {
      problem(kManifestFile, "lists \"" + name + "\", which is outside the hand-in");
      continue;
    }
    std::error_code error;
    const fs::file_status status = fs::symlink_status(dir_ / relative, error);
    if (!fs::exists(status)) {
      problem(name, "listed in manifest.json but missing");
      continue;
    }
    // gpulab writes no links into a hand-in: one here points at a file the hand-in does not hold.
    if (fs::is_symlink(status)) {
      problem(name, "a link, where the hand-in wrote a file: replace it by the file itself");
      continue;
    }
    ++verdict_.files;
    try {
      const std::string now = sha256_file(dir_ / relative);
      if (!hash.is_string() || now != hash.get<std::string>())
        problem(name, "changed after the hand-in was written: its SHA-256 is " + now +
                          ", manifest.json says " +
                          (hash.is_string() ? hash.get<std::string>() : hash.dump()));
    } catch (const RecordError& e) {
      problem(name, e.what());
    }
  }
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir_, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory(error) && !it->is_symlink(error)) continue;
    const std::string name = it->path().lexically_relative(dir_).generic_string();
    if (name != kManifestFile && !listed.count(name))
      problem(name, "not listed in manifest.json: added after the hand-in was written");
  }
}

void Verifier::find_lab() {
  const std::string recorded = text_at(manifest_, "lab_sha256");
  if (!options_.lab.empty()) {
    lab_ = load_lab(options_.lab);  // the instructor's own file: a problem there stops verify
    if (!lab_.ok())
      throw ConfigError("--lab " + options_.lab + ": " + lab_.problems.front().to_string());
    keep_scoring();
    if (lab_.sha256 != recorded) {
      problem(kManifestFile, "the lab's SHA-256 is " + recorded + ", but --lab " + options_.lab +
                                 " has " + lab_.sha256 +
                                 ": the hand-in was done from another version of the lab, or "
                                 "another lab");
      verdict_.notes.push_back("results not recomputed: the hand-in's lab is not --lab's");
      other_version_ = true;
      return;
    }
    have_lab_ = true;
    return;
  }
  const auto names = builtin_lab_names();
  const bool builtin = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    return fs::path(n).stem() == verdict_.lab;
  });
  if (builtin) {
    lab_ = load_lab(verdict_.lab);
    have_lab_ = lab_.sha256 == recorded;
    if (lab_.ok()) keep_scoring();
  }
  if (!have_lab_)
    verdict_.notes.push_back("results not recomputed and settings not checked: the lab \"" +
                             verdict_.lab +
                             "\" is not this gpulab's built-in lab of that name; give its file "
                             "with --lab FILE.md");
}

// README.md is shown by the class board: an image it names out of the hand-in (/dev/zero, a FIFO,
// ../..) is a problem, whatever the manifest says of the file.
void Verifier::check_report_images() {
  std::string text;
  try {
    if (!read_record_file(dir_ / "README.md", kMaxRunJsonBytes, &text)) return;  // said above
  } catch (const RecordError&) {
    return;  // said by check_files
  }
  for (const MarkdownImage& image : markdown_images(text))
    if (const std::string why = markdown_image_problem(image.target, dir_); !why.empty())
      problem("README.md", "line " + std::to_string(image.line) + ": the image \"" +
                               bounded_name(image.target) + "\" " + why);
}

void Verifier::check_answers() {
  const json answers = read_json(dir_, "answers.json", verdict_.problems);
  if (answers.is_null()) return;
  const std::string format = text_at(answers, "format");
  if (format != kHandInFormat)
    problem("answers.json", "its \"format\" is \"" + format + "\", not \"" + kHandInFormat +
                                "\": hand the lab in again with this gpulab");
  if (const std::string learner = bounded_name(text_at(answers, "learner"));
      learner != verdict_.learner)
    problem("answers.json",
            "names the learner \"" + learner + "\", manifest.json \"" + verdict_.learner + "\"");
  if (const std::string lab = bounded_name(text_at(answers, "lab")); lab != verdict_.lab)
    problem("answers.json",
            "is of the lab \"" + lab + "\", manifest.json of \"" + verdict_.lab + "\"");
  if (!have_lab_) return;
  const auto found = answers.find("answers");
  if (found == answers.end() || !found->is_array()) {
    problem("answers.json", "its \"answers\" is not a list of the quiz's " +
                                std::to_string(lab_.quiz.size()) +
                                " questions; hand the lab in again with this gpulab");
    return;
  }
  const json& list = *found;
  // Each of the lab's questions once, in the lab's order: a right answer listed twice would
  // otherwise count twice.
  if (list.size() != lab_.quiz.size())
    problem("answers.json", "lists " + std::to_string(list.size()) +
                                " answers; the lab's quiz has " + std::to_string(lab_.quiz.size()) +
                                " questions, each listed once, in order");
  int score = 0, first_score = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& entry = list[i];
    const std::string question = entry.is_object() ? text_at(entry, "question") : "";
    const auto q = std::find_if(lab_.quiz.begin(), lab_.quiz.end(),
                                [&](const QuizQuestion& x) { return x.question == question; });
    if (q == lab_.quiz.end()) {
      problem("answers.json", "the question \"" + question + "\" is not in the lab's quiz");
      continue;
    }
    if (size_t(q - lab_.quiz.begin()) != i) {
      problem("answers.json", "answer " + std::to_string(i + 1) + " is to \"" + question +
                                  "\", the lab's question " +
                                  std::to_string(q - lab_.quiz.begin() + 1) +
                                  "; each question is listed once, in the lab's order");
      continue;
    }
    const json answer = entry.value("answer", json());
    const int choice = choice_of(*q, answer);
    const bool right = choice >= 0 && grade(*q, choice).correct;
    if (!answer.is_null() && choice < 0)
      problem("answers.json",
              "the answer " + answer.dump() + " to \"" + question + "\" is not one of its choices");
    const json marked = entry.value("correct", json());
    if (!marked.is_boolean() || marked.get<bool>() != right)
      problem("answers.json",
              "the answer " + answer.dump() + " to \"" + question + "\" is marked " +
                  (marked.is_boolean() ? (right ? "wrong" : "right") : marked.dump()) +
                  ", but it is " + (right ? "right" : "wrong"));
    score += right;
    const json attempts = entry.value("attempts", json::array());
    if (!attempts.is_array()) {
      problem("answers.json", "\"" + question + "\": its \"attempts\" is " + attempts.dump() +
                                  ", not a list of attempts");
      continue;
    }
    for (const json& a : attempts)
      if (!a.is_object() || !a.value("answer", json()).is_string()) {
        problem("answers.json", "\"" + question + "\": the attempt " + a.dump() +
                                    " is not {\"answer\": TEXT, \"time\": ..., \"correct\": ...}");
        return;
      }
    if (!attempts.empty() && attempts.back().value("answer", json()) != answer)
      problem("answers.json", "\"" + question + "\": the last attempt is not the answer given");
    if (answer.is_null() != attempts.empty())
      problem("answers.json", "\"" + question + "\": its attempts and its answer disagree");
    if (lab_.quiz_attempts > 0 && int(attempts.size()) > lab_.quiz_attempts)
      problem("answers.json", "\"" + question + "\" has " + std::to_string(attempts.size()) +
                                  " attempts; the lab takes " + std::to_string(lab_.quiz_attempts));
    if (!attempts.empty()) {
      const int first = choice_of(*q, attempts.front().value("answer", json()));
      const bool first_right = first >= 0 && grade(*q, first).correct;
      first_score += first_right;
      if (entry.value("first_correct", json()) != json(first_right))
        problem("answers.json", "\"" + question + "\": the first attempt is marked " +
                                    (first_right ? "wrong" : "right") + ", but it is " +
                                    (first_right ? "right" : "wrong"));
    }
    std::string before;
    for (const json& a : attempts) {
      const std::string time = a.is_object() ? text_at(a, "time") : "";
      if (!time.empty() && !before.empty() && time < before)
        problem("answers.json", "\"" + question + "\": its attempts' times go backwards");
      if (!time.empty()) before = time;
    }
  }
  if (answers.value("score", json()) != json(score))
    problem("answers.json", "its score is " + answers.value("score", json()).dump() +
                                ", but its answers give " + std::to_string(score));
  if (answers.value("first_attempt_score", json()) != json(first_score))
    problem("answers.json", "its first-attempt score is " +
                                answers.value("first_attempt_score", json()).dump() +
                                ", but its attempts give " + std::to_string(first_score));
}

std::string join(const std::vector<std::string>& parts, const std::string& between) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : between) + part;
  return text;
}

// The GPU models machine.json names (none for a machine without one).
std::vector<std::string> machine_gpu_models(const json& machine) {
  std::vector<std::string> models;
  const json gpus = machine.is_object() ? machine.value("gpus", json::array()) : json::array();
  if (gpus.is_array())
    for (const json& gpu : gpus)
      if (gpu.is_object()) models.push_back(text_at(gpu, "name"));
  return models;
}

// The GPUs run.json's devices name.
std::vector<std::string> run_gpu_models(const RunData& run) {
  std::vector<std::string> models;
  const json devices = run.info.value("devices", json::array());
  if (devices.is_array())
    for (const json& d : devices)
      if (d.is_object() && text_at(d, "id").rfind("cuda:", 0) == 0)
        models.push_back(text_at(d, "name"));
  return models;
}

// A run of gpulab's shipped reference runs held where the hand-in does not mark it as one: named
// with where it was recorded and how it was recognised.
void Verifier::check_shipped(const std::string& folder, const RunData& run,
                             const std::vector<std::string>& machine_gpus) {
  if (const auto shipped = shipped_run_of(run, machine_gpus))
    problem(folder, "is " + shipped->text() + ", handed in as the learner's own run (" +
                        shipped->how +
                        "); a reference run is shown only under reference-runs/, marked "
                        "\"reference\": true in manifest.json");
}

// One experiment's run against --lab's version of it: the experiment --lab lacks, or the first
// setting that differs.
void Verifier::note_version_difference(const std::string& name, const fs::path& folder) {
  const LabExperiment* e = lab_.experiment(name);
  if (!e) {
    version_differences_.push_back("\"" + bounded_name(name, 80) + "\" is no experiment of it");
    return;
  }
  try {
    const std::vector<std::string> differences = setting_differences(load_run(folder), *e);
    if (!differences.empty())
      version_differences_.push_back(
          "\"" + e->name + "\": " + differences.front() +
          (differences.size() > 1
               ? " (and " + std::to_string(differences.size() - 1) + " more settings)"
               : ""));
  } catch (const RecordError&) {  // said where the run is read
  }
}

void Verifier::check_runs() {
  const json experiments = manifest_.value("experiments", json::array());
  const json machine = read_json(dir_, "machine.json", verdict_.problems);
  const std::string host = machine.is_object() ? text_at(machine, "host") : "";
  const std::vector<std::string> machine_gpus = machine_gpu_models(machine);
  std::set<std::string> seen_folders;
  std::map<std::string, std::string> by_metrics;  // metrics.csv's SHA-256 -> folder
  for (const json& entry : experiments) {
    if (!entry.is_object()) continue;
    const std::string name = text_at(entry, "experiment");
    const std::string folder = text_at(entry, "run");
    const LabExperiment* e = have_lab_ ? lab_.experiment(name) : nullptr;
    if (other_version_ && !folder.empty() && !entry.value("reference", false))
      note_version_difference(name, dir_ / folder);
    if (have_lab_ && !e) {
      problem(kManifestFile, "names the experiment \"" + name + "\", which the lab has not");
      continue;
    }
    LabRunResult result;
    result.experiment = name;
    result.skipped = text_at(entry, "skipped");
    if (const json matmul = entry.value("matmul", json()); matmul.is_array()) {
      for (const json& t : matmul)
        result.matmul.push_back(
            {t.value("size", 0), t.value("ms", 0.0), t.value("ms_with_copies", 0.0)});
      if (entry.contains("outside_load")) add_bench_load(result, entry["outside_load"]);
      // A benchmark's reference timings, recorded on a GPU elsewhere: its rows say so, and they
      // are none of the learner's figures.
      if (entry.value("reference", false) && folder.empty()) {
        result.recorded_on = text_at(entry, "recorded_on");
        result.device = text_at(entry, "device");
        verdict_.reference_experiments.push_back(name);
      }
    }
    if (!folder.empty()) {
      RunData run;
      try {
        run = load_run(dir_ / folder);
      } catch (const RecordError& e) {
        problem(folder, std::string("cannot be read: ") + e.what());
        continue;
      }
      ++verdict_.runs;
      for (const auto& [file, message] : run_inconsistencies(run))
        problem(folder + "/" + file, message);
      const bool reference = entry.value("reference", false);
      seen_folders.insert(fs::path(folder).lexically_normal().generic_string());
      if (!reference) {
        check_shipped(folder, run, machine_gpus);
        // The README's machine is machine.json's: a GPU run of the learner's own on a GPU that
        // machine names not is a run from elsewhere.
        for (const std::string& gpu : run_gpu_models(run))
          if (machine.is_object() &&
              std::find(machine_gpus.begin(), machine_gpus.end(), gpu) == machine_gpus.end())
            problem(folder + "/run.json",
                    "recorded on the GPU \"" + gpu +
                        "\", but machine.json (and README.md's "
                        "machine) names " +
                        (machine_gpus.empty() ? std::string("no GPU")
                                              : "only " + join(machine_gpus, ", ")) +
                        ": a run from another machine");
      }
      if (reference) verdict_.reference_experiments.push_back(name);
      // A reference run ships with gpulab and fills no figure of the learner's: where it was
      // recorded otherwise than the lab says, that is said, not held against the hand-in.
      for (const std::string& difference :
           e ? setting_differences(run, *e) : std::vector<std::string>{}) {
        if (reference)
          verdict_.notes.push_back(folder + "/run.json (a reference run): " + difference);
        else
          problem(folder + "/run.json", difference);
      }
      const std::string run_host = run.info.value("process", json::object()).value("host", "");
      if (!reference && !host.empty() && !run_host.empty() && run_host != host)
        problem(folder + "/run.json", "recorded on the host \"" + run_host +
                                          "\", but machine.json says the hand-in is from \"" +
                                          host + "\": a run from another machine");
      try {
        const std::string metrics = sha256_file(dir_ / folder / "metrics.csv");
        if (const auto seen = by_metrics.find(metrics); seen != by_metrics.end())
          problem(folder, "holds the same run as " + seen->second +
                              " (their metrics.csv are identical): one run claimed by two "
                              "experiments");
        else
          by_metrics[metrics] = folder;
      } catch (const RecordError&) {  // no metrics.csv: said by the manifest's check
      }
      const std::string created = run.info.value("created", std::string());
      const std::string handed_in = text_at(manifest_, "handed_in");
      if (!reference && !created.empty() && !handed_in.empty() && created > handed_in)
        problem(folder + "/run.json",
                "created " + created + ", after the hand-in was written (" + handed_in + ")");
      const std::string day = reference ? recorded_on(run) : "";
      result = lab_run_result(name, run);
      result.recorded_on = day;
      run.recorded_on = day;  // marked so in the charts, as the hand-in drew them
      runs_.push_back({folder, name, std::move(run), reference});
    }
    results_.push_back(std::move(result));
  }
  if (other_version_)
    problem(kManifestFile,
            "what differs from --lab's version: " +
                (version_differences_.empty()
                     ? std::string("not its experiments' models or settings (the text, quiz, "
                                   "tables or step counts differ)")
                     : join(version_differences_, "; ")));
  // Runs held anywhere else in the hand-in (a folder the manifest gives no experiment): a shipped
  // one there is handed in unmarked too.
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir_, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->path().filename() != "run.json" || it->is_symlink(error)) continue;
    const std::string folder = it->path().parent_path().lexically_relative(dir_).generic_string();
    if (seen_folders.count(folder)) continue;
    try {
      check_shipped(folder, load_run(it->path().parent_path()), machine_gpus);
    } catch (const RecordError&) {  // not a run gpulab can read: the manifest's check says
    }
  }
}

void Verifier::check_tables() {
  for (size_t t = 0; t < lab_.tables.size(); ++t) {
    const std::string file = hand_in_table_file(t, "csv");
    const LabResultsTable& table =
        verdict_.tables.emplace_back(lab_results_table(lab_, lab_.tables[t], results_));
    std::string text;
    try {
      if (!read_record_file(dir_ / file, kMaxRunJsonBytes, &text)) {
        problem(file, "missing; the lab has this table");
        continue;
      }
    } catch (const RecordError& e) {
      problem(file, e.what());
      continue;
    }
    const auto expected = csv_rows(to_csv(table));
    const auto found = csv_rows(text);
    if (found.size() != expected.size()) {
      problem(file, "has " + std::to_string(found.size()) +
                        " lines; the runs in the hand-in give " + std::to_string(expected.size()));
      continue;
    }
    for (size_t r = 0; r < expected.size(); ++r)
      for (size_t c = 0; c < expected[r].size(); ++c) {
        ++verdict_.cells;
        const std::string cell = c < found[r].size() ? found[r][c] : "";
        if (cell == expected[r][c]) continue;
        const std::string where =
            r == 0 ? "its header, column " + std::to_string(c + 1)
                   : "row \"" + expected[r][0] + "\", column \"" + expected[0][c] + "\"";
        problem(file, where + " says \"" + cell + "\", but the runs in the hand-in give \"" +
                          expected[r][c] + "\"");
      }
  }
}

void Verifier::check_charts() {
  for (size_t c = 0; c < lab_.charts.size(); ++c) {
    std::vector<const RunData*> runs;
    for (size_t i : lab_chart_results(lab_, c, results_)) {
      const auto held = std::find_if(runs_.begin(), runs_.end(), [&](const HeldRun& r) {
        return r.experiment == results_[i].experiment;
      });
      if (held != runs_.end()) runs.push_back(&held->run);
    }
    const std::string file = hand_in_chart_file(lab_, c, "csv");
    check_chart(file, runs.empty() ? "" : chart_points_csv(lab_chart(lab_, c, runs)));
  }
  const Chart matmul = matmul_chart(lab_, results_);
  check_chart(kMatmulChartStem + std::string(".csv"),
              matmul.runs.empty() ? "" : chart_points_csv(matmul));
}

// `expected` empty: the runs draw no such chart, and the hand-in should hold no points for it.
void Verifier::check_chart(const std::string& file, const std::string& expected) {
  std::string text;
  try {
    if (!read_record_file(dir_ / file, kMaxRunJsonBytes, &text)) {
      if (!expected.empty())
        problem(file,
                "missing; the runs in the hand-in draw this chart, and its points are kept "
                "beside its picture");
      return;
    }
  } catch (const RecordError& e) {
    problem(file, e.what());
    return;
  }
  if (expected.empty()) {
    problem(file, "points of a chart the runs in the hand-in do not draw");
    return;
  }
  const auto want = csv_rows(expected);
  const auto found = csv_rows(text);
  if (found.size() != want.size()) {
    problem(file, "has " + std::to_string(found.size()) + " lines; the runs in the hand-in give " +
                      std::to_string(want.size()));
    return;
  }
  // A point is a row: its panel, run, series and x say which. Three are named, then a count.
  int wrong = 0;
  for (size_t r = 0; r < want.size(); ++r) {
    verdict_.points += r > 0;
    for (size_t c = 0; c < want[r].size(); ++c) {
      const std::string cell = c < found[r].size() ? found[r][c] : "";
      if (same_point(cell, want[r][c])) continue;
      if (++wrong <= 3) {
        const auto& row = want[r];
        const std::string where =
            r == 0 ? "its header, column " + std::to_string(c + 1)
                   : "line " + std::to_string(r + 1) + " (" + row[0] + ", " + row[1] + ", " +
                         row[2] + (row.size() > 4 && !row[4].empty() ? " at " + row[4] : "") +
                         "), column \"" + want[0][c] + "\"";
        problem(file, where + " says \"" + cell + "\", but the runs in the hand-in give \"" +
                          want[r][c] + "\"");
      }
      break;  // one problem a point
    }
  }
  if (wrong > 3)
    problem(file, std::to_string(wrong - 3) + " more points disagree with the runs in the hand-in");
}

void Verifier::replay() {
  std::optional<data::MnistData> mnist;
  RunControl own;
  RunControl& control = control_ ? *control_ : own;
  const json machine = read_json(dir_, "machine.json", verdict_.problems);
  const std::string blas =
      machine.is_object() ? machine.value("cpu", json::object()).value("blas", "") : "";
  const std::string cpu =
      machine.is_object() ? machine.value("cpu", json::object()).value("model", "") : "";
  for (const HeldRun& held : runs_) {
    if (held.reference || control.cancel.load()) continue;
    if (held.run.info.value("config", json::object()).value("device", "cpu") != "cpu") {
      verdict_.notes.push_back(held.folder + ": not replayed: not a CPU run");
      continue;
    }
    if (!mnist) mnist = data::load_mnist(data::default_data_dir(options_.data_dir));
    try {
      const ReplayVerdict v =
          replay_run(held.run, options_.replay_steps, *mnist, blas, control, cpu);
      ++verdict_.replayed;
      verdict_.notes.push_back(held.folder + ": replay pace: " + v.pace);
      if (!v.pace_flag.empty()) verdict_.flags.push_back(held.folder + ": " + v.pace_flag);
      if (v.agrees)
        verdict_.notes.push_back(held.folder + ": replay " + v.text);
      else
        problem(held.folder + "/metrics.csv", "replay " + v.text);
    } catch (const ConfigError& e) {
      problem(held.folder, std::string("cannot be replayed: ") + e.what());
    }
  }
}

}  // namespace

HandInVerdict verify_hand_in(const fs::path& dir, const VerifyOptions& options,
                             RunControl* control) {
  return Verifier(dir, options, control).run();
}

json hand_in_object(const fs::path& file) {
  try {
    std::string text;
    if (!read_record_file(file, kMaxRunJsonBytes, &text)) return json();
    json j = json::parse(text);
    return j.is_object() ? j : json();
  } catch (const std::exception&) {
    return json();
  }
}

}  // namespace gpulab
