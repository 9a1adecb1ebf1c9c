// The per-replica timeline's data.
#include "engine/replica_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace gpulab {
namespace {

double config_number(const RunData& run, const char* key) {
  const auto config = run.info.find("config");
  if (config == run.info.end() || !config->is_object()) return kNoValue;
  const auto value = config->find(key);
  return value != config->end() && value->is_number() ? value->get<double>() : kNoValue;
}

ReplicaStepSpan span_of(const StepMetrics& step, std::vector<ReplicaTimes> replicas) {
  std::sort(replicas.begin(), replicas.end(),
            [](const ReplicaTimes& a, const ReplicaTimes& b) { return a.replica < b.replica; });
  ReplicaStepSpan span;
  span.step = step.step;
  span.step_ms = step.step_ms;
  span.end_s = step.time_s;
  span.start_s = step.time_s - step.step_ms / 1000.0;
  span.replicas = std::move(replicas);
  return span;
}

}  // namespace

int replica_count(const RunData& run) {
  const double replicas = config_number(run, "replicas");
  const double ranks = config_number(run, "ranks");
  int count = std::isfinite(replicas) && replicas >= 1 ? int(replicas) : 0;
  if (count > 0 && std::isfinite(ranks) && ranks > 1) count *= int(ranks);
  if (count > 0) return count;
  for (const StepMetrics& step : run.steps) count = std::max(count, int(step.replicas.size()));
  for (const ReplicaStep& row : run.replica_steps) count = std::max(count, row.times.replica + 1);
  return std::max(count, 1);
}

std::vector<ReplicaStepSpan> recent_replica_steps(const RunData& run, size_t count) {
  std::vector<ReplicaStepSpan> spans;
  // A live run's steps carry their replicas; walk back from the newest.
  for (auto it = run.steps.rbegin(); it != run.steps.rend() && spans.size() < count; ++it)
    if (!it->replicas.empty()) spans.push_back(span_of(*it, it->replicas));
  if (spans.empty() && !run.replica_steps.empty()) {
    // A recorded run: replicas.csv holds rows by step, metrics.csv the steps' times.
    std::unordered_map<int64_t, std::vector<ReplicaTimes>> by_step;
    const int64_t newest = run.replica_steps.back().step;
    for (const ReplicaStep& row : run.replica_steps)
      if (newest - row.step < int64_t(count) * 2) by_step[row.step].push_back(row.times);
    for (auto it = run.steps.rbegin(); it != run.steps.rend() && spans.size() < count; ++it)
      if (auto found = by_step.find(it->step); found != by_step.end())
        spans.push_back(span_of(*it, found->second));
  }
  std::reverse(spans.begin(), spans.end());
  return spans;
}

double communication_overlap_percent(const std::vector<ReplicaStepSpan>& steps) {
  double hidden_ms = 0, communication_ms = 0;
  for (const ReplicaStepSpan& step : steps)
    for (const ReplicaTimes& r : step.replicas) {
      hidden_ms += std::max(0.0, r.hidden_ms);
      communication_ms += std::max(0.0, r.hidden_ms) + std::max(0.0, r.communication_ms);
    }
  if (communication_ms <= 0) return kNoValue;
  return std::clamp(100.0 * hidden_ms / communication_ms, 0.0, 100.0);
}

}  // namespace gpulab
