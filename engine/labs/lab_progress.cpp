// The labs' progress file: reading it, setting a damaged one aside, writing it; and finding in it
// what a learner ran and answered.
#include "engine/labs/lab_progress.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "engine/labs/reference_runs.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

LabProgress from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("it is not a JSON object");
  LabProgress progress;
  progress.files = j.value("files", std::vector<std::string>{});
  // Named, not iterated as temporaries: a range-for over value(...).items() reads a json that is
  // already gone.
  const json labs = j.value("labs", json::object());
  for (const auto& [source, lab] : labs.items()) {
    LabRecord& record = progress.labs[source];
    record.runs = lab.value("runs", std::map<std::string, std::string>{});
    record.answers = lab.value("answers", std::map<std::string, std::string>{});
    record.written = lab.value("written", std::map<std::string, std::string>{});
    const json attempts = lab.value("attempts", json::object());
    for (const auto& [question, list] : attempts.items())
      for (const json& a : list)
        record.attempts[question].push_back(
            {a.at("answer").get<std::string>(), a.value("time", std::string())});
    const json matmul = lab.value("matmul", json::object());
    for (const auto& [experiment, timings] : matmul.items())
      for (const json& t : timings)
        record.matmul[experiment].push_back({t.at("size").get<int>(), t.at("ms").get<double>(),
                                             t.at("ms_with_copies").get<double>()});
    const json loads = lab.value("matmul_outside_load", json::object());
    for (const auto& [experiment, load] : loads.items()) record.matmul_load[experiment] = load;
  }
  return progress;
}

json to_json(const LabProgress& progress) {
  json labs = json::object();
  for (const auto& [source, record] : progress.labs) {
    json matmul = json::object();
    for (const auto& [experiment, timings] : record.matmul) {
      json rows = json::array();
      for (const MatmulTiming& t : timings)
        rows.push_back({{"size", t.size}, {"ms", t.ms}, {"ms_with_copies", t.ms_with_copies}});
      matmul[experiment] = rows;
    }
    json lab = json::object();
    lab["runs"] = record.runs;
    lab["answers"] = record.answers;
    json attempts = json::object();
    for (const auto& [question, list] : record.attempts) {
      json rows = json::array();
      for (const QuizAttempt& a : list) rows.push_back({{"answer", a.answer}, {"time", a.time}});
      attempts[question] = rows;
    }
    if (!record.attempts.empty()) lab["attempts"] = attempts;
    if (!record.written.empty()) lab["written"] = record.written;
    lab["matmul"] = matmul;
    if (!record.matmul_load.empty()) lab["matmul_outside_load"] = record.matmul_load;
    labs[source] = lab;
  }
  json j = json::object();
  j["labs"] = labs;
  j["files"] = progress.files;
  return j;
}

// ".gpulab-labs.json.damaged", then ".damaged-2", ... : never over an earlier damaged file.
fs::path aside_path(const fs::path& path) {
  fs::path aside = path.string() + ".damaged";
  std::error_code error;
  for (int n = 2; fs::exists(fs::symlink_status(aside, error)); ++n)
    aside = path.string() + ".damaged-" + std::to_string(n);
  return aside;
}

}  // namespace

fs::path lab_progress_path(const fs::path& runs_dir) { return runs_dir / ".gpulab-labs.json"; }

LabProgress load_lab_progress(const fs::path& runs_dir, std::string* problem) {
  const fs::path path = lab_progress_path(runs_dir);
  std::string text;
  try {
    // Read as a record's files are: a FIFO, a folder or a link loop here is passed over.
    if (!read_record_file(path, kMaxRunJsonBytes, &text)) return {};
    return from_json(json::parse(text));
  } catch (const std::exception& e) {
    const fs::path aside = aside_path(path);
    std::error_code error;
    fs::rename(path, aside, error);
    if (problem)
      *problem = path.string() + " could not be read (" + e.what() + "); " +
                 (error ? "it is left as it is (it could not be moved: " + error.message() + ")"
                        : "it was moved to " + aside.filename().string()) +
                 ", and the labs start with no progress";
    return {};
  }
}

bool save_lab_progress(const fs::path& runs_dir, const LabProgress& progress,
                       std::string* problem) {
  try {
    fs::create_directories(runs_dir);
    write_file_atomically(lab_progress_path(runs_dir), to_json(progress).dump(2) + "\n");
  } catch (const std::exception& e) {
    if (problem) *problem = e.what();
    return false;
  }
  return true;
}

