// Runs compared against a baseline, and the time each took to a target accuracy.
#include "engine/analysis/run_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/analysis/replica_timeline.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/records/run_names.hpp"
#include "engine/telemetry/energy.hpp"

namespace gpulab {
namespace {

double median(std::vector<double> values) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.empty()) return kNoValue;
  const auto middle = values.begin() + values.size() / 2;
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// Whether an epoch of run.json's summary ran all its steps: its own count where the record keeps
// one, else the steps metrics.csv has for it (an older record without either counts as full).
bool full_epoch(const RunData& run, const nlohmann::json& epoch, int64_t steps_per_epoch) {
  if (steps_per_epoch <= 0) return true;
  if (epoch.contains("steps") && epoch["steps"].is_number())
    return epoch["steps"].get<int64_t>() >= steps_per_epoch;
  if (run.steps.empty() || !epoch.contains("epoch") || !epoch["epoch"].is_number()) return true;
  const int number = epoch["epoch"].get<int>();
  int64_t last = 0;
  for (const StepMetrics& s : run.steps)
    if (s.epoch == number) last = std::max(last, s.step);
  return last >= int64_t(number) * steps_per_epoch;
}

void full_epoch_time(const RunData& run, RunComparison& row) {
  const int64_t per_epoch = steps_per_epoch(run);
  double sum = 0;
  if (const auto* epochs = info_field(run.info, {"summary", "epochs"});
      epochs && epochs->is_array())
    for (const auto& e : *epochs)
      if (e.is_object() && e.contains("seconds") && e["seconds"].is_number() &&
          full_epoch(run, e, per_epoch)) {
        sum += e["seconds"].get<double>();
        ++row.full_epochs;
      }
  if (row.full_epochs > 0) {
    row.epoch_seconds = sum / row.full_epochs;
    return;
  }
  // No full epoch: the steps it did, at their mean time, times an epoch's steps.
  double step_ms = 0;
  for (const StepMetrics& s : run.steps) step_ms += s.step_ms;
  if (run.steps.empty() || per_epoch <= 0 || !(step_ms > 0)) return;
  row.epoch_seconds = step_ms / double(run.steps.size()) * double(per_epoch) / 1000.0;
  row.epoch_extrapolated = true;
}

}  // namespace

double time_to_target_s(const RunData& run, double target_accuracy) {
  if (!(target_accuracy > 0)) return kNoValue;
  double evaluating_s = 0;  // for records without train_s: the evaluations so far
  for (const EvalMetrics& e : run.evals) {
    double train_s = e.train_s;
    if (!std::isfinite(train_s)) {
      // The step the evaluation followed ended when the evaluation began.
      const auto step =
          std::lower_bound(run.steps.begin(), run.steps.end(), e.step,
                           [](const StepMetrics& s, int64_t at) { return s.step < at; });
      const double began =
          step != run.steps.end() && step->step == e.step ? step->time_s : e.time_s;
      evaluating_s += std::max(0.0, e.time_s - began);
      train_s = e.time_s - evaluating_s;
    }
    if (e.split == Split::Test && e.accuracy >= target_accuracy) return train_s;
  }
  return kNoValue;
}

std::vector<RunComparison> compare_runs(const std::vector<const RunData*>& runs, int baseline,
                                        double target_accuracy) {
  std::vector<RunComparison> rows;
  const auto names = display_run_names(runs);
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunData& run = *runs[r];
    RunComparison row;
    row.name = names[r];
    row.status = run.status();
    row.note = run.info.value("message", "");
    if (const auto* diverged = info_field(run.info, {"summary", "diverged"});
        diverged && diverged->is_boolean() && diverged->get<bool>()) {
      row.status = "diverged";
      row.note = info_string(run.info, {"summary", "divergence"}, "diverged");
    }
    row.device = info_string(run.info, {"config", "device"}, "?");
    if (const auto* devices = info_field(run.info, {"devices"});
        devices && devices->is_array() && !devices->empty())
      row.device = info_string((*devices)[0], {"description"}, row.device);
    row.precision = info_string(run.info, {"config", "precision"}, "fp32");
    const double batch = info_number(run.info, {"config", "batch"});
    row.batch = std::isfinite(batch) ? int(batch) : 0;
    row.steps = int64_t(run.steps.size());
    full_epoch_time(run, row);
    row.images_per_second = run_images_per_second(run);
    row.caveats = run_caveats(run);
    row.flags = run_flags(run);
    row.test_accuracy = info_number(run.info, {"summary", "test_accuracy"});
    for (const EvalMetrics& e : run.evals) {
      if (e.split != Split::Test) continue;
      if (!std::isfinite(row.test_accuracy) || row.status == "running")
        row.test_accuracy = e.accuracy;
    }
    row.time_to_target_s = time_to_target_s(run, target_accuracy);
    row.energy_j = info_number(run.info, {"energy", "joules"});
    row.images_per_joule = info_number(run.info, {"energy", "images_per_joule"});
    row.energy_note = energy_text(run.info.value("energy", nlohmann::json()));
    const MatmulShare matmul = matmul_share(run);
    row.matmul_percent = matmul.percent;
    row.matmul_note = matmul_share_text(matmul);
    if (replica_count(run) > 1) {
      std::vector<double> exposed, hidden;
      for (const StepMetrics& s : run.steps) {
        exposed.push_back(s.times.allreduce_ms);
        hidden.push_back(s.times.allreduce_hidden_ms);
      }
      row.allreduce_ms = median(exposed);
      row.allreduce_hidden_ms = median(hidden);
      row.overlap_percent =
          communication_overlap_percent(recent_replica_steps(run, run.steps.size()));
    }
    rows.push_back(row);
  }
  if (baseline >= 0 && baseline < int(rows.size()))
    for (auto& row : rows) {
      row.speedup = row.images_per_second / rows[baseline].images_per_second;
      if (!rows[baseline].epoch_extrapolated && !row.epoch_extrapolated)
        row.epoch_speedup = rows[baseline].epoch_seconds / row.epoch_seconds;
    }
  return rows;
}

int default_baseline(const std::vector<const RunData*>& runs) {
  if (runs.empty()) return -1;
  const auto model_of = [](const RunData& run) {
    return info_string(run.info, {"model", "name"}, "custom");
  };
  std::map<std::string, int> count;
  for (const RunData* run : runs) ++count[model_of(*run)];
  const std::string most = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) {
                             return a.second < b.second;
                           })->first;
  const auto clean = [](const RunData& run) {
    return run.status() == "finished" && run_flags(run).empty();
  };
  for (size_t i = 0; i < runs.size(); ++i)
    if (clean(*runs[i]) && model_of(*runs[i]) == most) return int(i);
  for (size_t i = 0; i < runs.size(); ++i)
    if (clean(*runs[i])) return int(i);
  return 0;
}

std::string epoch_time_text(const RunComparison& row) {
  if (!std::isfinite(row.epoch_seconds)) return row.steps > 0 ? "–" : "– (no steps)";
  char text[96];
  if (!row.epoch_extrapolated) {
    std::snprintf(text, sizeof text, "%.2f s", row.epoch_seconds);
  } else {
    std::snprintf(text, sizeof text, "≈ %.2f s, from %lld step%s", row.epoch_seconds,
                  static_cast<long long>(row.steps), row.steps == 1 ? "" : "s");
  }
  return text;
}

}  // namespace gpulab
