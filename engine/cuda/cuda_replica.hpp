// One copy of the model on one GPU with its own stream, cuBLAS handle, buffers, optimizer state,
// timing events and graphs: a Replica whose phases are enqueued on its stream. The host waits
// only for the loss: backward and the update of step N overlap the host's work for step N+1,
// and step N's breakdown is read during step N+1. No CUDA types here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "engine/parallel/replica.hpp"

namespace gpulab {

struct DeviceDataSets;

struct CudaReplicaOptions {
  int device = 0;           // the CUDA device index
  std::string name;         // in messages: "cuda:0", or "replica 2 (cuda:0)"
  int max_batch = 1;        // the largest shard it is given
  int requested_batch = 1;  // the run's --batch, for the out-of-memory advice
  uint64_t seed = 1;
  Precision precision = Precision::Fp32;
  ConvAlgorithm conv = ConvAlgorithm::Im2col;
  bool cuda_graph = true;
  // --data-on host: each training batch gathered and normalized on the host and copied over,
  // instead of gathered on the GPU from the data sets kept there.
  bool batches_from_host = false;
  // --preprocess per-batch (with batches from the host): each batch augmented on the host
  // (data::augment_batch, drawn from the seed, the step and each image's index).
  bool augment_per_batch = false;
  // Keep optimizer state on the GPU; off when a parameter server keeps it instead.
  bool with_optimizer = true;
};

class CudaReplica final : public Replica {
 public:
  // Builds everything on options.device; `data` lives there. Throws kernels::cuda::CudaError
  // (its message names the replica) and frees what it had made. Its calls throw CudaError
  // naming the replica; after a fault or out of memory (kernels::leaves_device_unusable) it has
  // released its memory, and after any other error it goes on.
  CudaReplica(const ModelPlan& plan, const OptimizerConfig& optimizer,
              std::shared_ptr<const DeviceDataSets> data, const CudaReplicaOptions& options);
  ~CudaReplica() override;
  BatchStats compute_gradients(std::span<const int32_t> shard, Shard position, int64_t step,
                               StepTimes& times) override;
  // Called after each layer's backward kernels are enqueued, when its phases run eagerly (with
  // CUDA graphs the backward pass is one launch, and the reducer starts after it).
  void set_gradients_ready(GradientsReady ready) override { ready_ = std::move(ready); }
  BufferView gradients() override;   // device memory, with its device and stream
  BufferView parameters() override;  // the same
  void apply_update(float lr, int64_t step) override;
  void set_parameters(std::span<const float> params) override;
  void get_parameters(std::span<float> params) override;
  BatchStats evaluate(const data::ImageSet& set, std::span<const int32_t> indices) override;
  bool times_itself() const override { return true; }

  // Waits for everything on its stream (not the device: another run may share the GPU); throws
  // the device's error.
  void synchronize() override;
  // Frees its device memory after waiting for its stream (errors ignored); later calls throw.
  void release() override;
  int device() const { return options_.device; }
  CudaGraphCounts graph_counts() const;

 private:
  struct State;
  void build(std::shared_ptr<const DeviceDataSets> data);
  State& state();
  template <class F>
  auto guarded(F&& f) -> decltype(f());
  [[noreturn]] void fail(const std::exception_ptr& error);

  ModelPlan plan_;
  OptimizerConfig optimizer_;
  CudaReplicaOptions options_;
  std::unique_ptr<State> state_;
  CudaGraphCounts released_counts_;  // kept when the state goes
  std::string failure_;
  GradientsReady ready_;
};

}  // namespace gpulab
