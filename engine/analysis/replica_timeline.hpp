// What the per-replica timeline shows, without Qt: each recent step's replicas (compute,
// communication, waiting for the slowest) placed on the run's wall clock, and how much of the
// communication the computation hid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// One step of a data-parallel run as the timeline draws it.
struct ReplicaStepSpan {
  int64_t step = 0;
  double start_s = 0, end_s = 0;  // wall time of the run: the step's end less its duration
  double step_ms = 0;
  std::vector<ReplicaTimes> replicas;  // ordered by replica
};

// Replicas of a run: run.json's config (replicas times MPI ranks), else the most replicas any
// recorded step has; 1 for a run with neither.
int replica_count(const RunData& run);

// The last `count` steps that carry per-replica times: from the steps themselves (a live run's
// feed) or, for a recorded run, from replicas.csv matched to metrics.csv by step.
std::vector<ReplicaStepSpan> recent_replica_steps(const RunData& run, size_t count);

// What the spans are, for the timeline's title: "last step", "last 5 steps" where they follow one
// another, else "3 of steps 23 to 59" (a run that recorded its replicas' times every few steps).
std::string replica_steps_caption(const std::vector<ReplicaStepSpan>& spans);

// Communication hidden under computation, in percent: of the reduction's time, the share that
// ran while the replicas still computed (buckets reduced during the backward pass),
//   overlap = sum of hidden_ms / sum of (hidden_ms + communication_ms),
// over every replica of the steps given. NaN when the steps hold no communication.
double communication_overlap_percent(const std::vector<ReplicaStepSpan>& steps);

}  // namespace gpulab
