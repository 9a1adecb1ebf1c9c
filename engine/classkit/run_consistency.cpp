// A run's record checked against itself and against its experiment, for `lab verify`.
#include "engine/classkit/run_consistency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/text.hpp"
#include "engine/labs/reference_runs.hpp"
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

// "conv1" or "layer 3" where a layer has no name.
std::string layer_name(const json& layer, size_t index) {
  const auto name = layer.is_object() ? layer.find("name") : json::const_iterator();
  if (layer.is_object() && name != layer.end() && name->is_string())
    return "\"" + bounded_name(name->get<std::string>(), 40) + "\"";
  return "layer " + std::to_string(index + 1);
}

std::string field_text(const json& value) {
  return value.is_null() ? "none" : bounded_name(value.dump(), 40);
}

// The layers that differ, position by position: "conv1: out_channels 32, the lab's 6; layer 12
// \"fc4\" (linear): not in the lab's model", at most four, then how many more.
std::string layer_differences(const json& recorded, const json& expected) {
  const json none = json::array();
  const json& have = recorded.is_array() ? recorded : none;
  const json& want = expected.is_array() ? expected : none;
  std::vector<std::string> parts;
  for (size_t i = 0; i < std::max(have.size(), want.size()); ++i) {
    if (i >= want.size()) {
      parts.push_back(layer_name(have[i], i) + " (" + field_text(have[i].value("type", json())) +
                      "): not in the lab's model");
      continue;
    }
    if (i >= have.size()) {
      parts.push_back(layer_name(want[i], i) + " (" + field_text(want[i].value("type", json())) +
                      "): missing");
      continue;
    }
    if (have[i] == want[i]) continue;
    std::vector<std::string> fields;
    const json& a = have[i].is_object() ? have[i] : json::object();
    const json& b = want[i].is_object() ? want[i] : json::object();
    for (const auto& [key, value] : b.items())
      if (a.value(key, json()) != value)
        fields.push_back(key + " " + field_text(a.value(key, json())) + ", the lab's " +
                         field_text(value));
    for (const auto& [key, value] : a.items())
      if (!b.contains(key)) fields.push_back(key + " " + field_text(value) + ", the lab's none");
    std::string joined;
    for (const std::string& f : fields) joined += (joined.empty() ? "" : ", ") + f;
    parts.push_back(layer_name(want[i], i) + ": " + joined);
  }
  std::string text;
  for (size_t i = 0; i < parts.size() && i < 4; ++i) text += (i ? "; " : "") + parts[i];
  if (parts.size() > 4) text += "; and " + std::to_string(parts.size() - 4) + " more layers";
  return text;
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

  // The steps' own times add up to the training seconds, less the loop's work between them: never
  // to more. Less is no sign of anything: on a loaded machine an honest run of a few hundred
  // steps spent 45 % of its training time between steps (0.282 s of steps in 0.509 s), and a
  // forger who shortens the steps is caught by the clocks the files share (timing_disagreements).
  const double seconds = summary_number(run, "train_seconds");
  double step_seconds = 0;
  for (const StepMetrics& s : run.steps) step_seconds += s.step_ms / 1000;
  if (std::isfinite(seconds) && seconds > 0 && !run.steps.empty() && run.steps_per_point == 1 &&
      status == "finished" && step_seconds - seconds > kStepTimeTolerance * seconds + 0.05)
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

  for (auto& timing : timing_disagreements(run)) found.push_back(std::move(timing));
  return found;
}

