// The reducers within one process (none, threads, parameter server), the MPI reducer over a
// ProcessGroup, and the barrier with a timeout they meet at.
#include "engine/parallel/gradient_reducer.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <sstream>
#include <thread>

#include "engine/base/clock.hpp"
#include "engine/base/threads.hpp"
#include "engine/parallel/process_group.hpp"

namespace gpulab {
namespace {

// "replica 0: the gradient all-reduce of step 7 timed out after 0.2 s waiting for replica 2 of 3
// (--collective-timeout)": the one sentence of every in-process reducer's timeout.
std::string timed_out(int party, const std::string& what, double timeout_s,
                      const std::string& missing, int parties) {
  return "replica " + std::to_string(party) + ": " + what + " timed out after " +
         seconds_text(timeout_s) + " s waiting for replica " + missing + " of " +
         std::to_string(parties) + " (--collective-timeout)";
}

class NoReducer final : public GradientReducer {
 public:
  std::string name() const override { return "none"; }
  void reduce(int, const BufferView&, const BufferView&, const UpdateStep&, ReduceTimes&) override {
  }
};

// Per-bucket timings, kept by the thread that reduces (a replica or the communication thread)
// and read by the backend's.
class BucketClock {
 public:
  explicit BucketClock(size_t buckets) : total_ms_(buckets, 0.0) {}
  void add(size_t bucket, double ms) {
    std::lock_guard lock(mutex_);
    total_ms_[bucket] += ms;
  }
  void step_done() {
    std::lock_guard lock(mutex_);
    ++steps_;
  }
  std::vector<double> mean_ms() const {
    std::lock_guard lock(mutex_);
    std::vector<double> mean(total_ms_);
    for (double& ms : mean) ms = steps_ ? ms / double(steps_) : 0.0;
    return mean;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<double> total_ms_;
  int64_t steps_ = 0;
};

// What the reducers of the replicas in this process share: the buckets, each replica's gradient
// buffer of this step, the sum over them in replica order, and the buckets' timings.
class HostReducer : public GradientReducer {
 public:
  std::vector<double> bucket_ms() const override { return clock_.mean_ms(); }

 protected:
  HostReducer(int replicas, size_t count, double bucket_bytes)
      : replicas_(replicas),
        buckets_(plan_buckets(count, bucket_bytes)),
        slots_(replicas, nullptr),
        clock_(buckets_.size()) {}
  // Adds replicas 1, 2, ... to `sum`, the n floats from `first` of replica 0's gradients or a
  // copy of them: ((g0 + g1) + g2) + ... element by element, the same bits for any bucket size.
  void add_replicas(float* sum, const std::vector<float*>& slots, size_t first, size_t n) const {
    for (int q = 1; q < replicas_; ++q) {
      const float* g = slots[size_t(q)] + first;
      for (size_t i = 0; i < n; ++i) sum[i] += g[i];
    }
  }

