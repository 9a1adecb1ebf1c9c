// Reference runs: where they are found, which run folders qualify, and how their figures are
// marked in a lab's results.
#include "engine/labs/reference_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

#include "engine/base/errors.hpp"
#include "engine/base/sha256.hpp"
#include "engine/labs/lab_progress.hpp"
#include "io/install_paths.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

// "2026-11-20" from run.json's "created" (2026-11-20T19:08:15Z), or "" when it holds no date.
std::string created_day(const RunData& run) {
  const auto created = run.info.find("created");
  if (created == run.info.end() || !created->is_string()) return {};
  const std::string text = created->get<std::string>();
  if (text.size() < 10) return {};
  for (size_t i = 0; i < 10; ++i)
    if (i == 4 || i == 7 ? text[i] != '-' : !std::isdigit(static_cast<unsigned char>(text[i])))
      return {};
  return text.substr(0, 10);
}

// "NVIDIA H200" or "2× NVIDIA H100 80GB HBM3, NVIDIA A100": the GPUs among run.json's devices.
std::string gpu_names(const RunData& run) {
  std::vector<std::pair<std::string, int>> names;  // in order, with how many of each
  const auto devices = run.info.find("devices");
  if (devices == run.info.end() || !devices->is_array()) return {};
  for (const auto& device : *devices) {
    if (!device.is_object() || device.value("id", std::string()).rfind("cuda:", 0) != 0) continue;
    const std::string name = device.value("name", std::string());
    if (name.empty()) continue;
    auto same = names.begin();
    while (same != names.end() && same->first != name) ++same;
    if (same == names.end())
      names.push_back({name, 1});
    else
      ++same->second;
  }
  std::string text;
  for (const auto& [name, count] : names)
    text += (text.empty() ? "" : ", ") + (count > 1 ? std::to_string(count) + "× " : "") + name;
  return text;
}

// What identifies a shipped run: each record file's digest, when and where it was recorded, its
// losses, and its GPU models.
struct ShippedRun {
  ShippedRunMatch match;
  std::map<std::string, std::string> file_by_digest;  // SHA-256 -> "metrics.csv"
  std::string created, pid, losses;
  std::vector<std::string> gpus;
};

std::string process_field(const RunData& run, const char* key) {
  const auto process = run.info.find("process");
  if (process == run.info.end() || !process->is_object()) return {};
  const auto value = process->find(key);
  if (value == process->end()) return {};
  return value->is_string() ? value->get<std::string>() : value->dump();
}

// Every loss of metrics.csv, nine digits each, as one digest: "" for fewer than 5 steps (too
// short to tell one run from another).
std::string losses_digest(const RunData& run) {
  if (run.steps.size() < 5) return {};
  std::string text;
  char number[32];
  for (const StepMetrics& step : run.steps) {
    std::snprintf(number, sizeof number, "%.9g,", step.loss);
    text += number;
  }
  return sha256_hex(text);
}

std::vector<std::string> gpu_models(const RunData& run) {
  std::vector<std::string> models;
  const auto devices = run.info.find("devices");
  if (devices == run.info.end() || !devices->is_array()) return models;
  for (const auto& device : *devices)
    if (device.is_object() && device.value("id", std::string()).rfind("cuda:", 0) == 0)
      models.push_back(device.value("name", std::string()));
  return models;
}

std::string created_time(const RunData& run) {
  const auto created = run.info.find("created");
  return created != run.info.end() && created->is_string() ? created->get<std::string>() : "";
}

std::vector<ShippedRun> read_shipped_runs() {
  std::vector<fs::path> dirs = {installed_or_source("reference-runs", GPULAB_REFERENCE_RUNS_DIR)};
  if (const char* named = std::getenv(kReferenceRunsVariable); named && *named) {
    std::error_code error;
    if (fs::is_directory(named, error) && !fs::equivalent(named, dirs.front(), error))
      dirs.emplace_back(named);
  }
  std::vector<ShippedRun> shipped;
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) continue;
    for (const RunData& run : load_reference_runs(dir).runs) {
      ShippedRun s;
      s.match.name = run.dir.filename().string();
      s.match.recorded_on = recorded_on(run);
      s.match.host = process_field(run, "host");
      for (const char* file : kRunFiles) try {
          s.file_by_digest[sha256_file(run.dir / file)] = file;
        } catch (const RecordError&) {  // a file this run has not (replicas.csv)
        }
      s.created = created_time(run);
      s.pid = process_field(run, "pid");
      s.losses = losses_digest(run);
      s.gpus = gpu_models(run);
      shipped.push_back(std::move(s));
    }
  }
  return shipped;
}

