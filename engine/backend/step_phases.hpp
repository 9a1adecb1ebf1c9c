// The phases of a training step, listed once: metrics.csv's timing columns, the per-replica
// file's columns (replicas.csv) and the charts' step breakdown are all made from these tables.
#pragma once

#include <array>
#include <limits>

namespace gpulab {

// Milliseconds spent in each part of one training step. With several replicas, they are the
// step's critical path: the phases of the replica with the most work of its own (data to
// optimizer), and as all-reduce the rest of that replica's wall time (the reduction it waited for,
// and with MPI slower ranks), so they add up to its step. The reduction that ran
// while backward still went on is no part of the step's time: allreduce_hidden_ms says how much
// it was (metrics.csv's last column).
struct StepTimes {
  double data_ms = 0, copy_ms = 0, forward_ms = 0, backward_ms = 0, allreduce_ms = 0,
         optimizer_ms = 0;
  double allreduce_hidden_ms = 0;
  // Of forward_ms + backward_ms, the time in matrix products: the convolution kernels (with the
  // ReLU and pooling fused into them) and the fully connected layers' GEMMs, timed around each
  // kernel call on the CPU (metrics.csv's matmul_ms, after allreduce_hidden_ms). NaN where not
  // measured: a GPU run, whose kernels the host does not wait for, and records from before.
  double matmul_ms = std::numeric_limits<double>::quiet_NaN();
  double total_ms() const;
};

struct StepPhase {
  enum class Needs { Nothing, DeviceCopy, SeveralReplicas };
  const char* name;    // in charts: "all-reduce"
  const char* column;  // in metrics.csv: "allreduce_ms"
  double StepTimes::*ms;
  Needs needs;  // what a run must have to spend time in it (charts leave it out else)
};

// In the order of metrics.csv's columns and of the stacked breakdown.
inline constexpr std::array<StepPhase, 6> kStepPhases = {{
    {"data", "data_ms", &StepTimes::data_ms, StepPhase::Needs::Nothing},
    {"copy", "copy_ms", &StepTimes::copy_ms, StepPhase::Needs::DeviceCopy},
    {"forward", "forward_ms", &StepTimes::forward_ms, StepPhase::Needs::Nothing},
    {"backward", "backward_ms", &StepTimes::backward_ms, StepPhase::Needs::Nothing},
    {"all-reduce", "allreduce_ms", &StepTimes::allreduce_ms, StepPhase::Needs::SeveralReplicas},
    {"optimizer", "optimizer_ms", &StepTimes::optimizer_ms, StepPhase::Needs::Nothing},
}};

inline double StepTimes::total_ms() const {
  double total = 0;
  for (const StepPhase& phase : kStepPhases) total += this->*phase.ms;
  return total;
}

// One replica's share of one step, in the order it spends it: its own work, then the exchange
// of gradients it still had to wait for (communication) and the time it stood waiting for the
// slowest replica; the three add up to its step. The exchange that ran during its computation
// (buckets reduced while its backward pass went on) is hidden_ms, part of no phase.
struct ReplicaTimes {
  int replica = 0;  // across the whole job: with MPI, ranks come one after another
  double compute_ms = 0, communication_ms = 0, waiting_ms = 0;
  double hidden_ms = 0;
};

struct ReplicaPhase {
  const char* name;    // "waiting"
  const char* column;  // "waiting_ms"
  double ReplicaTimes::*ms;
};

// replicas.csv: step, replica, then these columns, then hidden_ms.
inline constexpr std::array<ReplicaPhase, 3> kReplicaPhases = {{
    {"compute", "compute_ms", &ReplicaTimes::compute_ms},
    {"communication", "communication_ms", &ReplicaTimes::communication_ms},
    {"waiting", "waiting_ms", &ReplicaTimes::waiting_ms},
}};

}  // namespace gpulab
