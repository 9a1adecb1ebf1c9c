// Reference runs: where they are found, which run folders qualify, and how their figures are
// marked in a lab's results.
#include "engine/labs/reference_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/sha256.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/records/output_paths.hpp"
#include "io/input_file.hpp"
#include "io/install_paths.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

// "2026-11-20" from "2026-11-20T19:08:15Z" or "2026-11-20", or "" when it starts with no date.
std::string day_of(const std::string& text) {
  if (text.size() < 10) return {};
  for (size_t i = 0; i < 10; ++i)
    if (i == 4 || i == 7 ? text[i] != '-' : !std::isdigit(static_cast<unsigned char>(text[i])))
      return {};
  return text.substr(0, 10);
}

// The day of run.json's "created".
std::string created_day(const RunData& run) {
  const auto created = run.info.find("created");
  if (created == run.info.end() || !created->is_string()) return {};
  return day_of(created->get<std::string>());
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

// A benchmark reference is a few hundred bytes a size: 1 MiB is thousands of sizes.
constexpr std::uintmax_t kMaxBenchReferenceBytes = std::uintmax_t(1) << 20;

BenchReference read_bench_reference(const fs::path& file) {
  const std::string fix =
      "; fix the file (gpulab's own are in resources/reference-runs) or remove it";
  auto fail = [&](const std::string& what) -> BenchReference {
    throw ConfigError(file.string() + ": not a benchmark reference: " + what + fix);
  };
  std::string text;
  try {
    text = read_input_file(file, kMaxBenchReferenceBytes, "a benchmark reference (JSON)");
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return fail("it is not a JSON object");
  if (json.value("format", nlohmann::json()) != kBenchReferenceFormat)
    return fail(std::string("its \"format\" is not \"") + kBenchReferenceFormat + "\"");
  BenchReference r;
  r.file = file;
  const std::pair<const char*, std::string*> fields[] = {
      {"lab", &r.lab},         {"experiment", &r.experiment},
      {"gpu", &r.gpu},         {"driver", &r.driver},
      {"cuda", &r.cuda},       {"recorded", &r.recorded},
      {"command", &r.command}, {"commit", &r.commit}};
  for (const auto& [key, field] : fields) {
    const auto value = json.find(key);
    if (value == json.end() || !value->is_string() || value->get<std::string>().empty())
      return fail(std::string("its \"") + key + "\" is missing or not a text");
    *field = value->get<std::string>();
  }
  if (day_of(r.recorded) != r.recorded)
    return fail("its \"recorded\" is \"" + r.recorded + "\", not a day YYYY-MM-DD");
  const auto timings = json.find("timings");
  if (timings == json.end() || !timings->is_array() || timings->empty())
    return fail("it has no \"timings\" (a list of {size, ms, ms_with_copies})");
  for (const auto& t : *timings) {
    const auto number = [&](const char* key) {
      const auto v = t.is_object() ? t.find(key) : t.end();
      return t.is_object() && v != t.end() && v->is_number() ? v->get<double>() : -1.0;
    };
    const double size = number("size"), ms = number("ms"), with = number("ms_with_copies");
    // A size the benchmark could time, and times it could take: with copies no faster than
    // without.
    if (!(size >= 1 && size <= 65536 && size == std::floor(size)) || !(ms > 0) || !(with >= ms) ||
        !std::isfinite(with))
      return fail("timing " + std::to_string(r.timings.size() + 1) +
                  " is not a size from 1 to 65536 with ms > 0 and ms_with_copies >= ms");
    r.timings.push_back({int(size), ms, with});
  }
  return r;
}

std::string bench_reference_file_name(const std::string& lab, const std::string& experiment) {
  return lab + "." + experiment_folder(experiment) + kBenchReferenceSuffix;
}

const OutputKind& bench_reference_kind() {
  static const OutputKind kind = json_kind("a benchmark reference", [](const nlohmann::json& j) {
    return j.is_object() && j.value("format", nlohmann::json()) == kBenchReferenceFormat;
  });
  return kind;
}

void write_bench_reference(const fs::path& file, const BenchReference& reference,
                           const std::string& source) {
  // Never over a file of another kind: the check every output of gpulab's goes through.
  check_output_file(file, "Benchmark reference", bench_reference_kind());
  nlohmann::json timings = nlohmann::json::array();
  for (const MatmulTiming& t : reference.timings)
    timings.push_back({{"size", t.size}, {"ms", t.ms}, {"ms_with_copies", t.ms_with_copies}});
  nlohmann::json json = {{"format", kBenchReferenceFormat}, {"lab", reference.lab},
                         {"experiment", reference.experiment}, {"gpu", reference.gpu},
                         {"driver", reference.driver}, {"cuda", reference.cuda},
                         {"recorded", reference.recorded}, {"command", reference.command},
                         {"commit", reference.commit}, {"timings", timings}};
  if (!source.empty()) json["source"] = source;
  write_file_atomically(file, json.dump(1) + "\n", AtLink::replace);
}

ReferenceRuns load_reference_runs(const fs::path& dir) {
  ReferenceRuns found;
  std::error_code error;
  if (!fs::exists(dir, error)) return found;
  std::vector<fs::path> benchmark_files;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > std::string(kBenchReferenceSuffix).size() &&
        name.ends_with(kBenchReferenceSuffix))
      benchmark_files.push_back(entry.path());
  }
  std::sort(benchmark_files.begin(), benchmark_files.end());
  for (const fs::path& file : benchmark_files) try {
      found.benchmarks.push_back(read_bench_reference(file));
    } catch (const ConfigError& e) {
      found.problems.push_back(e.what());
    }
  for (RunData& run : load_runs(dir, &found.problems)) {
    std::string why;
    if (run.status() != "finished")
      why = "it did not finish (its status is \"" + run.status() + "\")";
    else if (gpu_names(run).empty())
      why = "its run.json names no GPU among its \"devices\"";
    else if (created_day(run).empty())
      why = "its run.json has no \"created\" date";
    if (why.empty()) {
      run.recorded_on = recorded_on(run);
      found.runs.push_back(std::move(run));
    } else
      found.problems.push_back(run.dir.string() + ": not a reference run: " + why +
                               "; only a finished run recorded on a GPU is shown in a lab");
  }
  return found;
}

std::optional<LabRunResult> reference_result(const Lab& lab, const LabExperiment& e,
                                             const ReferenceRuns& references) {
  if (!e.bench.empty()) {
    for (const BenchReference& bench : references.benchmarks) {
      if (bench.lab != lab.name || bench.experiment != e.name) continue;
      LabRunResult result;
      result.experiment = e.name;
      result.matmul = bench.timings;
      result.recorded_on = bench.recorded_on();
      result.device = bench.gpu + ", driver " + bench.driver + ", CUDA " + bench.cuda;
      return result;
    }
    return std::nullopt;
  }
  std::vector<const RunData*> runs;
  for (const RunData& run : references.runs) runs.push_back(&run);
  const int found = experiment_run(lab, e, nullptr, runs);
  if (found < 0) return std::nullopt;
  LabRunResult result = lab_run_result(e.name, references.runs[size_t(found)]);
  result.recorded_on = recorded_on(references.runs[size_t(found)]);
  return result;
}

}  // namespace gpulab
