// The reducers within one process (none, threads, parameter server), the MPI reducer over a
// ProcessGroup, and the barrier with a timeout they meet at.
#include "engine/gradient_reducer.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "engine/process_group.hpp"

namespace gpulab {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

class NoReducer final : public GradientReducer {
 public:
  std::string name() const override { return "none"; }
  void reduce(int, const BufferView&, const BufferView&, const UpdateStep&, ReduceTimes&) override {
  }
};

// Per-bucket timings, kept by one replica (replica 0) so that no lock is needed.
class BucketClock {
 public:
  explicit BucketClock(size_t buckets) : total_ms_(buckets, 0.0) {}
  void add(size_t bucket, double ms) { total_ms_[bucket] += ms; }
  void step_done() { ++steps_; }
  std::vector<double> mean_ms() const {
    std::vector<double> mean(total_ms_);
    for (double& ms : mean) ms = steps_ ? ms / double(steps_) : 0.0;
    return mean;
  }

 private:
  std::vector<double> total_ms_;
  int64_t steps_ = 0;
};

// Every replica's gradients sit in this process's memory. After all have arrived, replica r sums
// its share of every bucket over all replicas, in replica order, and writes the sum back into
// every replica's buffer; a second barrier keeps anyone from updating before all sums are in.
class ThreadsReducer final : public GradientReducer {
 public:
  ThreadsReducer(int replicas, size_t count, double bucket_bytes, double timeout_s)
      : replicas_(replicas),
        buckets_(plan_buckets(count, bucket_bytes)),
        slots_(replicas, nullptr),
        barrier_(replicas, timeout_s),
        clock_(buckets_.size()) {}
  std::string name() const override { return "threads"; }

  void reduce(int r, const BufferView& grads, const BufferView&, const UpdateStep& update,
              ReduceTimes& times) override {
    slots_[r] = grads.data;  // read by the others only after the barrier
    const std::string what = "the gradient all-reduce of step " + std::to_string(update.step);
    Clock::time_point start = Clock::now();
    barrier_.arrive_and_wait(r, what);
    times.waiting_ms += ms_since(start);
    start = Clock::now();
    for (size_t b = 0; b < buckets_.size(); ++b) {
      const Clock::time_point bucket_start = Clock::now();
      const size_t length = buckets_[b].end - buckets_[b].begin;
      const ShardRange part = shard_range(int(length), replicas_, r);
      const size_t begin = buckets_[b].begin + size_t(part.first), n = size_t(part.count);
      // ((g0 + g1) + g2) + ... element by element: the same bits whoever sums which part.
      float* sum = slots_[0] + begin;
      for (int q = 1; q < replicas_; ++q) {
        const float* g = slots_[q] + begin;
        for (size_t i = 0; i < n; ++i) sum[i] += g[i];
      }
      for (int q = 1; q < replicas_; ++q) std::memcpy(slots_[q] + begin, sum, n * sizeof(float));
      if (r == 0) clock_.add(b, ms_since(bucket_start));
    }
    times.communication_ms += ms_since(start);
    start = Clock::now();
    barrier_.arrive_and_wait(r, what + " (its end)");
    times.waiting_ms += ms_since(start);
    if (r == 0) clock_.step_done();
  }
  void abort(const std::string& reason) override { barrier_.abort(reason); }
  void reset() override { barrier_.reset(); }
  std::vector<double> bucket_ms() const override { return clock_.mean_ms(); }

 private:
  int replicas_;
  std::vector<Bucket> buckets_;
  std::vector<float*> slots_;
  TimedBarrier barrier_;
  BucketClock clock_;
};

// The server is the host's memory: the parameters, their gradient sum and the optimizer state
// live here. The last replica to arrive runs the server's part (sum the gradients it received,
// bucket by bucket and in replica order, then one optimizer step); every replica then copies the
// new parameters back.
class ParameterServer final : public GradientReducer {
 public:
  ParameterServer(int replicas, size_t count, const OptimizerConfig& optimizer, double bucket_bytes,
                  double timeout_s)
      : replicas_(replicas),
        buckets_(plan_buckets(count, bucket_bytes)),
        slots_(replicas, nullptr),
        params_(count),
        grads_(count),
        optimizer_(optimizer, count),
        barrier_(replicas, timeout_s),
        clock_(buckets_.size()) {}
  std::string name() const override { return "parameter-server"; }
  bool updates_parameters() const override { return true; }
  void set_parameters(std::span<const float> params) override {
    std::copy(params.begin(), params.end(), params_.begin());
  }

