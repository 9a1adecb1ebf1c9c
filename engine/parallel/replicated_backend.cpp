// R replicas on persistent threads, their step in phases, and the reduction between them.
#include "engine/parallel/replicated_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/base/clock.hpp"
#include "engine/base/threads.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {

std::optional<kernels::ErrorKind> device_error_kind(const std::exception_ptr& error) {
  if (!error) return std::nullopt;
  try {
    std::rethrow_exception(error);
  } catch (const kernels::DeviceError& e) {
    return e.kind();
  } catch (const ReplicaError& e) {
    return device_error_kind(e.cause());
  } catch (...) {
  }
  return std::nullopt;
}

bool leaves_backend_unusable(const std::exception_ptr& error) {
  const std::optional<kernels::ErrorKind> kind = device_error_kind(error);
  return kind && kernels::leaves_device_unusable(*kind);
}

void add_to_message(const std::exception_ptr& error, const std::string& text) {
  if (!error || text.empty()) return;
  try {
    std::rethrow_exception(error);
  } catch (kernels::DeviceError& e) {
    e.add_to_message(text);
  } catch (ReplicaError& e) {
    e.add_to_message(text);
  } catch (...) {
  }
}

// One thread per replica, started once, each with the replica's CPU thread count. run() hands
// every thread the same job and returns when all are done; the first failure is reported (and
// the others told at once, so they stop waiting for the failed one).
class ReplicatedBackend::Workers {
 public:
  Workers(int count, int threads) {
    threads_.reserve(size_t(count));  // so that no push_back throws with a thread in hand
    try {
      for (int r = 0; r < count; ++r)
        threads_.push_back(start_thread(
            "the thread of replica " + std::to_string(r) + " of " + std::to_string(count),
            [this, r, threads] { loop(r, threads); }));
    } catch (...) {
      stop();  // the threads already started, before the error leaves
      throw;
    }
  }
  ~Workers() { stop(); }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  using Job = std::function<void(int)>;
  using OnFailure = std::function<void(int, const std::string&)>;
  // Returns the replica whose failure came first, with its message; -1 when none failed.
  int run(const Job& job, const OnFailure& on_failure, std::string* message,
          std::exception_ptr* error = nullptr) {
    std::unique_lock lock(mutex_);
    job_ = &job;
    on_failure_ = &on_failure;
    first_failure_ = -1;
    first_message_.clear();
    pending_ = int(threads_.size());
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    *message = first_message_;
    if (error) *error = first_error_;
    return first_failure_;
  }

