// Reducing GPU replicas' gradients: a kernel on each GPU, NCCL between GPUs, one communication
// stream per GPU. The last replica to reach the barrier enqueues the whole reduction for every
// GPU (NCCL's group call from one thread), so nothing is launched unless every replica is there.
// Across MPI ranks the same thread also takes this rank's part: an MPI barrier, then NCCL (its
// communicator bootstrapped with rank 0's id, broadcast over MPI) or pinned host memory and MPI.
#include "engine/cuda/cuda_reducer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <thread>

#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "gpulab/build_config.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/replica_sum.cuh"

#if GPULAB_NCCL_ENABLED
#include "engine/cuda/nccl.hpp"
#endif

namespace gpulab {
namespace {

namespace kc = kernels::cuda;
// Restores the calling thread's current device when it goes.
class DeviceScope {
 public:
  DeviceScope() {
    if (cudaGetDevice(&saved_) != cudaSuccess) cudaGetLastError();
  }
  ~DeviceScope() {
    if (cudaSetDevice(saved_) != cudaSuccess) cudaGetLastError();
  }

 private:
  int saved_ = 0;
};

class GpuReducer final : public CudaReducer {
 public:
  GpuReducer(const std::vector<int>& replica_devices, size_t count, double bucket_bytes,
             double timeout_s, const CudaRanks& ranks);
  ~GpuReducer() override { release(); }
  std::string name() const override {
    const bool shared = groups_.size() != replica_group_.size();  // a GPU with several replicas
    if (transport_.transport == RankTransport::HostMpi)
      return shared ? "device+mpi-host" : "mpi-host";
    if (groups_.size() == 1 && transport_.transport == RankTransport::None) return "device";
    return shared ? "nccl+device" : "nccl";
  }
  void gradients_ready(int local_replica, const BufferView& grads, size_t from) override;
  void reduce(int local_replica, const BufferView& grads, const BufferView& params,
              const UpdateStep& update, ReduceTimes& times) override;
  void abort(const std::string& reason) override { barrier_.abort(reason); }
  void reset() override;
  void release() override;
  std::vector<double> bucket_ms() const override {
    return host_reducer_ ? host_reducer_->bucket_ms() : std::vector<double>{};
  }
  std::string transport_reason() const override { return transport_.reason; }

 private:
  // The replicas on one GPU; the first is its leader, whose buffer NCCL reduces.
  struct Group {
    int device = 0;
    std::vector<int> replicas;
    kc::Stream stream;           // the communication stream
    kc::Event reduced;           // the replicas' streams wait for it
    kc::Event start[2], end[2];  // steps alternate, as the replicas' timing events do
#if GPULAB_NCCL_ENABLED
    ncclComm_t comm = nullptr;
#endif
  };
  // Replica r's gradients from `from` on are enqueued on its stream: records its event for each
  // bucket that lies there, and enqueues, in bucket order, every bucket all replicas have
  // reached. Under enqueue_mutex_.
  void announce(int r, const BufferView& grads, size_t from);
  void begin_step();              // before a step's first bucket: the last step's times
  void enqueue_bucket(size_t b);  // on every GPU's communication stream
  void connect_ranks();                              // this rank's NCCL communicator
  // Across ranks through host memory: the leader's sum to pinned memory, MPI, and back.
  void exchange_through_host(Group& g, const UpdateStep& update);
  // Waits for `event` on g's device until it completes, its communicator reports an error or
  // the collective timeout passes; throws CollectiveError naming this rank and its GPU.
  void wait_for(cudaEvent_t event, const Group& g, const std::string& what);
  // The same error with this rank and its GPU in front of the message.
  kc::CudaError on_this_rank(const kc::CudaError& e) const;