std::vector<std::pair<std::string, std::string>> timing_disagreements(const RunData& run) {
  std::vector<std::pair<std::string, std::string>> found;
  if (run.status() != "finished" || run.steps_per_point != 1) return found;
  // One clock stamps metrics.csv, eval.csv and run.json's totals, in that order: the run's wall
  // and training seconds are taken after every step and evaluation, so none of their stamps is
  // later (the CSVs keep nine digits: a microsecond of rounding).
  const double wall = summary_number(run, "wall_seconds");
  const double train = summary_number(run, "train_seconds");
  constexpr double kRounding = 1e-6;
  if (std::isfinite(wall) && !run.steps.empty() && run.steps.back().time_s > wall + kRounding)
    found.emplace_back("metrics.csv", "its step " + std::to_string(run.steps.back().step) +
                                          " ended at " + number(run.steps.back().time_s, 6) +
                                          " s, after the whole run's " + number(wall, 6) +
                                          " s (run.json's wall_seconds): their times disagree");
  if (!run.evals.empty()) {
    const EvalMetrics& last = run.evals.back();
    if (std::isfinite(wall) && last.time_s > wall + kRounding)
      found.emplace_back("eval.csv", "its evaluation at step " + std::to_string(last.step) +
                                         " ended at " + number(last.time_s, 6) +
                                         " s, after the whole run's " + number(wall, 6) +
                                         " s (run.json's wall_seconds): their times disagree");
    else if (std::isfinite(train) && std::isfinite(last.train_s) &&
             last.train_s > train + kRounding)
      found.emplace_back("eval.csv", "it had trained " + number(last.train_s, 6) + " s at step " +
                                         std::to_string(last.step) +
                                         ", more than the whole run's " + number(train, 6) +
                                         " s (run.json's train_seconds): their times disagree");
  }
  // An evaluation's training seconds are the steps' wall clock up to it (less evaluations): the
  // steps' stamps in metrics.csv cannot be far behind.
  for (const EvalMetrics& e : run.evals) {
    if (!std::isfinite(e.train_s)) continue;
    const auto step = std::find_if(run.steps.begin(), run.steps.end(),
                                   [&](const StepMetrics& s) { return s.step == e.step; });
    if (step == run.steps.end()) continue;
    if (e.train_s > step->time_s * (1 + kStepTimeTolerance) + 0.05) {
      found.emplace_back("metrics.csv", "its step " + std::to_string(e.step) + " ended at " +
                                            number(step->time_s, 3) +
                                            " s, but eval.csv had trained " + number(e.train_s, 3) +
                                            " s by then: the steps' times are shorter than the "
                                            "clock that took them");
      break;
    }
  }
  // The telemetry sampler runs from before the first step to after the last: its last sample
  // is at the run's end, give or take a thread's wake-up.
  double last_sample = -1;
  for (const DeviceSample& sample : run.samples) last_sample = std::max(last_sample, sample.time_s);
  if (std::isfinite(wall) && last_sample > wall * (1 + kStepTimeTolerance) + 0.25)
    found.emplace_back("telemetry.csv",
                       "its samples go on to " + number(last_sample, 3) +
                           " s, but run.json says the run took " + number(wall, 3) +
                           " s (wall_seconds): the run's times were shortened after it ran");
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
      // One line for a run of another model, naming what differs, never the whole model.
      found.push_back(key == "layers"
                          ? "its model's layers are not those of the lab's experiment \"" +
                                experiment.name +
                                "\": " + layer_differences(recorded_model.value(key, json()), value)
                          : "its model's \"" + key + "\" is " +
                                bounded_name(recorded_model.value(key, json()).dump(), 80) +
                                ", but the lab's experiment \"" + experiment.name + "\" has " +
                                bounded_name(value.dump(), 80));
      break;
    }
  for (const auto& [key, value] : config.items())
    if (!shortened_by_quick(key) && recorded.value(key, json()) != value)
      found.push_back("its setting \"" + key + "\" is " + recorded.value(key, json()).dump() +
                      ", but the lab's experiment \"" + experiment.name + "\" sets " +
                      value.dump());
  return found;
}

namespace {
// The run of `runs` a result was taken from, or null (a reference result, an experiment not run).
const RunData* run_of(const LabRunResult& result, const std::vector<RunData>& runs) {
  if (!result.recorded_on.empty() || result.run_dir.empty()) return nullptr;
  const auto run = std::find_if(runs.begin(), runs.end(),
                                [&](const RunData& r) { return r.dir == result.run_dir; });
  return run == runs.end() ? nullptr : &*run;
}
}  // namespace

std::string shipped_run_problem(const std::vector<LabRunResult>& results,
                                const std::vector<RunData>& runs,
                                const std::vector<std::string>& gpus) {
  for (const LabRunResult& result : results)
    if (const RunData* run = run_of(result, runs))
      if (const auto shipped = shipped_run_of(*run, gpus))
        return "the run " + run->dir.string() + " of \"" + result.experiment + "\" is " +
               shipped->text() + " (" + shipped->how +
               "), not a run of yours: a hand-in never takes a reference run as the learner's "
               "own; remove it from the runs folder (where this machine cannot run the "
               "experiment, the hand-in shows the shipped run marked \"recorded on ...\") or run "
               "the experiment yourself";
  return {};
}

std::vector<std::string> setting_warnings(const Lab& lab, const std::vector<LabRunResult>& results,
                                          const std::vector<RunData>& runs) {
  std::vector<std::string> warnings;
  for (const LabRunResult& result : results) {
    const LabExperiment* e = lab.experiment(result.experiment);
    const RunData* run = e ? run_of(result, runs) : nullptr;
    if (!run) continue;
    for (const std::string& difference : setting_differences(*run, *e))
      warnings.push_back("the run " + run->dir.string() + " (\"" + terminal_text(run->name()) +
                         "\") taken for the experiment \"" + terminal_text(e->name) +
                         "\": " + terminal_text(difference) +
                         "; lab verify will name it: run the experiment again as the lab sets it");
  }
  return warnings;
}

}  // namespace gpulab