const std::vector<ShippedRun>& shipped_runs() {
  static std::once_flag once;
  static std::vector<ShippedRun> shipped;
  std::call_once(once, [] { shipped = read_shipped_runs(); });
  return shipped;
}

}  // namespace

std::string ShippedRunMatch::text() const {
  return "the reference run \"" + name + "\" that ships with gpulab (recorded on " + recorded_on +
         (host.empty() ? "" : ", host \"" + host + "\"") + ")";
}

std::optional<ShippedRunMatch> shipped_run_of(const RunData& run,
                                              const std::vector<std::string>& machine_gpus) {
  const std::vector<ShippedRun>& shipped = shipped_runs();
  if (shipped.empty()) return std::nullopt;
  std::map<std::string, std::string> digests;  // the run's files: digest -> name
  for (const char* file : kRunFiles) try {
      digests[sha256_file(run.dir / file)] = file;
    } catch (const RecordError&) {
    }
  const std::string created = created_time(run), host = process_field(run, "host"),
                    pid = process_field(run, "pid"), losses = losses_digest(run);
  for (const ShippedRun& s : shipped) {
    ShippedRunMatch match = s.match;
    for (const auto& [digest, file] : digests)
      if (s.file_by_digest.count(digest)) {
        match.how = "its " + file + " is the shipped run's, byte for byte";
        return match;
      }
    if (!created.empty() && created == s.created && host == s.match.host && pid == s.pid) {
      match.how = "its run.json was created at " + created +
                  " by the same process on the same "
                  "host as the shipped run's";
      return match;
    }
    const bool has_model = std::any_of(s.gpus.begin(), s.gpus.end(), [&](const std::string& g) {
      return std::find(machine_gpus.begin(), machine_gpus.end(), g) != machine_gpus.end();
    });
    if (!losses.empty() && losses == s.losses && !has_model) {
      match.how = "its " + std::to_string(run.steps.size()) +
                  " losses are the shipped run's, step for step, and the machine that handed it "
                  "in has no " +
                  (s.gpus.empty() ? std::string("such GPU") : s.gpus.front());
      return match;
    }
  }
  return std::nullopt;
}

fs::path reference_runs_dir() {
  const char* named = std::getenv(kReferenceRunsVariable);
  if (!named || !*named) return installed_or_source("reference-runs", GPULAB_REFERENCE_RUNS_DIR);
  std::error_code error;
  if (!fs::is_directory(named, error))
    throw ConfigError(std::string(kReferenceRunsVariable) + "=" + named +
                      ": not a folder; set it to a folder of reference runs (run folders "
                      "recorded on a GPU), or unset it to use gpulab's own");
  return named;
}

std::string recorded_on(const RunData& run) {
  const std::string gpus = gpu_names(run), day = created_day(run);
  return gpus.empty() || day.empty() ? std::string() : gpus + ", " + day;
}

ReferenceRuns load_reference_runs(const fs::path& dir) {
  ReferenceRuns found;
  std::error_code error;
  if (!fs::exists(dir, error)) return found;
  for (RunData& run : load_runs(dir, &found.problems)) {
    std::string why;
    if (run.status() != "finished")
      why = "it did not finish (its status is \"" + run.status() + "\")";
    else if (gpu_names(run).empty())
      why = "its run.json names no GPU among its \"devices\"";
    else if (created_day(run).empty())
      why = "its run.json has no \"created\" date";
    if (why.empty())
      found.runs.push_back(std::move(run));
    else
      found.problems.push_back(run.dir.string() + ": not a reference run: " + why +
                               "; only a finished run recorded on a GPU is shown in a lab");
  }
  return found;
}

std::optional<LabRunResult> reference_result(const Lab& lab, const LabExperiment& e,
                                             const std::vector<RunData>& references) {
  if (!e.bench.empty()) return std::nullopt;
  std::vector<const RunData*> runs;
  for (const RunData& run : references) runs.push_back(&run);
  const int found = experiment_run(lab, e, nullptr, runs);
  if (found < 0) return std::nullopt;
  LabRunResult result = lab_run_result(e.name, references[size_t(found)]);
  result.recorded_on = recorded_on(references[size_t(found)]);
  return result;
}

}  // namespace gpulab