  size_t count_;
  std::vector<Bucket> buckets_;
  std::vector<Group> groups_;
  std::vector<int> replica_group_;  // replica -> its group
  std::vector<float*> gradients_;   // per replica, this step's
  TimedBarrier barrier_;
  // Buckets are enqueued as the replicas' backward passes reach them (gradients_ready), in
  // bucket order, by whichever replica's thread completes one; reduce() enqueues the rest.
  std::mutex enqueue_mutex_;
  std::vector<std::vector<kc::Event>> bucket_ready_;  // [replica][bucket], on its stream
  std::vector<size_t> next_;                          // per replica: its first bucket not reached
  std::vector<int> arrived_;                          // per bucket: replicas that reached it
  size_t enqueued_ = 0;                               // this step's buckets enqueued
  int64_t begun_ = 0;       // steps whose first bucket was enqueued
  int64_t timed_from_ = 2;  // the first step whose times can be read (see begin_step)
  int64_t last_step_ = 0;   // the step number of the last reduce(), for messages
  std::vector<int64_t> rounds_;  // per replica: its reduce() calls
  // Per replica, on its stream, per step slot: its backward pass has ended (a step's times are
  // read one step later, so steps alternate between two slots).
  std::vector<kc::Event> backward_end_[2];
  // The last step read: per replica, the reduction after its backward pass (communication) and
  // during it (hidden).
  std::vector<double> last_exposed_ms_, last_hidden_ms_;
  bool released_ = false;
  double timeout_s_;
  // Across MPI ranks (one group, this rank's GPU).
  std::shared_ptr<ProcessGroup> group_;
  TransportChoice transport_;
  std::string where_;                              // "rank 1 of 2 (host a, cuda:0)"
  std::unique_ptr<GradientReducer> host_reducer_;  // the MPI reducer, over host_gradients_
  kc::PinnedBuffer<float> host_gradients_;         // (count)
  kc::Event copied_;                               // the sum has reached host_gradients_
  double host_communication_ms_ = 0;  // this step's copies and MPI sums, through host memory
  double nccl_wait_ms_ = 0;  // this step's wait for NCCL across the ranks (its time is measured
                             // on the GPU, as communication)
#if GPULAB_NCCL_ENABLED
  const NcclApi* nccl_ = nullptr;
#endif
};

GpuReducer::GpuReducer(const std::vector<int>& replica_devices, size_t count, double bucket_bytes,
                       double timeout_s, const CudaRanks& ranks)
    : count_(count),
      buckets_(plan_buckets(count, bucket_bytes)),
      replica_group_(replica_devices.size()),
      gradients_(replica_devices.size(), nullptr),
      barrier_(int(replica_devices.size()), timeout_s),
      bucket_ready_(replica_devices.size()),
      next_(replica_devices.size(), 0),
      arrived_(buckets_.size(), 0),
      rounds_(replica_devices.size(), 0),
      last_exposed_ms_(replica_devices.size(), 0.0),
      last_hidden_ms_(replica_devices.size(), 0.0),
      timeout_s_(timeout_s) {
  if (ranks.group && ranks.group->size() > 1) {
    group_ = ranks.group;
    transport_ = ranks.transport;
    where_ = "rank " + std::to_string(group_->rank()) + " of " + std::to_string(group_->size()) +
             " (host " + group_->host() + ", cuda:" + std::to_string(replica_devices.front()) + ")";
    for (const int device : replica_devices)
      if (device != replica_devices.front())
        throw std::logic_error("a GPU rank under MPI drives one GPU");
    if (transport_.transport == RankTransport::None)
      throw std::logic_error("GPU ranks under MPI need a transport between them");
  }
  const DeviceScope scope;
  for (size_t r = 0; r < replica_devices.size(); ++r) {
    const int device = replica_devices[r];
    auto found = std::find_if(groups_.begin(), groups_.end(),
                              [&](const Group& g) { return g.device == device; });
    if (found == groups_.end()) {
      groups_.emplace_back();
      groups_.back().device = device;
      found = groups_.end() - 1;
    }
    if (int(found->replicas.size()) == kc::kMaxReplicaBuffers)
      throw ConfigError("--device: at most " + std::to_string(kc::kMaxReplicaBuffers) +
                        " replicas on one GPU");
    found->replicas.push_back(int(r));
    replica_group_[r] = int(found - groups_.begin());
    GPULAB_CUDA_CHECK(cudaSetDevice(device));
    for (auto& slot : backward_end_) slot.push_back(kc::make_event());
    for (size_t b = 0; b < buckets_.size(); ++b) bucket_ready_[r].push_back(kc::make_event(false));
  }
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    g.stream = kc::make_stream();
    g.reduced = kc::make_event(false);
    for (int slot = 0; slot < 2; ++slot) {
      g.start[slot] = kc::make_event();
      g.end[slot] = kc::make_event();
    }
  }
  if (groups_.size() > 1) {
#if GPULAB_NCCL_ENABLED
    std::string why;
    nccl_ = load_nccl(&why);
    if (!nccl_) throw ConfigError("--device: several GPUs need NCCL: " + why);
    std::vector<int> devices;
    for (const Group& g : groups_) devices.push_back(g.device);
    std::vector<ncclComm_t> comms(groups_.size(), nullptr);
    GPULAB_NCCL_API_CHECK(*nccl_,
                          nccl_->comm_init_all(comms.data(), int(devices.size()), devices.data()));
    for (size_t g = 0; g < groups_.size(); ++g) groups_[g].comm = comms[g];
#else
    throw ConfigError("--device: several GPUs need NCCL, and this build has none (GPULAB_NCCL)");
#endif
  }
  if (!group_) return;
  try {
    Group& g = groups_.front();
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    if (transport_.transport == RankTransport::HostMpi) {
      host_gradients_ = kc::PinnedBuffer<float>(count_, "the gradients' copy for MPI");
      copied_ = kc::make_event(false);
      host_reducer_ = make_mpi_reducer(group_, count_, bucket_bytes);
    } else {
      connect_ranks();
    }
  } catch (const kc::CudaError& e) {
    release();  // a communicator made before the failure is aborted, not left behind
    throw on_this_rank(e);
  } catch (...) {
    release();
    throw;
  }
}

kc::CudaError GpuReducer::on_this_rank(const kc::CudaError& e) const {
  return kc::CudaError(e.kind(), e.code(), e.expression(), e.file().c_str(), e.line(),
                       where_ + ": " + e.what());
}

void GpuReducer::connect_ranks() {
#if GPULAB_NCCL_ENABLED
  // Every rank found NCCL before choosing it (choose_rank_transport), so this is loaded already.
  std::string why;
  nccl_ = load_nccl(&why);
  if (!nccl_) throw ConfigError(where_ + ": NCCL was chosen but cannot be loaded: " + why);
  ncclUniqueId id{};
  if (group_->rank() == 0) GPULAB_NCCL_API_CHECK(*nccl_, nccl_->get_unique_id(&id));
  group_->broadcast_bytes(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)),
                          "the broadcast of rank 0's NCCL id");
  // ncclCommInitRank waits for every rank without a timeout: meet first, under one.
  group_->barrier("the barrier before NCCL's set-up");
  Group& g = groups_.front();
  ncclComm_t comm = nullptr;
  GPULAB_NCCL_API_CHECK(*nccl_, nccl_->comm_init_rank(&comm, group_->size(), id, group_->rank()));
  g.comm = comm;
