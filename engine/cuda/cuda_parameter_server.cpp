// The course's parameter server with GPU replicas: each replica copies its gradients to pinned
// host memory, the host's parameter server (make_parameter_server) sums them and takes the
// optimizer step on its fp32 parameters, and each replica copies the new parameters back before
// its next forward. The whole gradient and the whole model cross the bus every step: that is the
// recipe's cost, which all-reduce on the device avoids.
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "engine/base/clock.hpp"
#include "engine/cuda/cuda_reducer.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {
namespace {

namespace kc = kernels::cuda;

class CudaParameterServer final : public CudaReducer {
 public:
  CudaParameterServer(const std::vector<int>& replica_devices, size_t count,
                      const OptimizerConfig& optimizer, double bucket_bytes, double timeout_s);
  ~CudaParameterServer() override { release(); }
  std::string name() const override { return "parameter-server"; }
  bool updates_parameters() const override { return true; }
  void set_parameters(std::span<const float> params) override { server_->set_parameters(params); }
  void reduce(int local_replica, const BufferView& grads, const BufferView& params,
              const UpdateStep& update, ReduceTimes& times) override;
  void abort(const std::string& reason) override { server_->abort(reason); }
  void reset() override { server_->reset(); }
  void release() override;
  std::vector<double> bucket_ms() const override { return server_->bucket_ms(); }

 private:
  // One replica's end of the bus: its gradients and its parameters in pinned host memory, and
  // the events around the copies on its stream, which time them on the GPU.
  struct Slot {
    int device = 0;
    kc::PinnedBuffer<float> gradients, parameters;  // (count)
    kc::Event send_start, sent, receive_start, received;
  };

  size_t count_;
  std::unique_ptr<GradientReducer> server_;  // in host memory: the parameters, the optimizer
  std::vector<Slot> slots_;                  // per replica
  bool released_ = false;
};

CudaParameterServer::CudaParameterServer(const std::vector<int>& replica_devices, size_t count,
                                         const OptimizerConfig& optimizer, double bucket_bytes,
                                         double timeout_s)
    : count_(count),
      server_(make_parameter_server(int(replica_devices.size()), count, optimizer, bucket_bytes,
                                    timeout_s)),
      slots_(replica_devices.size()) {
  for (size_t r = 0; r < slots_.size(); ++r) {
    Slot& s = slots_[r];
    s.device = replica_devices[r];
    GPULAB_CUDA_CHECK(cudaSetDevice(s.device));  // events belong to the device they time
    s.gradients = kc::PinnedBuffer<float>(count, "the gradients' copy for the parameter server");
    s.parameters = kc::PinnedBuffer<float>(count, "the parameters from the parameter server");
    s.send_start = kc::make_event();
    s.sent = kc::make_event();
    s.receive_start = kc::make_event();
    s.received = kc::make_event();
  }
}

void CudaParameterServer::release() {
  if (released_) return;
  released_ = true;
  for (Slot& s : slots_) {
    if (cudaSetDevice(s.device) != cudaSuccess) cudaGetLastError();
    // A copy may still read or write the pinned buffers. Its own events, not the replica's
    // stream, which may be gone (a failed replica releases itself first).
    for (const kc::Event* copy : {&s.sent, &s.received})
      if (*copy && cudaEventSynchronize(copy->get()) != cudaSuccess) cudaGetLastError();
    const int device = s.device;
    s = Slot();
    s.device = device;
  }
}

void CudaParameterServer::reduce(int r, const BufferView& grads, const BufferView& params,
                                 const UpdateStep& update, ReduceTimes& times) {
  if (released_) throw std::logic_error("the GPU parameter server was released after a failure");
  if (grads.memory != MemoryKind::Device || grads.count != count_ ||
      params.memory != MemoryKind::Device || params.count != count_)
    throw std::logic_error(
        "the GPU parameter server takes device gradients and parameters of every parameter");
  Slot& s = slots_[size_t(r)];
  auto stream = static_cast<cudaStream_t>(grads.stream);
  const size_t bytes = count_ * sizeof(float);
  GPULAB_CUDA_CHECK(cudaSetDevice(grads.device));
  // Device to host, after the backward pass on the replica's stream. The host waits for both:
  // the server reads the copy. The first event completes when the backward pass has, so the
  // copy's own time is the span between them, not the wait for the backward pass.
  GPULAB_CUDA_CHECK(cudaEventRecord(s.send_start.get(), stream));
  GPULAB_CUDA_CHECK(
      cudaMemcpyAsync(s.gradients.data(), grads.data, bytes, cudaMemcpyDeviceToHost, stream));
  GPULAB_CUDA_CHECK(cudaEventRecord(s.sent.get(), stream));
  GPULAB_CUDA_CHECK(cudaEventSynchronize(s.sent.get()));
  const double send_ms = kc::elapsed_ms_if_completed(s.send_start.get(), s.sent.get()).value_or(0);

  // The server on the host: the last replica to arrive sums the gradients and takes the step;
  // each replica then has the new parameters in its pinned buffer.
  ReduceTimes server;
  server_->reduce(r, BufferView{s.gradients.data(), count_},
                  BufferView{s.parameters.data(), count_}, update, server);

  // Host to device, before the next forward on the same stream. The host waits for it so that
  // this step holds the copy's time, as it holds the copy to the host.
  GPULAB_CUDA_CHECK(cudaSetDevice(params.device));
  GPULAB_CUDA_CHECK(cudaEventRecord(s.receive_start.get(), stream));
  GPULAB_CUDA_CHECK(
      cudaMemcpyAsync(params.data, s.parameters.data(), bytes, cudaMemcpyHostToDevice, stream));
  GPULAB_CUDA_CHECK(cudaEventRecord(s.received.get(), stream));
  GPULAB_CUDA_CHECK(cudaEventSynchronize(s.received.get()));
  const double receive_ms =
      kc::elapsed_ms_if_completed(s.receive_start.get(), s.received.get()).value_or(0);

  // The copies and the server's sum are communication, its step the optimizer's, the rest of
  // the server's wait the slowest replica's.
  times.communication_ms += send_ms + server.communication_ms + receive_ms;
  times.waiting_ms += server.waiting_ms;
  times.optimizer_ms += server.optimizer_ms;
}

}  // namespace

std::unique_ptr<CudaReducer> make_cuda_parameter_server(const std::vector<int>& replica_devices,
                                                        size_t parameter_count,
                                                        const OptimizerConfig& optimizer,
                                                        double bucket_bytes, double timeout_s) {
  return std::make_unique<CudaParameterServer>(replica_devices, parameter_count, optimizer,
                                               bucket_bytes, timeout_s);
}

}  // namespace gpulab
