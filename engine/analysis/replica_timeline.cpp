// The per-replica timeline's data.
#include "engine/analysis/replica_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/training/trainer.hpp"

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
  // What the record holds wins over what run.json says: a count there that the replica rows do
  // not bear out (a damaged or hand-edited record) would lay out lanes and lines for nothing.
  int seen = 0;
  for (const StepMetrics& step : run.steps) seen = std::max(seen, int(step.replicas.size()));
  for (const ReplicaStep& row : run.replica_steps) seen = std::max(seen, row.times.replica + 1);
  if (seen > 0) return seen;
  // A run before its first step, or recorded without replica rows. The reader bounds both
  // numbers by kMaxBatch; their product is bounded here.
  const double replicas = config_number(run, "replicas");
  const double ranks = config_number(run, "ranks");
  double count = std::isfinite(replicas) && replicas >= 1 ? replicas : 1;
  if (std::isfinite(ranks) && ranks > 1) count *= ranks;
  return int(std::min(count, double(kMaxBatch)));
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

std::string replica_steps_caption(const std::vector<ReplicaStepSpan>& spans) {
  if (spans.empty()) return "no steps";
  if (spans.size() == 1) return "last step";
  const int64_t first = spans.front().step, last = spans.back().step;
  if (last - first + 1 == int64_t(spans.size()))
    return "last " + std::to_string(spans.size()) + " steps";
  return std::to_string(spans.size()) + " of steps " + std::to_string(first) + " to " +
         std::to_string(last);
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