#else
  throw std::logic_error(where_ + ": NCCL was chosen in a build without it");
#endif
}

void GpuReducer::release() {
  if (released_) return;
  released_ = true;
  const DeviceScope scope;
#if GPULAB_NCCL_ENABLED
  // Abort the communicators first: after a failure an all-reduce may wait for a peer that never
  // comes, and a stream holding it would never drain. Abort, unlike destroy, waits for nobody;
  // at the end of a healthy run nothing is in flight (the backend synchronized), so it costs
  // nothing there.
  for (Group& g : groups_) {
    if (cudaSetDevice(g.device) != cudaSuccess) cudaGetLastError();
    if (g.comm) nccl_->comm_abort(g.comm);
    g.comm = nullptr;
  }
#endif
  for (Group& g : groups_) {
    if (cudaSetDevice(g.device) != cudaSuccess) cudaGetLastError();
    // Its reductions may still run, on buffers and events about to go.
    if (g.stream && cudaStreamSynchronize(g.stream.get()) != cudaSuccess) cudaGetLastError();
    g = Group{};
  }
  for (auto& slot : backward_end_)
    for (kc::Event& event : slot) event = kc::Event();
  for (auto& events : bucket_ready_)
    for (kc::Event& event : events) event = kc::Event();
  // Its last copy from the GPU has ended with the stream; no copy to the GPU reads it any more.
  copied_ = kc::Event();
  host_gradients_ = kc::PinnedBuffer<float>();
}

void GpuReducer::gradients_ready(int r, const BufferView& grads, size_t from) {
  // Through host memory the host waits for the whole sum before MPI: nothing to gain early.
  if (released_ || transport_.transport == RankTransport::HostMpi) return;
  const std::lock_guard lock(enqueue_mutex_);
  try {
    announce(r, grads, from);
  } catch (const kc::CudaError& e) {
    if (group_) throw on_this_rank(e);
    throw;
  }
}

