// Data parallelism's second piece: a gradient reducer, how the replicas' gradients become the
// whole batch's. Implementations: none (one replica), threads sharing memory, a parameter
// server, MPI (engine/parallel/process_group.hpp); later one GPU with several replicas, and NCCL.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/base/clock.hpp"
#include "engine/model/optimizer.hpp"
#include "engine/parallel/replica.hpp"

namespace gpulab {

class ProcessGroup;

// A collective that could not complete: a peer that never arrived within the timeout, or a
// replica that failed while the others waited for it. The message names who and what.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another rank of an MPI job was cancelled (ProcessGroup::tell_cancel): the collective cannot
// complete, yet nothing failed. The message names that rank and the step it stopped at.
class CollectiveCancelled : public CollectiveError {
 public:
  using CollectiveError::CollectiveError;
};

// A timeout as the messages name it: 0.2, 60 (no trailing zeros).
std::string seconds_text(double seconds);

// What one replica spent in a reduction. After its backward pass a replica stands in reduce()
// until the gradients are the whole batch's: that time is communication (the reduction it
// waited for) plus waiting (for the slowest replica to arrive). Reduction that ran before, while
// it still computed, is hidden.
struct ReduceTimes {
  double communication_ms = 0;  // moving and adding gradients (or parameters), not hidden
  double waiting_ms = 0;        // standing at a barrier for the slowest replica
  double hidden_ms = 0;         // reduction that ran during this replica's backward pass
  double optimizer_ms = 0;      // a parameter server's update, which every replica waited for
};

// What the update of this step needs, for a reducer that takes it itself.
struct UpdateStep {
  float lr = 0;
  int64_t step = 0;
};

class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  virtual std::string name() const = 0;  // "none", "threads", "parameter-server", "mpi"
  // True when the reducer takes the optimizer step itself (a parameter server): replicas then
  // receive their new parameters rather than update them.
  virtual bool updates_parameters() const { return false; }
  // Called from each local replica's own thread once its backward is done, with its gradients
  // and parameters. Returns when `grads` holds the sum over every replica of the job, which is
  // the whole batch's gradient (the loss is normalized by the whole batch), or, when
  // updates_parameters(), when `params` holds the updated parameters. Throws CollectiveError.
  virtual void reduce(int local_replica, const BufferView& grads, const BufferView& params,
                      const UpdateStep& update, ReduceTimes& times) = 0;
  // Called from local replica r's thread during its backward pass (Replica::set_gradients_ready):
  // grads[from, count) are final. A reducer that overlaps the reduction with the backward pass
  // starts the buckets that lie wholly there; reduce() starts the rest and finishes. Replicas
  // may skip these calls (reduce() alone is correct), so a reducer must not count on them.
  virtual void gradients_ready(int /*local_replica*/, const BufferView& /*grads*/,
                               size_t /*from*/) {}
  // False when reduce() cannot tell waiting for the slowest replica from communication (the MPI
  // reducer, whose all-reduce waits for the last rank inside it): it reports both as
  // communication, and the backend splits them by the replicas' compute times.
  virtual bool measures_waiting() const { return true; }
  // The parameters a parameter server starts from.
  virtual void set_parameters(std::span<const float> /*params*/) {}
  // Makes every waiting and later reduce() throw CollectiveError(reason): a replica failed and
  // the others must not wait for it. reset() makes the reducer usable again.
  virtual void abort(const std::string& /*reason*/) {}
  virtual void reset() {}
  // Called once an error left the backend unusable (leaves_backend_unusable): frees what it
  // holds on devices, after waiting for its own work (errors ignored); later reductions throw.
  virtual void release() {}
  // Mean milliseconds per step spent on each bucket (on one replica), for the run record.
  virtual std::vector<double> bucket_ms() const { return {}; }
  // Why its gradients travel the way they do, where there was a choice (GPU ranks under MPI:
  // NCCL, or host memory when ranks share a GPU); empty elsewhere.
  virtual std::string transport_reason() const { return {}; }
};

// The gradient buffer cut into buckets of `bucket_bytes` (at least one float each): [begin, end).
// In the order the backward pass finishes them: the last parameters (the last layer's) first.
struct Bucket {
  size_t begin = 0, end = 0;
};
std::vector<Bucket> plan_buckets(size_t count, double bucket_bytes);

// Replicas of this process waiting for each other under one lock: a wait with a timeout whose
// message names the replicas that never came, and the failure that ends every wait, now and
// later, until clear(). TimedBarrier and the threads reducer wait through it.
class CollectiveWait {
 public:
  CollectiveWait(int parties, double timeout_s);
  std::mutex& mutex() { return mutex_; }
  int parties() const { return parties_; }
  double timeout_s() const { return timeout_s_; }
  // The rest under the lock.
  bool aborted() const { return !reason_.empty(); }
  void throw_if_aborted() const;
  // Every wait throws CollectiveError(reason) (the first reason given stays) until clear().
  void abort(const std::string& reason);
  [[noreturn]] void fail(const std::string& reason);  // abort, then throw
  void clear() { reason_.clear(); }
  void notify_all() { changed_.notify_all(); }
  // Waits until done() or an abort. At `deadline` party's `what` ("the gradient all-reduce of
  // step 5") has timed out waiting for every party p with !arrived(p): that fails every wait.
  // Throws CollectiveError unless done().
  void wait(std::unique_lock<std::mutex>& lock, Clock::time_point deadline, int party,
            const std::string& what, const std::function<bool()>& done,
            const std::function<bool(int)>& arrived);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int parties_;
  double timeout_s_;
  std::string reason_;  // once aborted
};

// Parties meet here; the last to arrive runs `completion` before anyone leaves. Waits at most
// the timeout, then throws CollectiveError naming the parties that never came.
class TimedBarrier {
 public:
  TimedBarrier(int parties, double timeout_s);
  // what: "the gradient all-reduce of step 5"; party: the caller's replica index.
  void arrive_and_wait(int party, const std::string& what,
                       const std::function<void()>& completion = {});
  void abort(const std::string& reason);
  void reset();

 private:
  CollectiveWait wait_;
  std::vector<bool> arrived_;
  int waiting_ = 0;
  uint64_t generation_ = 0;
};

// One replica: nothing to reduce; the call is still made, so the step is the same for any R.
std::unique_ptr<GradientReducer> make_no_reducer();
// R replicas in this process: a communication thread sums each bucket over all replicas in
// replica order (so the bits do not depend on timing or bucket size) as soon as every replica's
// backward pass has finished it, and writes the sum into every replica.
std::unique_ptr<GradientReducer> make_threads_reducer(int replicas, size_t parameter_count,
                                                      double bucket_bytes, double timeout_s);
// R replicas in this process and a server on the host that holds the parameters and the
// optimizer state: it sums the gradients it receives, takes the step once and sends every
// replica the new parameters.
std::unique_ptr<GradientReducer> make_parameter_server(int replicas, size_t parameter_count,
                                                       const OptimizerConfig& optimizer,
                                                       double bucket_bytes, double timeout_s);
// One replica in each process of an MPI job: each bucket is summed with MPI_Iallreduce, started
// as soon as the backward pass has finished it.
std::unique_ptr<GradientReducer> make_mpi_reducer(std::shared_ptr<ProcessGroup> group,
                                                  size_t parameter_count, double bucket_bytes);

}  // namespace gpulab
