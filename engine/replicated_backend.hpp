// The backend of data parallelism: R replicas of the model, each on a persistent thread of its
// own, and a gradient reducer between their backward passes and their updates. With one replica
// and a reducer that does nothing it is plain training; the reduction is called all the same.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/gradient_reducer.hpp"
#include "engine/process_group.hpp"
#include "engine/replica.hpp"

namespace gpulab {

// A replica's failure (an exception on its thread, a NaN loss), naming the replica; the other
// replicas stop waiting for it.
class ReplicaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReplicatedBackend : public Backend {
 public:
  ~ReplicatedBackend() override;
  std::string description() const override { return description_; }
  size_t parameter_count() const override { return parameter_count_; }
  void set_parameters(std::span<const float> params) override;
  void get_parameters(std::span<float> params) override;
  // Splits `indices` over every replica of the job (this process's and, with MPI, the other
  // ranks'), runs their steps in parallel and returns the whole batch's loss and accuracy.
  // Throws ReplicaError or CollectiveError, naming the replica, when one fails.
  BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                        StepTimes& times) override;
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override;
  std::vector<ReplicaTimes> replica_times() const override { return replica_times_; }

  int local_replicas() const { return int(replicas_.size()); }
  int total_replicas() const;
  const GradientReducer& reducer() const { return *reducer_; }
  const ProcessGroup* group() const { return group_.get(); }

 protected:
  ReplicatedBackend();
  // threads: each replica's CPU thread count (its worker's ThreadCountScope).
  void assemble(std::vector<std::unique_ptr<Replica>> replicas,
                std::unique_ptr<GradientReducer> reducer, std::shared_ptr<ProcessGroup> group,
                const DataSets& data, size_t parameter_count, int threads, std::string description);

 private:
  class Workers;
  DataSets data_;
  size_t parameter_count_ = 0;
  std::string description_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<GradientReducer> reducer_;
  std::shared_ptr<ProcessGroup> group_;  // null: this process is the whole job
  std::unique_ptr<Workers> workers_;
  std::vector<ReplicaTimes> replica_times_;
};

}  // namespace gpulab
