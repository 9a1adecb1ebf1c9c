// engine/parallel: data parallelism apart from any device: replicas, the backend that steps
// them together, gradient reducers (threads, parameter server, buckets), process groups (MPI)
// and how GPU ranks pick their GPUs and transport. Over engine/devices; engine/cpu and
// engine/cuda build their backends on it.
//
// The backend of data parallelism: R replicas of the model, each on a persistent thread of its
// own, and a gradient reducer between their backward passes and their updates. With one replica
// and a reducer that does nothing it is plain training; the reduction is called all the same.
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/parallel/replica.hpp"
#include "kernels/device_error.hpp"

namespace gpulab {

// A replica's failure (an exception on its thread, a NaN loss), naming the replica; the other
// replicas stop waiting for it. `cause` is what the replica threw (null for a NaN loss), so that
// what the failure means for the backend is decided from it, not from the text.
class ReplicaError : public std::runtime_error {
 public:
  explicit ReplicaError(const std::string& message, std::exception_ptr cause = nullptr)
      : std::runtime_error(message), message_(message), cause_(std::move(cause)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::exception_ptr& cause() const { return cause_; }
  void add_to_message(const std::string& text) { message_ += text; }

 private:
  std::string message_;
  std::exception_ptr cause_;
};

// The kind of device error `error` is, or wraps as a ReplicaError's cause; none for any other.
std::optional<kernels::ErrorKind> device_error_kind(const std::exception_ptr& error);

// The one rule of every backend: whether `error` leaves it unusable, so that it must let go of
// its devices (kernels::leaves_device_unusable: a device fault, out of device memory). Any other
// error (a ConfigError, std::out_of_range, a size mismatch, a NaN loss, a collective that timed
// out) passes through with the backend as it was.
bool leaves_backend_unusable(const std::exception_ptr& error);

// Adds `text` to the message of `error`, a kernels::DeviceError or a ReplicaError; any other is
// left as it is.
void add_to_message(const std::exception_ptr& error, const std::string& text);

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
  void stop_evaluations_on(const std::atomic<bool>* stop) override {
    for (auto& replica : replicas_) replica->stop_evaluations_on(stop);
  }
  void synchronize() override;
  std::vector<ReplicaTimes> replica_times() const override { return replica_times_; }

  // This process's replica `local_replica`'s parameters (get_parameters gives replica 0's): the
  // reducer keeps every replica's equal, which tests hold it to.
  void get_replica_parameters(int local_replica, std::span<float> params);
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
  // Called once an error left the backend unusable (leaves_backend_unusable), after the reducer
  // and every replica have released what they hold: what the devices need then (the GPU backend
  // resets a GPU a fault broke). Returns text to add to the error's message, or "".
  virtual std::string after_release(const std::exception_ptr& /*error*/) { return {}; }

 private:
  class Workers;
  // Runs f. An error that leaves the backend unusable releases the reducer and every replica
  // (and after_release), and later calls throw std::logic_error saying so; any other passes
  // through with the backend still usable.
  template <class F>
  auto guarded(F&& f) -> decltype(f());
  BatchStats run_step(std::span<const int32_t> indices, float lr, int64_t step, StepTimes& times);
  BatchStats evaluate_replicas(Split split, std::span<const int32_t> indices);

  DataSets data_;
  size_t parameter_count_ = 0;
  std::string description_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<GradientReducer> reducer_;
  std::shared_ptr<ProcessGroup> group_;  // null: this process is the whole job
  std::unique_ptr<Workers> workers_;
  std::vector<ReplicaTimes> replica_times_;
  std::string failure_;  // the error that left the backend unusable; empty while it is usable
};

}  // namespace gpulab
