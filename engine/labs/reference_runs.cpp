// Reference runs: where they are found, which run folders qualify, and how their figures are
// marked in a lab's results.
#include "engine/labs/reference_runs.hpp"

#include <cctype>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "engine/base/errors.hpp"
#include "io/install_paths.hpp"
#include "engine/labs/lab_progress.hpp"

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

}  // namespace

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