void GpuReducer::announce(int r, const BufferView& grads, size_t from) {
  const DeviceScope scope;
  gradients_[size_t(r)] = grads.data;
  size_t& next = next_[size_t(r)];
  if (next < buckets_.size() && buckets_[next].begin >= from) {
    GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
    for (; next < buckets_.size() && buckets_[next].begin >= from; ++next) {
      GPULAB_CUDA_CHECK(cudaEventRecord(bucket_ready_[size_t(r)][next].get(),
                                        static_cast<cudaStream_t>(grads.stream)));
      ++arrived_[next];
    }
  }
  const int replicas = int(replica_group_.size());
  while (enqueued_ < buckets_.size() && arrived_[enqueued_] == replicas) {
    if (enqueued_ == 0) begin_step();
    enqueue_bucket(enqueued_++);
  }
}

void GpuReducer::reset() {
  barrier_.reset();
  const std::lock_guard lock(enqueue_mutex_);
  // The failed step's buckets are forgotten, and its events are no anchor for timing.
  std::fill(next_.begin(), next_.end(), 0);
  std::fill(arrived_.begin(), arrived_.end(), 0);
  enqueued_ = 0;
  begun_ = std::max(begun_, *std::max_element(rounds_.begin(), rounds_.end()));
  std::fill(rounds_.begin(), rounds_.end(), begun_);
  timed_from_ = begun_ + 2;
}

void GpuReducer::reduce(int r, const BufferView& grads, const BufferView& /*params*/,
                        const UpdateStep& update, ReduceTimes& times) {
  if (released_) throw std::logic_error("the GPU reducer was released after a failure");
  if (grads.memory != MemoryKind::Device || grads.count != count_)
    throw std::logic_error("the GPU reducer takes device gradients of every parameter");
  const Clock::time_point start = Clock::now();
  auto stream = static_cast<cudaStream_t>(grads.stream);
  GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
  {
    const std::lock_guard lock(enqueue_mutex_);
    last_step_ = update.step;
    const int64_t step = rounds_[size_t(r)]++;
    GPULAB_CUDA_CHECK(cudaEventRecord(backward_end_[step % 2][size_t(r)].get(), stream));
    // What its backward pass did not announce (a replica that does not, a bucket as large as the
    // model, reductions through host memory) is enqueued now, by the last replica to come.
    announce(r, grads, 0);
  }
  barrier_.arrive_and_wait(
      r, "the gradient all-reduce of step " + std::to_string(update.step), [&] {
        try {
          const std::lock_guard lock(enqueue_mutex_);
          if (enqueued_ != buckets_.size())
            throw std::logic_error("the GPU reducer lost a bucket of step " +
                                   std::to_string(update.step));
          enqueued_ = 0;
          std::fill(next_.begin(), next_.end(), 0);
          std::fill(arrived_.begin(), arrived_.end(), 0);
          if (group_ && transport_.transport == RankTransport::Nccl) {
            // The replicas' next forward would wait for this on the device, where no timeout
            // reaches: wait here, polling, so that a rank that stopped ends the run with a
            // message (the communicator is aborted when the backend releases the reducer).
            const Clock::time_point nccl_start = Clock::now();
            Group& g = groups_.front();
            GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
            wait_for(g.reduced.get(), g,
                     "the NCCL all-reduce of step " + std::to_string(update.step));
            nccl_wait_ms_ = ms_since(nccl_start);
          }
        } catch (const kc::CudaError& e) {
          if (group_) throw on_this_rank(e);  // which rank, which GPU
          throw;
        }
      });
  GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
  // Recorded with the last bucket, before anyone left the barrier.
  GPULAB_CUDA_CHECK(
      cudaStreamWaitEvent(stream, groups_[size_t(replica_group_[size_t(r)])].reduced.get(), 0));
  // The host's wait for the slowest replica (and rank) to enqueue; what the host spent moving
  // gradients itself is communication.
  const double total_ms = ms_since(start);
  if (transport_.transport == RankTransport::HostMpi) {
    times.communication_ms = host_communication_ms_;
    times.waiting_ms = std::max(0.0, total_ms - host_communication_ms_);
  } else {
    // Measured on the GPU, a step late (the events of this step have not run yet).
    times.communication_ms = last_exposed_ms_[size_t(r)];
    times.hidden_ms = last_hidden_ms_[size_t(r)];
    times.waiting_ms = std::max(0.0, total_ms - nccl_wait_ms_);
  }
}