std::vector<int> quiz_answers(const Lab& lab, const LabRecord* record) {
  std::vector<int> answers;
  for (const QuizQuestion& q : lab.quiz) {
    int choice = -1;
    if (record)
      if (const auto a = record->answers.find(q.question); a != record->answers.end())
        for (size_t k = 0; k < q.choices.size(); ++k)
          if (q.choices[k].text == a->second) choice = int(k);
    answers.push_back(choice);
  }
  return answers;
}

std::vector<QuizAttempt> quiz_attempts(const LabRecord* record, const std::string& question) {
  if (!record) return {};
  if (const auto a = record->attempts.find(question);
      a != record->attempts.end() && !a->second.empty())
    return a->second;
  if (const auto a = record->answers.find(question); a != record->answers.end())
    return {{a->second, ""}};
  return {};
}

int quiz_attempts_left(const Lab& lab, const LabRecord* record, const std::string& question) {
  if (lab.quiz_attempts <= 0) return -1;
  return std::max(0, lab.quiz_attempts - int(quiz_attempts(record, question).size()));
}

bool record_quiz_answer(const Lab& lab, LabRecord& record, const std::string& question,
                        const std::string& answer, const std::string& time) {
  if (quiz_attempts_left(lab, &record, question) == 0) return false;
  // An answer kept before attempts were becomes the first attempt, so none is lost.
  std::vector<QuizAttempt> attempts = quiz_attempts(&record, question);
  attempts.push_back({answer, time});
  record.attempts[question] = std::move(attempts);
  record.answers[question] = answer;
  return true;
}

std::string lab_run_name(const Lab& lab, const LabExperiment& e) {
  return lab_run_name(e.name, lab.name);
}
std::string lab_run_name(const std::string& experiment, const std::string& lab) {
  return experiment + " · " + lab;
}

int experiment_run(const Lab& lab, const LabExperiment& e, const LabRecord* record,
                   const std::vector<const RunData*>& runs) {
  const std::string name = lab_run_name(lab, e);
  if (record)
    if (const auto d = record->runs.find(e.name); d != record->runs.end()) {
      // The folder the record names, however either path is spelt ("runs/../runs/x", a
      // relative --runs-dir): compared as canonical paths.
      std::error_code error;  // a path that cannot be resolved is compared as written
      const auto canonical = [&](const fs::path& p) {
        fs::path c = fs::weakly_canonical(p, error);
        return error ? p.lexically_normal() : c;
      };
      for (size_t i = 0; i < runs.size(); ++i)  // as written first: no file system calls
        if (runs[i]->dir.string() == d->second) return int(i);
      const fs::path recorded = canonical(d->second);
      for (size_t i = 0; i < runs.size(); ++i)
        if (canonical(runs[i]->dir) == recorded) return int(i);
      // The runs folder copied or moved elsewhere: the run whose folder has the recorded
      // folder's name and the experiment's run name.
      const fs::path folder = fs::path(d->second).lexically_normal().filename();
      for (size_t i = 0; i < runs.size(); ++i)
        if (runs[i]->dir.lexically_normal().filename() == folder && runs[i]->name() == name)
          return int(i);
    }
  // No record, or its run is gone: the newest run named for the experiment.
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i]->name() == name) return int(i);
  return -1;
}

std::string skipped_note(const std::string& missing, const DeviceList& devices) {
  return devices.gpus.empty() ? "no GPU on this machine" : missing;
}

std::vector<LabRunResult> lab_results_from(const Lab& lab, const LabRecord* record,
                                           const std::vector<RunData>& runs,
                                           const DeviceList& devices,
                                           const ReferenceRuns& references) {
  std::vector<const RunData*> newest_first;
  for (const RunData& run : runs) newest_first.push_back(&run);
  std::vector<LabRunResult> results;
  for (const LabExperiment& e : lab.experiments) {
    LabRunResult result;
    result.experiment = e.name;
    bool have = false;
    if (!e.bench.empty()) {
      if (record)
        if (const auto t = record->matmul.find(e.name); t != record->matmul.end()) {
          result.matmul = t->second;
          if (const auto load = record->matmul_load.find(e.name); load != record->matmul_load.end())
            add_bench_load(result, load->second);
          have = true;
        }
    } else if (const int run = experiment_run(lab, e, record, newest_first); run >= 0) {
      result = lab_run_result(e.name, *newest_first[size_t(run)]);
      have = true;
    }
    if (const std::string missing = missing_hardware(e, devices); !have && !missing.empty()) {
      if (auto reference = reference_result(lab, e, references)) {
        result = std::move(*reference);
        have = true;
      } else {
        result.skipped = skipped_note(missing, devices);
      }
    }
    if (have || !result.skipped.empty()) results.push_back(std::move(result));
  }
  return results;
}

}  // namespace gpulab