  void reduce(int r, const BufferView& grads, const BufferView& params, const UpdateStep& update,
              ReduceTimes& times) override {
    slots_[r] = grads.data;
    bool served = false;
    double serve_ms = 0, optimizer_ms = 0;
    const Clock::time_point start = Clock::now();
    barrier_.arrive_and_wait(r, "the parameter server's step " + std::to_string(update.step), [&] {
      served = true;
      const Clock::time_point sum_start = Clock::now();
      for (size_t b = 0; b < buckets_.size(); ++b) {
        const Clock::time_point bucket_start = Clock::now();
        const size_t begin = buckets_[b].begin, n = buckets_[b].end - begin;
        std::memcpy(grads_.data() + begin, slots_[0] + begin, n * sizeof(float));
        for (int q = 1; q < replicas_; ++q)
          for (size_t i = 0; i < n; ++i) grads_[begin + i] += slots_[q][begin + i];
        clock_.add(b, ms_since(bucket_start));
      }
      serve_ms = ms_since(sum_start);
      const Clock::time_point update_start = Clock::now();
      optimizer_.update(params_, grads_, update.lr, update.step);
      optimizer_ms = ms_since(update_start);
      clock_.step_done();
    });
    times.waiting_ms += ms_since(start) - serve_ms - optimizer_ms;
    times.communication_ms += serve_ms;
    times.optimizer_ms += optimizer_ms;
    (void)served;
    const Clock::time_point receive = Clock::now();
    std::memcpy(params.data, params_.data(), params_.size() * sizeof(float));
    times.communication_ms += ms_since(receive);
  }
  void abort(const std::string& reason) override { barrier_.abort(reason); }
  void reset() override { barrier_.reset(); }
  std::vector<double> bucket_ms() const override { return clock_.mean_ms(); }

 private:
  int replicas_;
  std::vector<Bucket> buckets_;
  std::vector<float*> slots_;
  std::vector<float> params_, grads_;
  HostOptimizer optimizer_;
  TimedBarrier barrier_;
  BucketClock clock_;
};

// One replica per process: a barrier first, so that waiting for the slowest rank is measured
// apart from moving the data, then one MPI all-reduce per bucket.
class MpiReducer final : public GradientReducer {
 public:
  MpiReducer(std::shared_ptr<ProcessGroup> group, size_t count, double bucket_bytes)
      : group_(std::move(group)),
        buckets_(plan_buckets(count, bucket_bytes)),
        clock_(buckets_.size()) {}
  std::string name() const override { return "mpi"; }
  void reduce(int, const BufferView& grads, const BufferView&, const UpdateStep& update,
              ReduceTimes& times) override {
    const std::string step = " of step " + std::to_string(update.step);
    Clock::time_point start = Clock::now();
    group_->barrier("the barrier before the gradient all-reduce" + step);
    times.waiting_ms += ms_since(start);
    start = Clock::now();
    for (size_t b = 0; b < buckets_.size(); ++b) {
      const Clock::time_point bucket_start = Clock::now();
      group_->sum({grads.data + buckets_[b].begin, buckets_[b].end - buckets_[b].begin},
                  "the gradient all-reduce (bucket " + std::to_string(b + 1) + " of " +
                      std::to_string(buckets_.size()) + ")" + step);
      clock_.add(b, ms_since(bucket_start));
    }
    times.communication_ms += ms_since(start);
    clock_.step_done();
  }
  std::vector<double> bucket_ms() const override { return clock_.mean_ms(); }

 private:
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Bucket> buckets_;
  BucketClock clock_;
};

}  // namespace

std::vector<Bucket> plan_buckets(size_t count, double bucket_bytes) {
  const size_t per_bucket =
      std::max<size_t>(1, bucket_bytes > 0 ? size_t(bucket_bytes / sizeof(float)) : count);
  std::vector<Bucket> buckets;
  for (size_t begin = 0; begin < count; begin += per_bucket)
    buckets.push_back({begin, std::min(count, begin + per_bucket)});
  if (buckets.empty()) buckets.push_back({0, 0});
  return buckets;
}

TimedBarrier::TimedBarrier(int parties, double timeout_s)
    : parties_(parties), timeout_s_(timeout_s), arrived_(parties, false) {}

void TimedBarrier::arrive_and_wait(int party, const std::string& what,
                                   const std::function<void()>& completion) {
  std::unique_lock lock(mutex_);
  if (!aborted_.empty()) throw CollectiveError(aborted_);
  arrived_[party] = true;
  const uint64_t generation = generation_;
  if (++waiting_ == parties_) {
    if (completion) {
      try {
        completion();
      } catch (const std::exception& e) {
        aborted_ = "replica " + std::to_string(party) + ": " + what + " failed: " + e.what();
        changed_.notify_all();
        throw CollectiveError(aborted_);
      }
    }
    waiting_ = 0;
    std::fill(arrived_.begin(), arrived_.end(), false);
    ++generation_;
    changed_.notify_all();
    return;
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  while (generation_ == generation && aborted_.empty()) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        generation_ == generation && aborted_.empty()) {
      std::string missing;
      for (int p = 0; p < parties_; ++p)
        if (!arrived_[p]) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
      aborted_ = "replica " + std::to_string(party) + ": " + what + " timed out after " +
                 seconds_text(timeout_s_) + " s waiting for replica " + missing + " of " +
                 std::to_string(parties_) + " (--collective-timeout)";
      changed_.notify_all();
      throw CollectiveError(aborted_);
    }
  }
  if (generation_ == generation) throw CollectiveError(aborted_);
}

void TimedBarrier::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (aborted_.empty()) aborted_ = reason;
  changed_.notify_all();
}

void TimedBarrier::reset() {
  std::lock_guard lock(mutex_);
  aborted_.clear();
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
