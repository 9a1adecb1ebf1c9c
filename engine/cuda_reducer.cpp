// Reducing GPU replicas' gradients: a kernel on each GPU, NCCL between GPUs, one communication
// stream per GPU. The last replica to reach the barrier enqueues the whole reduction for every
// GPU (NCCL's group call from one thread), so nothing is launched unless every replica is there.
#include "engine/cuda_reducer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine/errors.hpp"
#include "gpulab/build_config.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/replica_sum.cuh"

#if GPULAB_NCCL_ENABLED
#include "engine/nccl.hpp"
#endif

namespace gpulab {
namespace {

namespace kc = kernels::cuda;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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
             double timeout_s);
  ~GpuReducer() override { release(); }
  std::string name() const override {
    if (groups_.size() == 1) return "device";
    return groups_.size() == replica_group_.size() ? "nccl" : "nccl+device";
  }
  void reduce(int local_replica, const BufferView& grads, const BufferView& params,
              const UpdateStep& update, ReduceTimes& times) override;
  void abort(const std::string& reason) override { barrier_.abort(reason); }
  void reset() override { barrier_.reset(); }
  void release() override;

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
  void enqueue_reduction();  // by the last replica to arrive, the others waiting

  size_t count_;
  std::vector<Bucket> buckets_;
  std::vector<Group> groups_;
  std::vector<int> replica_group_;  // replica -> its group
  std::vector<kc::Event> ready_;    // per replica, on its device: its backward is enqueued
  std::vector<float*> gradients_;   // per replica, this step's
  TimedBarrier barrier_;
  int64_t steps_ = 0;  // reductions enqueued
  double last_communication_ms_ = 0;
  bool released_ = false;
#if GPULAB_NCCL_ENABLED
  const NcclApi* nccl_ = nullptr;
#endif
};

GpuReducer::GpuReducer(const std::vector<int>& replica_devices, size_t count, double bucket_bytes,
                       double timeout_s)
    : count_(count),
      buckets_(plan_buckets(count, bucket_bytes)),
      replica_group_(replica_devices.size()),
      ready_(replica_devices.size()),
      gradients_(replica_devices.size(), nullptr),
      barrier_(int(replica_devices.size()), timeout_s) {
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
    ready_[r] = kc::make_event(false);
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
  for (kc::Event& event : ready_) event = kc::Event();
}

void GpuReducer::reduce(int r, const BufferView& grads, const BufferView& /*params*/,
                        const UpdateStep& update, ReduceTimes& times) {
  if (released_) throw std::logic_error("the GPU reducer was released after a failure");
  if (grads.memory != MemoryKind::Device || grads.count != count_)
    throw std::logic_error("the GPU reducer takes device gradients of every parameter");
  const Clock::time_point start = Clock::now();
  auto stream = static_cast<cudaStream_t>(grads.stream);
  gradients_[size_t(r)] = grads.data;  // read by the completion, after the barrier's lock
  GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
  GPULAB_CUDA_CHECK(cudaEventRecord(ready_[size_t(r)].get(), stream));
  barrier_.arrive_and_wait(r, "the gradient all-reduce of step " + std::to_string(update.step),
                           [this] { enqueue_reduction(); });
  GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
  // Recorded by the completion before anyone left the barrier.
  GPULAB_CUDA_CHECK(
      cudaStreamWaitEvent(stream, groups_[size_t(replica_group_[size_t(r)])].reduced.get(), 0));
  times.waiting_ms = ms_since(start);  // the host's wait for the slowest replica to enqueue
  times.communication_ms = last_communication_ms_;
}

void GpuReducer::enqueue_reduction() {
  const DeviceScope scope;
  const int slot = int(steps_ % 2), previous = 1 - slot;
  // The previous reduction has completed: every replica's stream waited for it before its
  // update, and every replica has since waited for its next forward. Its time is read now.
  if (steps_ > 0) {
    double slowest = 0;
    for (Group& g : groups_) {
      GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
      if (cudaEventQuery(g.end[previous].get()) != cudaSuccess) {
        cudaGetLastError();  // not ready (a sticky fault shows at the next real call)
        continue;
      }
      float ms = 0;
      GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, g.start[previous].get(), g.end[previous].get()));
      slowest = std::max(slowest, double(ms));
    }
    last_communication_ms_ = slowest;
  }
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (const int r : g.replicas)
      GPULAB_CUDA_CHECK(cudaStreamWaitEvent(g.stream.get(), ready_[size_t(r)].get(), 0));
    GPULAB_CUDA_CHECK(cudaEventRecord(g.start[slot].get(), g.stream.get()));
  }
  const bool across_gpus = groups_.size() > 1;
  for (const Bucket& b : buckets_) {
    const size_t n = b.end - b.begin;
    if (n == 0) continue;
    // On each GPU: the sum of its replicas, into all of them, or into the leader alone when
    // NCCL is still to add the other GPUs' sums.
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
    if (across_gpus) {
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
#endif
  }
  for (Group& g : groups_) {
    GPULAB_CUDA_CHECK(cudaSetDevice(g.device));
    GPULAB_CUDA_CHECK(cudaEventRecord(g.end[slot].get(), g.stream.get()));
    GPULAB_CUDA_CHECK(cudaEventRecord(g.reduced.get(), g.stream.get()));
  }
  ++steps_;
}

}  // namespace

std::unique_ptr<CudaReducer> make_cuda_reducer(const std::vector<int>& replica_devices,
                                               size_t parameter_count, double bucket_bytes,
                                               double timeout_s) {
  return std::make_unique<GpuReducer>(replica_devices, parameter_count, bucket_bytes, timeout_s);
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