 private:
  void loop(int r, int threads) {
    const kernels::cpu::ThreadCountScope scope(threads);
    uint64_t seen = 0;
    for (;;) {
      const Job* job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = job_;
      }
      std::string failure;
      std::exception_ptr error;
      try {
        (*job)(r);
      } catch (const std::exception& e) {
        failure = e.what();
        error = std::current_exception();
      } catch (...) {
        failure = "an unknown exception";
        error = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      if (error && first_failure_ < 0) {
        first_failure_ = r;
        first_message_ = failure;
        first_error_ = error;
        (*on_failure_)(r, failure);
      }
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const Job* job_ = nullptr;
  const OnFailure* on_failure_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  int first_failure_ = -1;
  std::string first_message_;
  std::exception_ptr first_error_;
};

ReplicatedBackend::ReplicatedBackend() = default;
ReplicatedBackend::~ReplicatedBackend() = default;

void ReplicatedBackend::assemble(std::vector<std::unique_ptr<Replica>> replicas,
                                 std::unique_ptr<GradientReducer> reducer,
                                 std::shared_ptr<ProcessGroup> group, const DataSets& data,
                                 size_t parameter_count, int threads, std::string description) {
  data_ = data;
  parameter_count_ = parameter_count;
  description_ = std::move(description);
  replicas_ = std::move(replicas);
  reducer_ = std::move(reducer);
  group_ = std::move(group);
  workers_ = std::make_unique<Workers>(int(replicas_.size()), threads);
  // Each replica tells the reducer, from its own thread, which gradients its backward pass has
  // finished, so that buckets are reduced while it goes on.
  for (size_t r = 0; r < replicas_.size(); ++r)
    replicas_[r]->set_gradients_ready([this, r](size_t from) {
      reducer_->gradients_ready(int(r), replicas_[r]->gradients(), from);
    });
}

int ReplicatedBackend::total_replicas() const {
  return local_replicas() * (group_ ? group_->size() : 1);
}

template <class F>
auto ReplicatedBackend::guarded(F&& f) -> decltype(f()) {
  if (!failure_.empty())
    throw std::logic_error(description_ + ": the backend failed earlier: " + failure_);
  try {
    return f();
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    if (!leaves_backend_unusable(error)) throw;
    // The reducer first: its work reads the replicas' buffers.
    reducer_->release();
    for (auto& replica : replicas_) replica->release();
    add_to_message(error, after_release(error));
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      failure_ = e.what();
    }
    std::rethrow_exception(error);
  }
}

void ReplicatedBackend::set_parameters(std::span<const float> params) {
  guarded([&] {
    std::vector<float> start(params.begin(), params.end());
    // Every rank starts from rank 0's weights, wherever its own came from.
    if (group_ && group_->size() > 1) group_->broadcast(start, "the initial parameters");
    for (auto& replica : replicas_) replica->set_parameters(start);
    reducer_->set_parameters(start);
  });
}

void ReplicatedBackend::get_parameters(std::span<float> params) {
  guarded([&] { replicas_.front()->get_parameters(params); });
}

void ReplicatedBackend::get_replica_parameters(int local_replica, std::span<float> params) {
  if (local_replica < 0 || local_replica >= local_replicas())
    throw std::out_of_range("replica " + std::to_string(local_replica) + " of " +
                            std::to_string(local_replicas()));
  guarded([&] { replicas_[size_t(local_replica)]->get_parameters(params); });
}

void ReplicatedBackend::synchronize() {
  guarded([&] {
    for (auto& replica : replicas_) replica->synchronize();
  });
}

BatchStats ReplicatedBackend::train_step(std::span<const int32_t> indices, float lr, int64_t step,
                                         StepTimes& times) {
  return guarded([&] { return run_step(indices, lr, step, times); });
}

BatchStats ReplicatedBackend::evaluate(Split split, std::span<const int32_t> indices) {
  return guarded([&] { return evaluate_replicas(split, indices); });
}

BatchStats ReplicatedBackend::run_step(std::span<const int32_t> indices, float lr, int64_t step,
                                       StepTimes& times) {
  const int local = local_replicas(), total = total_replicas();
  const int first_replica = group_ ? group_->rank() * local : 0;
  const int batch = int(indices.size());
  std::vector<StepTimes> phase(local);
  std::vector<ReduceTimes> reduce(local);
  std::vector<BatchStats> stats(local);
  std::vector<double> compute_ms(local, 0.0), wall_ms(local, 0.0);
  const UpdateStep update{lr, step};
  auto job = [&](int r) {
    const int replica = first_replica + r;
    Replica& model = *replicas_[r];
    const ShardRange range = shard_range(batch, total, replica);
    const Clock::time_point start = Clock::now();
    stats[r] = model.compute_gradients(indices.subspan(size_t(range.first), size_t(range.count)),
                                       Shard{range.first, batch}, step, phase[r]);
    // One replica's NaN would spread to every replica through the sum; say where it began.
    if (total > 1 && !std::isfinite(stats[r].loss_sum))
      throw ReplicaError("loss became " +
                         std::string(std::isnan(stats[r].loss_sum) ? "NaN" : "infinite") +
                         " on its shard; try a lower learning rate (--lr)");
    compute_ms[r] = ms_since(start);
    reducer_->reduce(r, model.gradients(), model.parameters(), update, reduce[r]);
    if (!reducer_->updates_parameters()) {
      const Clock::time_point update_start = Clock::now();
      model.apply_update(lr, step);
      const double update_ms = ms_since(update_start);
      if (!model.times_itself()) phase[r].optimizer_ms = update_ms;
      compute_ms[r] += update_ms;
    }
    wall_ms[r] = ms_since(start);
  };
  auto on_failure = [&](int r, const std::string& cause) {
    reducer_->abort("replica " + std::to_string(first_replica + r) + " failed at step " +
                    std::to_string(step) + ": " + cause);
  };
  std::string cause;
  std::exception_ptr error;
  const int failed = workers_->run(job, on_failure, &cause, &error);
  if (failed >= 0) {
    reducer_->reset();
    if (total == 1) std::rethrow_exception(error);  // one replica: the error as it came
    // A collective that timed out names who waited for whom, and another rank's failure note
    // names that rank and its cause: either is the step's error as it is.
    try {
      std::rethrow_exception(error);
    } catch (const CollectiveError&) {
      throw;
    } catch (...) {
    }
    throw ReplicaError("replica " + std::to_string(first_replica + failed) + " failed at step " +
                           std::to_string(step) + ": " + cause,
                       error);
  }

  // The step's phases are those of its critical path: the replica that spent longest on its own
  // work, then the exchange it waited for. The most of each phase over the replicas would add up
  // to more than the step took (replicas run their phases side by side, not one after another).
  // Its own work is what its phases measured (a GPU replica's from events, not the host's time
  // to enqueue them).
  auto own_work_ms = [&](int r) {
    double ms = reduce[r].optimizer_ms;
    for (const StepPhase& p : kStepPhases)
      if (p.ms != &StepTimes::allreduce_ms) ms += phase[r].*p.ms;
    return ms;
  };
  int slowest = 0;
  for (int r = 1; r < local; ++r)
    if (own_work_ms(r) > own_work_ms(slowest)) slowest = r;
  times = phase[slowest];
  times.allreduce_ms = times.allreduce_hidden_ms = 0;
  BatchStats sum;
  replica_times_.assign(size_t(total), ReplicaTimes{});
  for (int r = 0; r < local; ++r) {
    sum.loss_sum += stats[r].loss_sum;
    sum.correct += stats[r].correct;
    sum.count += stats[r].count;
    ReplicaTimes& t = replica_times_[size_t(first_replica + r)];
    t.replica = first_replica + r;
    t.compute_ms = compute_ms[r] + reduce[r].optimizer_ms;
    t.communication_ms = reduce[r].communication_ms;
    t.waiting_ms = reduce[r].waiting_ms;
    t.hidden_ms = reduce[r].hidden_ms;
  }
  if (group_ && group_->size() > 1) {
    // One small sum carries the step's statistics and every rank's timings to every rank.
    constexpr size_t kSlot = 4;
    std::vector<double> shared(3 + kSlot * size_t(total), 0.0);
    shared[0] = sum.loss_sum;
    shared[1] = sum.correct;
    shared[2] = sum.count;
    for (int r = 0; r < local; ++r) {
      const ReplicaTimes& t = replica_times_[size_t(first_replica + r)];
      double* slot = shared.data() + 3 + kSlot * size_t(t.replica);
      slot[0] = t.compute_ms;
      slot[1] = t.communication_ms;
      slot[2] = t.waiting_ms;
      slot[3] = t.hidden_ms;
    }
    group_->sum(shared, "the statistics of step " + std::to_string(step));
    sum = BatchStats{shared[0], int(shared[1]), int(shared[2])};
    for (int r = 0; r < total; ++r) {
      const double* slot = shared.data() + 3 + kSlot * size_t(r);
      replica_times_[size_t(r)] = ReplicaTimes{r, slot[0], slot[1], slot[2], slot[3]};
    }
  }
  if (!reducer_->measures_waiting()) {
    // The reducer's communication includes waiting for the slowest replica. The replicas start a
    // step together (they left the last one's reduction together), so a replica whose compute
    // was shorter than the slowest's waited that much longer, within what it spent reducing.
    double slowest = 0;
    for (const ReplicaTimes& t : replica_times_) slowest = std::max(slowest, t.compute_ms);
    for (ReplicaTimes& t : replica_times_) {
      const double waited = std::min(t.communication_ms, slowest - t.compute_ms);
      t.waiting_ms += waited;
      t.communication_ms -= waited;
    }
  }
  // The critical replica's wait after its backward pass: on the CPU the rest of its own wall
  // time, which is the exchange and, with MPI, waiting for slower ranks, so its phases add up to
  // its step exactly (the reducer's own timings of the exchange are busy times that may overlap
  // its other phases). A replica that times itself (a GPU's, from events, read a step late) has no
  // such wall time: there the reducer's timing of what it waited for serves.
  times.optimizer_ms = std::max(times.optimizer_ms, reduce[slowest].optimizer_ms);
  const ReplicaTimes& critical = replica_times_[size_t(first_replica + slowest)];
  times.allreduce_ms = replicas_[slowest]->times_itself()
                           ? critical.communication_ms + critical.waiting_ms
                           : std::max(0.0, wall_ms[slowest] - own_work_ms(slowest));
  for (int r = 0; r < local; ++r)
    times.allreduce_hidden_ms =
        std::max(times.allreduce_hidden_ms, replica_times_[size_t(first_replica + r)].hidden_ms);
  return sum;
}

// Each of this process's replicas evaluates an even share of the images; the sums are added in
// replica order. Every process of an MPI job evaluates all of them itself.
BatchStats ReplicatedBackend::evaluate_replicas(Split split, std::span<const int32_t> indices) {
  const data::ImageSet& set = data_.get(split);
  const int local = local_replicas();
  std::vector<BatchStats> stats(local);
  auto job = [&](int r) {
    const ShardRange range = shard_range(int(indices.size()), local, r);
    if (range.count > 0)
      stats[r] =
          replicas_[r]->evaluate(set, indices.subspan(size_t(range.first), size_t(range.count)));
  };
  std::string cause;
  std::exception_ptr error;
  const int failed = workers_->run(
      job, [](int, const std::string&) {}, &cause, &error);
  if (failed >= 0) {
    if (local == 1) std::rethrow_exception(error);
    throw ReplicaError("replica " + std::to_string(failed) + " failed to evaluate: " + cause,
                       error);
  }
  BatchStats total;
  for (const BatchStats& s : stats) {
    total.loss_sum += s.loss_sum;
    total.correct += s.correct;
    total.count += s.count;
  }
  return total;
}

}  // namespace gpulab