void GpuReducer::wait_for(cudaEvent_t event, const Group& g, const std::string& what) {
  const Clock::time_point start = Clock::now();
  const auto deadline = seconds_after(start, timeout_s_);
  for (int polls = 0;; ++polls) {
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) GPULAB_CUDA_CHECK(state);
    cudaGetLastError();  // not ready is no error of a later call
#if GPULAB_NCCL_ENABLED
    if (g.comm) {
      ncclResult_t async = ncclSuccess;
      GPULAB_NCCL_API_CHECK(*nccl_, nccl_->comm_get_async_error(g.comm, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        throw CollectiveError(where_ + ": " + what +
                              " failed in NCCL: " + nccl_->error_string(async));
    }
#else
    (void)g;
#endif
    if (Clock::now() > deadline)
      throw CollectiveError(where_ + ": " + what + " did not finish within " +
                            seconds_text(timeout_s_) +
                            " s: another rank or its GPU stopped (--collective-timeout)");
    // Spin briefly (a step's reduction takes microseconds to milliseconds), then yield the core.
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void GpuReducer::exchange_through_host(Group& g, const UpdateStep& update) {
  const Clock::time_point start = Clock::now();
  const std::string step = " of step " + std::to_string(update.step);
  float* leader = gradients_[size_t(g.replicas.front())];
  // The stream has already summed this GPU's replicas into the leader.
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(host_gradients_.data(), leader, count_ * sizeof(float),
                                    cudaMemcpyDeviceToHost, g.stream.get()));
  GPULAB_CUDA_CHECK(cudaEventRecord(copied_.get(), g.stream.get()));
  wait_for(copied_.get(), g, "the copy of the gradients to host memory" + step);
  const double copy_ms = ms_since(start);
  ReduceTimes mpi;
  host_reducer_->reduce(0, BufferView{host_gradients_.data(), count_}, BufferView{}, update, mpi);
  // Back on the stream: the copy is enqueued after the sum, and the next step's copy from the
  // GPU, which the host waits for before it touches the buffer again, follows it on the stream.
  const Clock::time_point back = Clock::now();
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(leader, host_gradients_.data(), count_ * sizeof(float),
                                    cudaMemcpyHostToDevice, g.stream.get()));
  for (size_t k = 1; k < g.replicas.size(); ++k)
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(gradients_[size_t(g.replicas[k])], leader,
                                      count_ * sizeof(float), cudaMemcpyDeviceToDevice,
                                      g.stream.get()));
  host_communication_ms_ = copy_ms + mpi.communication_ms + ms_since(back);
}

// The last step's reduction ran between its communication streams' start and end events; each
// replica's backward pass ended at its backward_end_ event. This runs when this step's first
// bucket is enqueued, which may be while the replicas still enqueue their backward passes,
// before any host waited for this step: most often all of it has completed, but not always, so
// each event is asked before it is read. Times are taken from an anchor that precedes them all:
// the end of the reduction before (the same communication stream, and every replica's stream
// waited for it), so no difference is negative. On the GPU the reduction's span, from its first
// bucket to its last, is what counts as communication: the part before a replica's backward
// ended was hidden.
void GpuReducer::begin_step() {
  const int64_t step = begun_++;
  const bool across_ranks = group_ != nullptr;
  const bool nccl = groups_.size() > 1 || transport_.transport == RankTransport::Nccl;
  // NCCL's all-reduce would wait for a missing rank without end: meet first, under the timeout.
  if (across_ranks && nccl)
    group_->barrier("the barrier before the gradient all-reduce of step " +
                    std::to_string(last_step_ + 1));
  if (step < timed_from_) return;
  const int previous = int((step - 1) % 2), anchor = int(step % 2);
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    // Each event is asked before it is read: one that has not completed (a replica's backward
    // end is on its own stream, which the reduction need not have waited for) skips this step's
    // timing for the GPU, which keeps the last one read, instead of failing the run.
    const auto since_anchor = [&](const kc::Event& event) {
      return kc::elapsed_ms_if_completed(g.end[anchor].get(), event.get());
    };
    const std::optional<double> begin = since_anchor(g.start[previous]),
                                end = since_anchor(g.end[previous]);
    if (!begin || !end) continue;
    std::vector<std::optional<double>> backward_end;
    for (const int r : g.replicas)
      backward_end.push_back(since_anchor(backward_end_[previous][size_t(r)]));
    if (std::find(backward_end.begin(), backward_end.end(), std::nullopt) != backward_end.end())
      continue;
    const double span = std::max(0.0, *end - *begin);
    for (size_t k = 0; k < g.replicas.size(); ++k) {
      const size_t r = size_t(g.replicas[k]);
      last_hidden_ms_[r] = std::clamp(*backward_end[k] - *begin, 0.0, span);
      last_exposed_ms_[r] = span - last_hidden_ms_[r];
    }
  }
}

