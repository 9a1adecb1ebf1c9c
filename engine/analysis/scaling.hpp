// How a data-parallel setup scales, without Qt: runs that differ only in their replica count,
// their images/s and scaling efficiency against replicas, the ideal line, and a prediction from
// the measured compute time and all-reduce bandwidth.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// One run of a scaling study, with the medians of its steps.
struct ScalingPoint {
  int run = 0;  // index into the runs given
  int replicas = 1;
  double images_per_second = kNoValue;  // as the comparison table has it
  double efficiency = kNoValue;         // images/s over the ideal (the base's times H(R))
  double step_ms = kNoValue;            // median step time
  double shard_ms = kNoValue;           // median of data + copy + forward + backward (split by R)
  double allreduce_ms = kNoValue;       // median all-reduce
  double fixed_ms = kNoValue;           // median of the rest: optimizer, the loop's own time
  // Why this run's figures may mislead (run_flags); empty for a finished, clean measurement.
  std::vector<std::string> flags;
  bool picked = false;      // the user chose it over the automatic choice
  std::vector<int> others;  // the other runs given at this replica count
  // Why this run was taken over `others` (empty when there are none): "picked", "the only one
  // without a ⚠", "the only finished one", "the fastest: 331 images/s against 304".
  std::string chosen_because;
};

// The hardware a run trained on, in the units its study counts: CPU cores (its threads, at most
// the machine's cores, summed over the machines of an MPI job) or GPUs (distinct ones, by host and
// PCI bus id: cuda:0x4 is one GPU). kNoValue where run.json does not say.
double hardware_units(const RunData& run);

// The model of the prediction, from the run with the fewest replicas (the base):
//   step_ms(R) = shard_ms(base) / H(R) + fixed_ms(base) + 2 (R - 1) / R * transfer_ms
// H(R) is the hardware at R replicas over the base's: replicas that share the same cores or GPU
// (--threads 2 --replicas 4; cuda:0x4) split the same work over the same hardware, H = 1, while
// replicas that bring their own (MPI ranks each with a core, cuda:0,1) divide it, H = R / base.
// The shard's work splits evenly over the hardware; the optimizer and the loop do not shrink; each
// replica moves 2 (R - 1) / R of the gradients in an all-reduce (a ring's traffic, as the
// threads' reducer reads and writes), and transfer_ms, the gradients' size over the all-reduce
// bandwidth, is fitted to the measured all-reduce times of the runs with R > 1 (least squares
// through zero). The ideal is the base's images/s times H(R): more replicas on the same hardware
// are ideally no faster.
struct ScalingModel {
  int base_replicas = 1;
  double base_images_per_second = kNoValue;
  double shard_ms = kNoValue, fixed_ms = kNoValue;
  double transfer_ms = kNoValue;      // NaN: no run with R > 1 measured an all-reduce
  double gradient_bytes = kNoValue;   // 4 bytes per parameter; NaN where run.json lacks them
  double bandwidth_gb_per_s() const;  // gradient_bytes / transfer_ms; NaN when either is
  int batch = 0;
  // (replicas, hardware_units) of the runs, by replicas; empty where a run's record does not say.
  std::vector<std::pair<int, double>> hardware;
  // How the runs' hardware grows with their replicas, judged at the run with the most:
  //   Unknown     a record does not say: each replica is taken to bring its own (H = R / base);
  //   Shared      the same hardware as the base run: replicas only split it (H = 1);
  //   PerReplica  in proportion to the replicas (H = R / base);
  //   Measured    anything else (MPI ranks beyond the machine's cores: 1, 2, 2 cores).
  enum class HardwareGrowth { Unknown, Shared, PerReplica, Measured };
  HardwareGrowth hardware_growth() const;
  // H(R): as measured at the runs' replica counts (interpolated between them); beyond the largest,
  // growing with R where the growth is PerReplica, else the same as the largest's.
  double hardware_ratio(int replicas) const;
  bool shares_hardware() const { return hardware_growth() == HardwareGrowth::Shared; }
  double predicted_step_ms(int replicas) const;  // NaN without a bandwidth
  // The base's measured images/s scaled by predicted_step_ms(base) / predicted_step_ms(R): the
  // prediction starts where the ideal does (the base run), whatever the base's steps' medians
  // leave out of its measured time, so it is never above the ideal when H(R) >= 1.
  double predicted_images_per_second(int replicas) const;
  double predicted_efficiency(int replicas) const;  // against the ideal from the base run
  double ideal_images_per_second(int replicas) const;
};

struct ScalingStudy {
  std::string label;                 // what the runs share: "lenet5, batch 64, cpu, allreduce"
  std::vector<ScalingPoint> points;  // by replicas; one run per replica count (see below)
  ScalingModel model;
  // "⚠ baseline (1 replica) measured under outside load\n..." when the base is flagged: its
  // flags' headlines, and on a second line what that means for the chart.
  std::string baseline_warning() const;
};

// What a run must share with another to be in the same study: model, batch, device kind
// (cpu, cuda), threads, precision and sync mode. Each group of runs sharing it with two or more
// replica counts is a study; the one with the most replica counts comes first. Of several runs at
// one replica count it takes a run in `picked` (indices into runs), else the best measurement: a
// run with no flags before a flagged one, a finished run before a cancelled one, then the one
// with the most steps, then the newest.
std::vector<ScalingStudy> scaling_studies(const std::vector<const RunData*>& runs,
                                          const std::vector<int>& picked = {});

// One row per replica count: replicas,run,images_per_second,efficiency,ideal_images_per_second,
// predicted_images_per_second,predicted_efficiency,step_ms,shard_ms,allreduce_ms
void write_scaling_csv(const ScalingStudy& study, const std::vector<std::string>& run_names,
                       std::ostream& out);

}  // namespace gpulab
