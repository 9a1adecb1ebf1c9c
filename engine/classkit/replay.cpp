// Replaying a CPU run's first steps with its recorded settings, in a folder that is removed after.
#include "engine/classkit/replay.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/base/errors.hpp"
#include "engine/devices/devices.hpp"
#include "engine/model/model_config.hpp"
#include "engine/session/session.hpp"
#include "engine/training/experiment.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Keeps the replayed steps' losses; prints nothing.
class LossKeeper final : public RunObserver {
 public:
  void on_step(const StepMetrics& s) override {
    losses[s.step] = s.loss;
    step_ms[s.step] = s.step_ms;
  }
  std::map<int64_t, double> losses, step_ms;
};

// A new, empty folder under the temporary folder, removed when this goes.
class ReplayFolder {
 public:
  ReplayFolder() {
    std::string pattern = (fs::temp_directory_path() / "gpulab-replay-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw RecordError(pattern + ": no temporary folder could be made for the replay");
    path_ = pattern;
  }
  ~ReplayFolder() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string blas_text(const std::string& blas) { return blas.empty() ? "unknown" : blas; }

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The recorded and replayed steps' pace, compared where the CPU model is this machine's.
void pace(const RunData& run, const std::map<int64_t, double>& replayed,
          const std::string& recorded_cpu, ReplayVerdict& verdict) {
  std::vector<double> recorded_ms, replayed_ms;
  const bool skip_first = replayed.size() > 1;
  for (const StepMetrics& s : run.steps) {
    const auto r = replayed.find(s.step);
    if (r == replayed.end() || (skip_first && r == replayed.begin())) continue;
    recorded_ms.push_back(s.step_ms);
    replayed_ms.push_back(r->second);
  }
  verdict.recorded_step_ms = median(recorded_ms);
  verdict.replayed_step_ms = median(replayed_ms);
  const std::string here = cpu_info().model;
  char text[320];
  if (recorded_cpu.empty() || recorded_cpu != here) {
    verdict.pace = "pace not compared: recorded on the CPU \"" +
                   (recorded_cpu.empty() ? std::string("unknown") : recorded_cpu) +
                   "\", replayed on \"" + here + "\"";
    return;
  }
  std::snprintf(text, sizeof text,
                "a median step of %.3g ms recorded and %.3g ms replayed on the same CPU model (%s)",
                verdict.recorded_step_ms, verdict.replayed_step_ms, here.c_str());
  verdict.pace = text;
  if (verdict.recorded_step_ms > 0 &&
      verdict.replayed_step_ms > kReplayPaceTolerance * verdict.recorded_step_ms) {
    std::snprintf(text, sizeof text,
                  "its steps took a median %.3g ms when recorded but %.3g ms replayed here, on the "
                  "same CPU model (%s): %.1f× faster than this machine runs them (more than %.0f× "
                  "is flagged); look at its times",
                  verdict.recorded_step_ms, verdict.replayed_step_ms, here.c_str(),
                  verdict.replayed_step_ms / verdict.recorded_step_ms, kReplayPaceTolerance);
    verdict.pace_flag = text;
  }
}

}  // namespace

ReplayVerdict replay_run(const RunData& run, int64_t steps, const data::MnistData& mnist,
                         const std::string& recorded_blas, RunControl& control,
                         const std::string& recorded_cpu) {
  const json config = run.info.value("config", json::object());
  if (config.value("device", std::string("cpu")) != "cpu")
    throw ConfigError("not a CPU run (device \"" + config.value("device", std::string()) + "\"" +
                      "): only CPU runs are replayed");
  if (run.steps.empty()) throw ConfigError("metrics.csv holds no steps to compare with");
  RunRequest request;
  try {
    request.model = model_from_json(run.info.at("model"));
    train_config_from_json(config, request.train, request.backend);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("its model and settings cannot be read back (") + e.what() + ")");
  }
  request.validation = config.value("validation", 0);
  request.train.epochs = 0;
  request.train.max_steps = std::min(steps, run.steps.back().step);
  request.train.eval_every = 0;
  request.train.stop_at_accuracy = 0;
  request.name = "replay";
  const ReplayFolder folder;
  request.out_dir = folder.path() / "run";
  LossKeeper losses;
  const RunSummary summary = execute_run(request, losses, control, &mnist);
  if (summary.status == RunStatus::Failed)
    throw ConfigError("the replay failed: " + summary.message);

  ReplayVerdict verdict;
  for (const StepMetrics& s : run.steps) {
    const auto replayed = losses.losses.find(s.step);
    if (replayed == losses.losses.end()) continue;
    const double difference =
        std::abs(replayed->second - s.loss) / std::max(std::abs(s.loss), 1e-6);
    ++verdict.steps;
    if (!(difference <= verdict.worst_difference)) {
      verdict.worst_difference = difference;
      verdict.worst_step = s.step;
    }
  }
  verdict.agrees = verdict.steps > 0 && verdict.worst_difference <= kReplayLossTolerance;
  char text[160];
  std::snprintf(
      text, sizeof text,
      "%lld steps replayed, the largest loss difference %.2g at step %lld (tolerance %.0e)",
      static_cast<long long>(verdict.steps), verdict.worst_difference,
      static_cast<long long>(verdict.worst_step), kReplayLossTolerance);
  verdict.text = std::string(verdict.agrees ? "agrees: " : "disagrees: ") + text +
                 "; BLAS recorded with " + blas_text(recorded_blas) + ", replayed with " +
                 blas_text(cpu_info().blas);
  if (verdict.steps == 0)
    verdict.text = "disagrees: no replayed step has a recorded loss to compare";
  pace(run, losses.step_ms, recorded_cpu, verdict);
  return verdict;
}

}  // namespace gpulab
