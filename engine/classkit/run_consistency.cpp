// A run's record checked against itself and against its experiment, for `lab verify`.
#include "engine/classkit/run_consistency.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/analysis/run_figures.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/experiment.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;

std::string number(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double summary_number(const RunData& run, const char* key) {
  const auto summary = run.info.find("summary");
  if (summary == run.info.end() || !summary->is_object()) return kNoValue;
  const auto value = summary->find(key);
  return value != summary->end() && value->is_number() ? value->get<double>() : kNoValue;
}

// A lab's settings that `lab run --quick` shortens: a quick run differs from its experiment in
// these and nothing else.
bool shortened_by_quick(const std::string& key) {
  return key == "epochs" || key == "max_steps" || key == "eval_every";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_inconsistencies(const RunData& run) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const std::string& d : record_disagreements(run)) found.emplace_back("run.json", d);

  const std::string status = run.status();
  const double steps = summary_number(run, "steps");
  if (!run.steps.empty() && status != "running" && std::isfinite(steps) &&
      run.steps.back().step != int64_t(steps))
    found.emplace_back("metrics.csv", "its last step is " + std::to_string(run.steps.back().step) +
                                          ", but run.json's summary says " + number(steps, 0) +
                                          " steps");
  if (run.steps.empty() && std::isfinite(steps) && steps > 0)
    found.emplace_back("metrics.csv",
                       "holds no steps, but run.json's summary says " + number(steps, 0));
  for (size_t i = 1; i < run.steps.size(); ++i) {
    const StepMetrics &before = run.steps[i - 1], &s = run.steps[i];
    if (s.step <= before.step) {
      found.emplace_back("metrics.csv", "step " + std::to_string(s.step) + " comes after step " +
                                            std::to_string(before.step) +
                                            ": step numbers must increase");
      break;
    }
    if (s.time_s < before.time_s) {
      found.emplace_back("metrics.csv", "its time stamps go backwards at step " +
                                            std::to_string(s.step) + " (" + number(s.time_s, 3) +
                                            " s after " + number(before.time_s, 3) + " s)");
      break;
    }
  }
  for (size_t i = 1; i < run.evals.size(); ++i)
    if (run.evals[i].time_s < run.evals[i - 1].time_s) {
      found.emplace_back(
          "eval.csv", "its time stamps go backwards at step " + std::to_string(run.evals[i].step));
      break;
    }

  // The steps' own times add up to the training seconds, less the loop's work between them.
  const double seconds = summary_number(run, "train_seconds");
  double step_seconds = 0;
  for (const StepMetrics& s : run.steps) step_seconds += s.step_ms / 1000;
  if (std::isfinite(seconds) && seconds > 0 && !run.steps.empty() && run.steps_per_point == 1 &&
      status == "finished" &&
      std::abs(step_seconds - seconds) > kStepTimeTolerance * seconds + 0.05)
    found.emplace_back("run.json", "its training time " + number(seconds, 3) +
                                       " s is not the sum of its steps' times in metrics.csv (" +
                                       number(step_seconds, 3) + " s)");
  const double images = summary_number(run, "images");
  const double rate = summary_number(run, "images_per_second");
  if (std::isfinite(images) && std::isfinite(rate) && std::isfinite(seconds) && seconds > 0 &&
      std::abs(rate - images / seconds) > 1e-3 * std::max(1.0, images / seconds))
    found.emplace_back("run.json", "its " + number(rate, 1) + " images/s is not its " +
                                       number(images, 0) + " images over " + number(seconds, 3) +
                                       " s (" + number(images / seconds, 1) + " images/s)");

  return found;
}

std::vector<std::string> setting_differences(const RunData& run, const LabExperiment& experiment) {
  std::vector<std::string> found;
  if (!experiment.bench.empty()) return found;
  const json model = model_to_json(experiment.experiment.model);
  const json config =
      train_config_to_json(experiment.experiment.train, experiment.experiment.backend);
  const json recorded_model = run.info.value("model", json::object());
  const json recorded = run.info.value("config", json::object());
  for (const auto& [key, value] : model.items())
    if (recorded_model.value(key, json()) != value) {
      found.push_back("its model's \"" + key + "\" is " + recorded_model.value(key, json()).dump() +
                      ", but the lab's experiment \"" + experiment.name + "\" has " + value.dump());
      break;  // one line for a run of another model
    }
  for (const auto& [key, value] : config.items())
    if (!shortened_by_quick(key) && recorded.value(key, json()) != value)
      found.push_back("its setting \"" + key + "\" is " + recorded.value(key, json()).dump() +
                      ", but the lab's experiment \"" + experiment.name + "\" sets " +
                      value.dump());
  return found;
}

}  // namespace gpulab
