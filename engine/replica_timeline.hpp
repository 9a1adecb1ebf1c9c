// What the per-replica timeline shows, without Qt: each recent step's replicas (compute,
// communication, waiting for the slowest) placed on the run's wall clock, and how much of the
// communication the computation hid.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/run_record.hpp"

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

// Communication hidden under computation, in percent. A replica computes, then takes part in the
// reduction, so with nothing hidden the step lasts its slowest compute plus the reduction; the
// step time beyond the slowest compute is the communication left exposed:
//   overlap = 1 - (step_ms - max compute_ms) / max communication_ms, clamped to [0, 100] %,
// summed over the steps given (exposed and communication times each summed before dividing).
// NaN when the steps hold no communication.
double communication_overlap_percent(const std::vector<ReplicaStepSpan>& steps);

}  // namespace gpulab