void GpuReducer::enqueue_bucket(size_t index) {
  const DeviceScope scope;
  const bool across_gpus = groups_.size() > 1 || group_ != nullptr;
  const bool nccl = groups_.size() > 1 || transport_.transport == RankTransport::Nccl;
  const int slot = int((begun_ - 1) % 2);
  const Bucket& b = buckets_[index];
  const size_t n = b.end - b.begin;
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (const int r : g.replicas)
      GPULAB_CUDA_CHECK(
          cudaStreamWaitEvent(g.stream.get(), bucket_ready_[size_t(r)][index].get(), 0));
    if (index == 0) GPULAB_CUDA_CHECK(cudaEventRecord(g.start[slot].get(), g.stream.get()));
  }
  if (n > 0) {
    // On each GPU: the sum of its replicas, into all of them, or into the leader alone when
    // NCCL or MPI is still to add the other GPUs' sums.
    for (Group& g : groups_) {
      if (g.replicas.size() < 2) continue;
      GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
      kc::ReplicaBuffers ins, outs;
      for (const int r : g.replicas) ins.data[ins.count++] = gradients_[size_t(r)] + b.begin;
      if (across_gpus)
        outs.data[outs.count++] = ins.data[0];
      else
        outs = ins;
      kc::replica_sum(outs, ins, n, g.stream.get());
    }
#if GPULAB_NCCL_ENABLED
    if (nccl) {
      // One thread drives every GPU: the calls must form one group, or the first would wait
      // for peers that were never launched.
      GPULAB_NCCL_API_CHECK(*nccl_, nccl_->group_start());
      ncclResult_t failed = ncclSuccess;
      for (Group& g : groups_) {
        float* leader = gradients_[size_t(g.replicas.front())] + b.begin;
        const ncclResult_t result =
            nccl_->all_reduce(leader, leader, n, ncclFloat32, ncclSum, g.comm, g.stream.get());
        if (result != ncclSuccess && failed == ncclSuccess) failed = result;
      }
      const ncclResult_t ended = nccl_->group_end();
      GPULAB_NCCL_API_CHECK(*nccl_, failed);
      GPULAB_NCCL_API_CHECK(*nccl_, ended);
      for (Group& g : groups_) {
        if (g.replicas.size() < 2) continue;
        GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
        const float* leader = gradients_[size_t(g.replicas.front())] + b.begin;
        for (size_t k = 1; k < g.replicas.size(); ++k)
          GPULAB_CUDA_CHECK(cudaMemcpyAsync(gradients_[size_t(g.replicas[k])] + b.begin, leader,
                                            n * sizeof(float), cudaMemcpyDeviceToDevice,
                                            g.stream.get()));
      }
    }
#else
    (void)nccl;
#endif
  }
  if (index + 1 < buckets_.size()) return;
  // The last bucket: through host memory the whole sum goes over MPI now; then the events the
  // replicas' streams wait for.
  if (transport_.transport == RankTransport::HostMpi) {
    GPULAB_CUDA_CHECK(cudaSetDevice(groups_.front().device));
    exchange_through_host(groups_.front(), UpdateStep{0, last_step_});
  }
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    GPULAB_CUDA_CHECK(cudaEventRecord(g.end[slot].get(), g.stream.get()));
    GPULAB_CUDA_CHECK(cudaEventRecord(g.reduced.get(), g.stream.get()));
  }
}

}  // namespace

std::unique_ptr<CudaReducer> make_cuda_reducer(const std::vector<int>& replica_devices,
                                               size_t parameter_count, double bucket_bytes,
                                               double timeout_s, const CudaRanks& ranks) {
  return std::make_unique<GpuReducer>(replica_devices, parameter_count, bucket_bytes, timeout_s,
                                      ranks);
}

std::string nccl_unavailable_reason() {
#if GPULAB_NCCL_ENABLED
  std::string why;
  return load_nccl(&why) ? std::string() : why;
#else
  return "this build has no NCCL (configured with GPULAB_NCCL off or without nccl.h)";
#endif
}

std::string cuda_reducer_unavailable_reason(const std::string& device, int gpus) {
  if (gpus < 2) return {};
#if GPULAB_NCCL_ENABLED
  std::string why;
  if (!load_nccl(&why)) return "--device " + device + ": several GPUs need NCCL: " + why;
  return {};
#else
  return "--device " + device +
         ": several GPUs need NCCL, and this build has none (configured with GPULAB_NCCL off or "
         "without nccl.h); use one GPU, as cuda:0x" +
         std::to_string(gpus);
#endif
}

}  // namespace gpulab
