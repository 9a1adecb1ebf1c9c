// engine/cpu: the CPU backend, replicas over host memory with OpenMP and the BLAS. Over
// engine/parallel.
//
// The CPU backend: R replicas of the model (one by default) over host memory, each with its own
// threads for the fast kernels (OpenMP and the BLAS), and the reducer the options choose.
#pragma once

#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/cpu/cpu_network.hpp"
#include "engine/parallel/replica.hpp"
#include "engine/parallel/replicated_backend.hpp"

namespace gpulab {

// One model copy on the CPU: gathers its shard, runs the network, updates in place.
class CpuReplica final : public Replica {
 public:
  // with_optimizer: keep optimizer state (a parameter server keeps it instead).
  // augment_per_batch (--preprocess per-batch): each training shard augmented on the replica's
  // thread (data::augment_batch) instead of gathered.
  CpuReplica(const ModelPlan& plan, const OptimizerConfig& optimizer, const DataSets& data,
             int max_batch, CpuKernels kernels, uint64_t seed, bool with_optimizer,
             bool augment_per_batch = false);
  BatchStats compute_gradients(std::span<const int32_t> shard, Shard position, int64_t step,
                               StepTimes& times) override;
  void set_gradients_ready(GradientsReady ready) override { ready_ = std::move(ready); }
  BufferView gradients() override;
  BufferView parameters() override;
  void apply_update(float lr, int64_t step) override;
  void set_parameters(std::span<const float> params) override;
  void get_parameters(std::span<float> params) override;
  BatchStats evaluate(const data::ImageSet& set, std::span<const int32_t> indices) override;

 private:
  DataSets data_;
  uint64_t seed_;
  bool augment_per_batch_;
  CpuNetwork network_;
  GradientsReady ready_;
  std::vector<HostOptimizer> optimizer_;  // empty without optimizer state
  std::vector<float> batch_images_;       // (max_batch, C*H*W)
  std::vector<uint8_t> batch_labels_;     // (max_batch)
};

// BackendOptions::replicas CPU replicas (one per process with --dist mpi), the CPU threads
// divided among them: threads / replicas each, at least 1.
class CpuBackend final : public ReplicatedBackend {
 public:
  CpuBackend(const ModelPlan& plan, const OptimizerConfig& optimizer, const DataSets& data,
             const BackendOptions& options);
  int threads() const { return threads_; }  // each replica's

 private:
  int threads_;
};

}  // namespace gpulab