  const int replicas_;
  const std::vector<Bucket> buckets_;
  std::vector<float*> slots_;
  BucketClock clock_;
};

// When a bucket's reduction ran, on the steady clock.
struct Interval {
  Clock::time_point begin, end;
};

// Milliseconds of the union of `work` inside [from, to].
double busy_ms(std::vector<Interval> work, Clock::time_point from, Clock::time_point to) {
  std::sort(work.begin(), work.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  double ms = 0;
  Clock::time_point covered = from;
  for (const Interval& w : work) {
    const Clock::time_point begin = std::max(w.begin, covered), end = std::min(w.end, to);
    if (end > begin) ms += ms_between(begin, end);
    covered = std::max(covered, std::min(w.end, to));
  }
  return ms;
}

// One replica's account of a reduction it entered when its backward pass ended and left at
// `done`: the reduction's work after backward_end is communication it waited for, the rest of
// that wait is waiting for the slowest replica, and the work before backward_end is hidden.
void account(const std::vector<Interval>& work, Clock::time_point backward_end,
             Clock::time_point done, ReduceTimes& times) {
  const Clock::time_point ever{};
  const double exposed = busy_ms(work, backward_end, done);
  times.communication_ms += exposed;
  times.waiting_ms += std::max(0.0, ms_between(backward_end, done) - exposed);
  times.hidden_ms += busy_ms(work, ever, std::min(backward_end, done));
}

// Every replica's gradients sit in this process's memory. Each replica tells the reducer, as its
// backward pass goes, which gradients are final; once every replica has finished a bucket, the
// communication thread sums it in replica order and writes the sum into every replica's buffer,
// while the replicas' backward passes go on. reduce() returns when every bucket is summed.
class ThreadsReducer final : public HostReducer {
 public:
  ThreadsReducer(int replicas, size_t count, double bucket_bytes, double timeout_s)
      : HostReducer(replicas, count, bucket_bytes),
        wait_(replicas, timeout_s),
        next_(replicas, 0),
        rounds_(replicas, 0),
        finished_at_(replicas),
        arrived_(buckets_.size(), 0),
        thread_(start_thread("the gradient reducer's thread", [this] { communicate(); })) {}
  ~ThreadsReducer() override {
    {
      std::lock_guard lock(wait_.mutex());
      stopping_ = true;
    }
    work_.notify_all();
    thread_.join();
  }
  std::string name() const override { return "threads"; }

  void gradients_ready(int r, const BufferView& grads, size_t from) override {
    std::lock_guard lock(wait_.mutex());
    const Clock::time_point now = Clock::now();  // before any bucket it completes can start
    announce(r, grads.data, from);
    // Its last bucket is finished: from here on the replica computes nothing the reduction
    // could hide under.
    if (next_[size_t(r)] == buckets_.size()) finished_at_[size_t(r)] = now;
  }

  void reduce(int r, const BufferView& grads, const BufferView&, const UpdateStep& update,
              ReduceTimes& times) override {
    Clock::time_point backward_end = Clock::now();
    std::unique_lock lock(wait_.mutex());
    wait_.throw_if_aborted();
    // The step this replica takes part in. Its backward pass may have finished every bucket
    // already, and the others theirs: then the step may be complete before it got here.
    const uint64_t mine = rounds_[size_t(r)]++;
    if (completed_ == mine && next_[size_t(r)] < buckets_.size())
      announce(r, grads.data, 0);
    else
      backward_end = std::min(backward_end, finished_at_[size_t(r)]);
    wait_.wait(
        lock, seconds_after(backward_end, wait_.timeout_s()), r,
        "the gradient all-reduce of step " + std::to_string(update.step),
        [&] { return completed_ != mine; },
        [&](int q) { return next_[size_t(q)] == buckets_.size(); });
    account(last_work_, backward_end, Clock::now(), times);
  }

  void abort(const std::string& reason) override {
    std::lock_guard lock(wait_.mutex());
    wait_.abort(reason);
    queue_.clear();
  }
  // After a failure, with every replica out of reduce(): forget the failed step.
  void reset() override {
    std::unique_lock lock(wait_.mutex());
    idle_.wait(lock, [&] { return !busy_; });
    wait_.clear();
    queue_.clear();
    start_generation();
    std::fill(rounds_.begin(), rounds_.end(), completed_);
  }

 private:
  // Replica r's gradients from `from` on are final: count it in for every bucket that lies
  // there, and queue the buckets every replica has finished. Under the lock.
  void announce(int r, float* data, size_t from) {
    slots_[size_t(r)] = data;
    size_t& next = next_[size_t(r)];
    for (; next < buckets_.size() && buckets_[next].begin >= from; ++next)
      if (++arrived_[next] == replicas_) {
        queue_.push_back(next);
        work_.notify_one();
      }
  }
  void start_generation() {  // under the lock
    std::fill(next_.begin(), next_.end(), 0);
    std::fill(arrived_.begin(), arrived_.end(), 0);
    work_log_.clear();
    summed_ = 0;
  }

  // The communication thread: sums the buckets in the order they are finished.
  void communicate() {
    std::unique_lock lock(wait_.mutex());
    for (;;) {
      work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      const size_t b = queue_.front();
      queue_.pop_front();
      const std::vector<float*> slots = slots_;
      busy_ = true;
      lock.unlock();
      const Clock::time_point begin = Clock::now();
      const size_t first = buckets_[b].begin, n = buckets_[b].end - first;
      float* sum = slots[0] + first;
      add_replicas(sum, slots, first, n);
      for (int q = 1; q < replicas_; ++q)
        std::memcpy(slots[size_t(q)] + first, sum, n * sizeof(float));
      const Clock::time_point end = Clock::now();
      lock.lock();
      busy_ = false;
      idle_.notify_all();
      if (wait_.aborted()) continue;  // the step failed; reset() starts over
      clock_.add(b, ms_between(begin, end));
      work_log_.push_back({begin, end});
      if (++summed_ == buckets_.size()) {
        last_work_ = std::move(work_log_);
        clock_.step_done();
        start_generation();
        ++completed_;
        wait_.notify_all();
      }
    }
  }

  CollectiveWait wait_;  // its lock guards what follows
  std::condition_variable work_, idle_;
  std::vector<size_t> next_;      // per replica: its first bucket not yet finished
  std::vector<uint64_t> rounds_;  // per replica: the reductions it has entered
  std::vector<Clock::time_point> finished_at_;  // per replica: when it finished its last bucket
  std::vector<int> arrived_;      // per bucket: replicas that finished it
  std::deque<size_t> queue_;      // buckets every replica finished, not yet summed
  size_t summed_ = 0;             // buckets summed this step
  std::vector<Interval> work_log_, last_work_;  // this step's sums; the last complete step's
  uint64_t completed_ = 0;        // steps whose every bucket is summed
  bool busy_ = false, stopping_ = false;
  std::thread thread_;  // last: starts when everything above is ready
};

// The server is the host's memory: the parameters, their gradient sum and the optimizer state
// live here. The last replica to arrive runs the server's part (sum the gradients it received,
// bucket by bucket and in replica order, then one optimizer step); every replica then copies the
// new parameters back. No replica goes on before the server's step, so each reports the sum as
// communication and the step as optimizer time, whichever replica's thread ran them: the step's
// phases then show the update whichever replica is its critical path.
class ParameterServer final : public HostReducer {
 public:
  ParameterServer(int replicas, size_t count, const OptimizerConfig& optimizer, double bucket_bytes,
                  double timeout_s)
      : HostReducer(replicas, count, bucket_bytes),
        params_(count),
        grads_(count),
        optimizer_(optimizer, count),
        barrier_(replicas, timeout_s) {}
  std::string name() const override { return "parameter-server"; }
  bool updates_parameters() const override { return true; }
  void set_parameters(std::span<const float> params) override {
    std::copy(params.begin(), params.end(), params_.begin());
  }

  void reduce(int r, const BufferView& grads, const BufferView& params, const UpdateStep& update,
              ReduceTimes& times) override {
    slots_[r] = grads.data;
    const Clock::time_point start = Clock::now();
    barrier_.arrive_and_wait(r, "the parameter server's step " + std::to_string(update.step), [&] {
      const Clock::time_point sum_start = Clock::now();
      for (size_t b = 0; b < buckets_.size(); ++b) {
        const Clock::time_point bucket_start = Clock::now();
        const size_t begin = buckets_[b].begin, n = buckets_[b].end - begin;
        std::memcpy(grads_.data() + begin, slots_[0] + begin, n * sizeof(float));
        add_replicas(grads_.data() + begin, slots_, begin, n);
        clock_.add(b, ms_since(bucket_start));
      }
      sum_ms_ = ms_since(sum_start);
      const Clock::time_point update_start = Clock::now();
      optimizer_.update(params_, grads_, update.lr, update.step);
      update_ms_ = ms_since(update_start);
      clock_.step_done();
    });
    // Written before any replica left the barrier, and not again before every one is back.
    times.waiting_ms += std::max(0.0, ms_since(start) - sum_ms_ - update_ms_);
    times.communication_ms += sum_ms_;
    times.optimizer_ms += update_ms_;
    const Clock::time_point receive = Clock::now();
    std::memcpy(params.data, params_.data(), params_.size() * sizeof(float));
    times.communication_ms += ms_since(receive);
  }
  void abort(const std::string& reason) override { barrier_.abort(reason); }
  void reset() override { barrier_.reset(); }

 private:
  std::vector<float> params_, grads_;
  HostOptimizer optimizer_;
  TimedBarrier barrier_;
  double sum_ms_ = 0, update_ms_ = 0;  // this step's, by the replica that ran the server
};

// One replica per process. Each bucket's MPI_Iallreduce starts as soon as the backward pass
// has finished it, and the backward pass tests those in flight after each layer, which is what
// moves them along; reduce() starts the rest and waits for all. Every rank starts the same
// buckets in the same order (MPI requires it), whatever its shard. No barrier tells waiting for
// the slowest rank from communication (it would be one more collective in that order, and would
// stop the overlap): the backend splits them (measures_waiting()).
class MpiReducer final : public GradientReducer {
 public:
  MpiReducer(std::shared_ptr<ProcessGroup> group, size_t count, double bucket_bytes)
      : group_(std::move(group)),
        buckets_(plan_buckets(count, bucket_bytes)),
        clock_(buckets_.size()) {}
  std::string name() const override { return "mpi"; }
  bool measures_waiting() const override { return false; }

  void gradients_ready(int, const BufferView& grads, size_t from) override {
    const Clock::time_point now = Clock::now();
    start_through(grads, from);
    // Its last bucket is started: the rest of the backward pass hides nothing more.
    if (in_flight_.size() == buckets_.size() && !started_all_) {
      started_all_ = true;
      finished_at_ = now;
    }
    for (InFlight& f : in_flight_)
      if (!f.done && f.sum->test()) finish(f);
  }

  void reduce(int, const BufferView& grads, const BufferView&, const UpdateStep& update,
              ReduceTimes& times) override {
    Clock::time_point backward_end = Clock::now();
    if (started_all_) backward_end = std::min(backward_end, finished_at_);
    started_all_ = false;
    start_through(grads, 0);
    const std::string step = " of step " + std::to_string(update.step);
    for (size_t b = 0; b < in_flight_.size(); ++b) {
      InFlight& f = in_flight_[b];
      if (f.done) continue;
      f.sum->wait("the gradient all-reduce (bucket " + std::to_string(b + 1) + " of " +
                  std::to_string(buckets_.size()) + ")" + step);
      finish(f);
    }
    std::vector<Interval> work;
    for (size_t b = 0; b < in_flight_.size(); ++b) {
      work.push_back(in_flight_[b].when);
      clock_.add(b, ms_between(in_flight_[b].when.begin, in_flight_[b].when.end));
    }
    clock_.step_done();
    in_flight_.clear();
    account(work, backward_end, Clock::now(), times);
  }
  // A failed step leaves sums that no longer complete: the job ends (mpi_abort), so they are only
  // forgotten here.
  void reset() override {
    in_flight_.clear();
    started_all_ = false;
  }
  std::vector<double> bucket_ms() const override { return clock_.mean_ms(); }

 private:
  struct InFlight {
    std::unique_ptr<PendingCollective> sum;
    Interval when;
    bool done = false;
  };
  void start_through(const BufferView& grads, size_t from) {
    while (in_flight_.size() < buckets_.size() && buckets_[in_flight_.size()].begin >= from) {
      const Bucket& b = buckets_[in_flight_.size()];
      InFlight f;
      f.when.begin = Clock::now();
      f.sum = group_->start_sum({grads.data + b.begin, b.end - b.begin});
      in_flight_.push_back(std::move(f));
    }
  }
  static void finish(InFlight& f) {
    f.done = true;
    f.when.end = Clock::now();
  }

  std::shared_ptr<ProcessGroup> group_;
  std::vector<Bucket> buckets_;
  std::vector<InFlight> in_flight_;  // this step's, in bucket order
  bool started_all_ = false;         // during this step's backward pass, at finished_at_
  Clock::time_point finished_at_;
  BucketClock clock_;
};

}  // namespace

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

std::vector<Bucket> plan_buckets(size_t count, double bucket_bytes) {
  const size_t per_bucket =
      std::max<size_t>(1, bucket_bytes > 0 ? size_t(bucket_bytes / sizeof(float)) : count);
  std::vector<Bucket> buckets;
  for (size_t end = count; end > 0; end -= std::min(end, per_bucket))
    buckets.push_back({end - std::min(end, per_bucket), end});
  if (buckets.empty()) buckets.push_back({0, 0});
  return buckets;
}

CollectiveWait::CollectiveWait(int parties, double timeout_s)
    : parties_(parties), timeout_s_(timeout_s) {}

void CollectiveWait::throw_if_aborted() const {
  if (!reason_.empty()) throw CollectiveError(reason_);
}

void CollectiveWait::abort(const std::string& reason) {
  if (reason_.empty()) reason_ = reason;
  changed_.notify_all();
}

void CollectiveWait::fail(const std::string& reason) {
  abort(reason);
  throw CollectiveError(reason_);
}

void CollectiveWait::wait(std::unique_lock<std::mutex>& lock, Clock::time_point deadline, int party,
                          const std::string& what, const std::function<bool()>& done,
                          const std::function<bool(int)>& arrived) {
  while (!done() && reason_.empty()) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !done() &&
        reason_.empty()) {
      std::string missing;
      for (int p = 0; p < parties_; ++p)
        if (!arrived(p)) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
      fail(timed_out(party, what, timeout_s_, missing, parties_));
    }
  }
  if (!done()) throw CollectiveError(reason_);
}

TimedBarrier::TimedBarrier(int parties, double timeout_s)
    : wait_(parties, timeout_s), arrived_(parties, false) {}

void TimedBarrier::arrive_and_wait(int party, const std::string& what,
                                   const std::function<void()>& completion) {
  std::unique_lock lock(wait_.mutex());
  wait_.throw_if_aborted();
  arrived_[party] = true;
  const uint64_t generation = generation_;
  if (++waiting_ == wait_.parties()) {
    if (completion) {
      try {
        completion();
      } catch (const std::exception& e) {
        wait_.fail("replica " + std::to_string(party) + ": " + what + " failed: " + e.what());
      }
    }
    waiting_ = 0;
    std::fill(arrived_.begin(), arrived_.end(), false);
    ++generation_;
    wait_.notify_all();
    return;
  }
  wait_.wait(
      lock, seconds_after(Clock::now(), wait_.timeout_s()), party, what,
      [&] { return generation_ != generation; }, [&](int p) { return bool(arrived_[p]); });
}

void TimedBarrier::abort(const std::string& reason) {
  std::lock_guard lock(wait_.mutex());
  wait_.abort(reason);
}

void TimedBarrier::reset() {
  std::lock_guard lock(wait_.mutex());
  wait_.clear();
  waiting_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), false);
  ++generation_;
}

std::unique_ptr<GradientReducer> make_no_reducer() { return std::make_unique<NoReducer>(); }

std::unique_ptr<GradientReducer> make_threads_reducer(int replicas, size_t parameter_count,
                                                      double bucket_bytes, double timeout_s) {
  return std::make_unique<ThreadsReducer>(replicas, parameter_count, bucket_bytes, timeout_s);
}

std::unique_ptr<GradientReducer> make_parameter_server(int replicas, size_t parameter_count,
                                                       const OptimizerConfig& optimizer,
                                                       double bucket_bytes, double timeout_s) {
  return std::make_unique<ParameterServer>(replicas, parameter_count, optimizer, bucket_bytes,
                                           timeout_s);
}

std::unique_ptr<GradientReducer> make_mpi_reducer(std::shared_ptr<ProcessGroup> group,
                                                  size_t parameter_count, double bucket_bytes) {
  return std::make_unique<MpiReducer>(std::move(group), parameter_count, bucket_bytes);
}

}  // namespace gpulab
