// The one-GPU backend. A training step: the index list and the step's scalars go over in one
// copy from pinned memory, the batch is gathered and normalized on the device from the data set
// uploaded once as bytes, then forward, backward and the fused optimizer update run on one
// stream. After a warm-up step each phase is captured into a CUDA graph and replayed; timing
// events sit between the phases (outside the graphs), so the step-time breakdown means the same
// with graphs on or off. The host waits only for the loss: backward and the update of step N
// overlap the host's work for step N+1, and step N's breakdown is read during step N+1.
#include "engine/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "datasets/mnist.hpp"
#include "engine/cuda_network.hpp"
#include "engine/devices.hpp"
#include "engine/errors.hpp"
#include "kernels/cuda/gather.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/optimizer.cuh"

namespace gpulab {
namespace {

namespace kc = kernels::cuda;

// What the host sends each step, in one copy: the scalars, then the batch's indices.
struct StepScalars {
  uint64_t step = 0;  // from 1; seeds dropout and Adam's bias corrections
  float lr = 0;
  int32_t unused = 0;
};
constexpr size_t kIndicesOffset = sizeof(StepScalars);
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;  // NVIDIA's advice for Hopper
constexpr size_t kStagingBytes = size_t(8) << 20;

// A data set on the device, as the bytes of the IDX files.
struct DeviceImageSet {
  kc::DeviceBuffer<uint8_t> pixels, labels;
  int count = 0, image_size = 0;
};

// The events that time one step: start | copy | gather | forward (+ loss copy) | backward |
// optimizer.
struct StepEvents {
  kc::Event start, copied, gathered, forward, backward, optimizer;
};

kc::Precision kernel_precision(Precision p) {
  return p == Precision::Tf32   ? kc::Precision::Tf32
         : p == Precision::Bf16 ? kc::Precision::Bf16
                                : kc::Precision::Fp32;
}

double elapsed_ms(const kc::Event& from, const kc::Event& to) {
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}

void check_indices(std::span<const int32_t> indices, int count) {
  for (const int32_t index : indices)
    if (index < 0 || index >= count)
      throw std::out_of_range("gather_batch: index " + std::to_string(index) +
                              " is outside a set of " + std::to_string(count) + " images");
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const ModelPlan& plan, const OptimizerConfig& optimizer, const DataSets& data,
              const BackendOptions& options);
  ~CudaBackend() override;
  std::string description() const override;
  size_t parameter_count() const override { return size_t(plan_.parameter_count); }
  void set_parameters(std::span<const float> params) override;
  void get_parameters(std::span<float> params) override;
  BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                        StepTimes& times) override;
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override;
  void synchronize() override;
  CudaGraphCounts graph_counts() const { return graph_counts_; }

 private:
  enum Phase { kGather, kForward, kBackward, kOptimizer };
  struct Captured {
    int eager_runs = 0;
    kc::GraphExec exec;
  };
  // Everything on the device, dropped at once when the GPU fails.
  struct State {
    // Declared in the order of need, destroyed in reverse: the handle goes before its
    // workspace, everything before the stream.
    kc::Stream stream;
    kc::DeviceBuffer<uint8_t> blas_workspace;
    kc::CublasHandle blas;
    kc::DeviceBuffer<uint8_t> inputs;       // StepScalars, then (batch) int32 indices
    kc::PinnedBuffer<uint8_t> host_inputs;  // the same layout
    kc::PinnedBuffer<DeviceLoss> host_loss;
    kc::PinnedBuffer<uint8_t> staging;  // uploads and parameter copies pass through here
    kc::DeviceBuffer<float> images;     // (batch, image_size)
    kc::DeviceBuffer<uint8_t> labels;   // (batch)
    std::map<Split, DeviceImageSet> sets;
    std::unique_ptr<CudaNetwork> network;
    kc::DeviceBuffer<float> first, second;  // optimizer state: velocity or exp_avg; exp_avg_sq
    StepEvents events[2];                   // steps alternate: one is read while one runs
    std::map<std::pair<int, int>, Captured> graphs;  // (phase, batch)
  };

  void build(const DataSets& data);
  void upload(void* device, const void* host, size_t bytes);
  void run_phase(Phase phase, int batch, const std::function<void()>& enqueue);
  void enqueue_optimizer();
  State& state();
  // Runs f with this GPU current; a CUDA failure frees the device state (resetting the device
  // after a sticky fault) and is rethrown saying what to do.
  template <class F>
  auto guarded(F&& f) -> decltype(f());
  [[noreturn]] void fail(const kc::CudaError& e);
  void release_state();

  ModelPlan plan_;
  OptimizerConfig optimizer_;
  BackendOptions options_;
  int device_;
  GpuInfo gpu_;
  std::unique_ptr<State> state_;
  int64_t steps_done_ = 0;
  CudaGraphCounts graph_counts_;
  std::string failure_;
};

CudaBackend::CudaBackend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                         const DataSets& data, const BackendOptions& options)
    : plan_(plan),
      optimizer_(optimizer),
      options_(options),
      device_(cuda_device_index(options.device)),
      gpu_(require_gpu(options.device)) {
  if (options.batch < 1) throw ConfigError("--batch must be at least 1");
  guarded([&] { build(data); });
}

CudaBackend::~CudaBackend() {
  if (cudaSetDevice(device_) != cudaSuccess) cudaGetLastError();
  release_state();
}

void CudaBackend::release_state() {
  // The last step's backward and update may still be running on the stream, reading and writing
  // the buffers about to be freed: cudaFree only may synchronize, so wait here. After a fault the
  // wait returns the sticky error at once.
  if (state_ && state_->stream && cudaStreamSynchronize(state_->stream.get()) != cudaSuccess)
    cudaGetLastError();
  state_.reset();
}

template <class F>
auto CudaBackend::guarded(F&& f) -> decltype(f()) {
  try {
    GPULAB_CUDA_CHECK(cudaSetDevice(device_));
    return f();
  } catch (const kc::CudaError& e) {
    fail(e);
  }
}

void CudaBackend::fail(const kc::CudaError& e) {
  std::string message = options_.device + ": ";
  cudaGetLastError();  // clears the error, unless it is sticky
  if (e.kind() == kc::ErrorKind::OutOfMemory) {
    message += e.what();
    // cuBLAS and graph instantiation say only that they failed: add what the device had free.
    size_t free = 0, total = 0;
    if (message.find(" free of ") == std::string::npos &&
        cudaMemGetInfo(&free, &total) == cudaSuccess)
      message +=
          " (" + kc::mebibytes(double(free)) + " free of " + kc::mebibytes(double(total)) + ")";
    message += "; try a smaller --batch (now " + std::to_string(options_.batch) + ")";
  }
  release_state();  // frees the device memory now, so that the next run has it
  // Only a sticky error leaves the context unusable: an illegal or misaligned address, a trap or
  // a device-side assert, a launch failure or timeout, an uncorrectable ECC error (the DeviceFault
  // kind). Every later call in the process then fails with it, so only a reset gives the next
  // run a working context, and it is done for those alone: a reset destroys the context of the
  // whole process, with the state of every other replica on this GPU (which a sticky error has
  // spoiled already). Out of memory, a bad argument or a cuBLAS failure that left the context
  // intact free this backend's state and nothing else.
  const bool reset = kc::context_is_broken();
  if (reset) {
    cudaDeviceReset();
    cudaGetLastError();
  }
  if (e.kind() == kc::ErrorKind::OutOfMemory) {
    if (reset) message += " (the GPU was reset)";
  } else if (reset) {
    message += std::string("the GPU failed and was reset; the run ends here: ") + e.what();
  } else if (e.kind() == kc::ErrorKind::DeviceFault) {
    message += std::string("the GPU failed; the run ends here: ") + e.what();
  } else {
    message += e.what();
  }
  failure_ = message;
  throw kc::CudaError(e.kind(), e.code(), e.expression(), e.file().c_str(), e.line(), message);
}

CudaBackend::State& CudaBackend::state() {
  if (!state_)
    throw std::logic_error(options_.device + ": the GPU backend failed earlier: " + failure_);
  return *state_;
}

void CudaBackend::upload(void* device, const void* host, size_t bytes) {
  State& s = state();
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t chunk = std::min(kStagingBytes, bytes - done);
    std::memcpy(s.staging.data(), static_cast<const uint8_t*>(host) + done, chunk);
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(device) + done, s.staging.data(), chunk,
                                      cudaMemcpyHostToDevice, s.stream.get()));
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));  // the staging buffer is reused
  }
}

void CudaBackend::build(const DataSets& data) {
  state_ = std::make_unique<State>();
  State& s = *state_;
  const int batch = options_.batch;
  const int image_size = static_cast<int>(plan_.layers.front().input.size());
  const int classes = plan_.layers.back().output.channels;
  s.stream = kc::make_stream();
  s.blas_workspace = kc::DeviceBuffer<uint8_t>(kBlasWorkspaceBytes, "the cuBLAS workspace");
  s.blas = kc::CublasHandle::create();
  kc::gemm_bind(s.blas.get(), s.stream.get(), s.blas_workspace.data(), kBlasWorkspaceBytes);
  const size_t input_bytes = kIndicesOffset + sizeof(int32_t) * size_t(batch);
  s.inputs = kc::DeviceBuffer<uint8_t>(input_bytes, "the step inputs");
  s.host_inputs = kc::PinnedBuffer<uint8_t>(input_bytes, "the step inputs");
  s.host_loss = kc::PinnedBuffer<DeviceLoss>(1, "the loss");
  s.staging = kc::PinnedBuffer<uint8_t>(kStagingBytes, "the upload staging buffer");
  s.images = kc::DeviceBuffer<float>(size_t(batch) * image_size, "the batch images");
  s.labels = kc::DeviceBuffer<uint8_t>(size_t(batch), "the batch labels");

  for (const Split split : {Split::Train, Split::Validation, Split::Test}) {
    const data::ImageSet* set = split == Split::Train        ? data.train
                                : split == Split::Validation ? data.validation
                                                             : data.test;
    if (!set) continue;
    if (set->image_size() != image_size)
      throw ConfigError("the model expects " + std::to_string(image_size) +
                        " values per image but the " + split_name(split) + " set has " +
                        std::to_string(set->image_size()));
    for (const uint8_t label : set->labels)
      if (label >= classes)
        throw ConfigError(std::string("the ") + split_name(split) + " set has label " +
                          std::to_string(label) + " but the model has " + std::to_string(classes) +
                          " classes");
    DeviceImageSet& device = s.sets[split];
    device.count = set->count;
    device.image_size = image_size;
    const std::string name = std::string("the ") + split_name(split) + " set";
    device.pixels = kc::DeviceBuffer<uint8_t>(set->pixels.size(), name + " images");
    device.labels = kc::DeviceBuffer<uint8_t>(set->labels.size(), name + " labels");
    upload(device.pixels.data(), set->pixels.data(), set->pixels.size());
    upload(device.labels.data(), set->labels.data(), set->labels.size());
  }

  const auto* step =
      reinterpret_cast<const uint64_t*>(s.inputs.data() + offsetof(StepScalars, step));
  s.network = std::make_unique<CudaNetwork>(plan_, batch, kernel_precision(options_.precision),
                                            s.blas.get(), options_.seed, step, s.stream.get());
  const size_t count = parameter_count();
  const bool adam =
      optimizer_.kind == OptimizerKind::Adam || optimizer_.kind == OptimizerKind::AdamW;
  if (optimizer_.kind != OptimizerKind::SGD) {
    s.first = kc::DeviceBuffer<float>(count, "the optimizer state");
    GPULAB_CUDA_CHECK(cudaMemsetAsync(s.first.data(), 0, count * sizeof(float), s.stream.get()));
  }
  if (adam) {
    s.second = kc::DeviceBuffer<float>(count, "the optimizer state");
    GPULAB_CUDA_CHECK(cudaMemsetAsync(s.second.data(), 0, count * sizeof(float), s.stream.get()));
  }
  for (StepEvents& e : s.events) {
    e.start = kc::make_event();
    e.copied = kc::make_event();
    e.gathered = kc::make_event();
    e.forward = kc::make_event();
    e.backward = kc::make_event();
    e.optimizer = kc::make_event();
  }
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
}

std::string CudaBackend::description() const {
  return options_.device + " " + gpu_.name + " (" + precision_name(options_.precision) +
         (options_.cuda_graph ? ", CUDA graphs)" : ")");
}

void CudaBackend::set_parameters(std::span<const float> params) {
  if (params.size() != parameter_count())
    throw std::invalid_argument("set_parameters: " + std::to_string(params.size()) +
                                " values for " + std::to_string(parameter_count()) + " parameters");
  guarded([&] {
    State& s = state();
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));  // no step still reads them
    upload(s.network->parameters(), params.data(), params.size_bytes());
  });
}

void CudaBackend::get_parameters(std::span<float> params) {
  if (params.size() != parameter_count())
    throw std::invalid_argument("get_parameters: room for " + std::to_string(params.size()) +
                                " values, " + std::to_string(parameter_count()) + " parameters");
  guarded([&] {
    State& s = state();
    const size_t bytes = params.size_bytes();
    for (size_t done = 0; done < bytes; done += kStagingBytes) {
      const size_t chunk = std::min(kStagingBytes, bytes - done);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(
          s.staging.data(), reinterpret_cast<const uint8_t*>(s.network->parameters()) + done, chunk,
          cudaMemcpyDeviceToHost, s.stream.get()));
      GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
      std::memcpy(reinterpret_cast<uint8_t*>(params.data()) + done, s.staging.data(), chunk);
    }
  });
}

void CudaBackend::run_phase(Phase phase, int batch, const std::function<void()>& enqueue) {
  State& s = state();
  if (!options_.cuda_graph) return enqueue();
  Captured& captured = s.graphs[{phase, batch}];
  cudaStream_t stream = s.stream.get();
  if (!captured.exec) {
    // The first run of a phase at a batch size is eager: cuBLAS picks its kernels and the
    // modules load, neither of which may happen during a capture.
    if (captured.eager_runs++ == 0) return enqueue();
    GPULAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      cudaGetLastError();
      throw;
    }
    cudaGraph_t graph = nullptr;
    GPULAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const kc::Graph owned(graph);
    cudaGraphExec_t exec = nullptr;
    GPULAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    captured.exec = kc::GraphExec(exec);
    ++graph_counts_.captures;
  }
  GPULAB_CUDA_CHECK(cudaGraphLaunch(captured.exec.get(), stream));
  ++graph_counts_.launches;
}

void CudaBackend::enqueue_optimizer() {
  State& s = state();
  const OptimizerConfig& c = optimizer_;
  const auto* lr = reinterpret_cast<const float*>(s.inputs.data() + offsetof(StepScalars, lr));
  const auto* step =
      reinterpret_cast<const uint64_t*>(s.inputs.data() + offsetof(StepScalars, step));
  float* params = s.network->parameters();
  const float* grads = s.network->gradients();
  const size_t n = parameter_count();
  switch (c.kind) {
    case OptimizerKind::SGD:
      kc::sgd_update(params, nullptr, grads, n, lr, 0.0f, c.weight_decay, s.stream.get());
      break;
    case OptimizerKind::Momentum:
      kc::sgd_update(params, s.first.data(), grads, n, lr, c.momentum, c.weight_decay,
                     s.stream.get());
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      kc::adam_update(params, s.first.data(), s.second.data(), grads, n, lr, c.beta1, c.beta2,
                      c.eps, c.weight_decay, c.kind == OptimizerKind::AdamW, step, s.stream.get());
      break;
  }
}

BatchStats CudaBackend::train_step(std::span<const int32_t> indices, float lr, int64_t step,
                                   StepTimes& times) {
  return guarded([&] {
    State& s = state();
    const int batch = static_cast<int>(indices.size());
    if (batch < 1 || batch > options_.batch)
      throw std::invalid_argument("batch of " + std::to_string(batch) + " exceeds the network's " +
                                  std::to_string(options_.batch));
    const DeviceImageSet& train = s.sets.at(Split::Train);
    check_indices(indices, train.count);
    cudaStream_t stream = s.stream.get();
    // The pinned inputs are free to overwrite: the previous step's copy ran before its loss,
    // which the host has waited for.
    StepScalars scalars;
    scalars.step = static_cast<uint64_t>(step);
    scalars.lr = lr;
    std::memcpy(s.host_inputs.data(), &scalars, sizeof scalars);
    std::memcpy(s.host_inputs.data() + kIndicesOffset, indices.data(), indices.size_bytes());
    const auto* device_indices = reinterpret_cast<const int32_t*>(s.inputs.data() + kIndicesOffset);

    const StepEvents& e = s.events[steps_done_ % 2];
    GPULAB_CUDA_CHECK(cudaEventRecord(e.start.get(), stream));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.inputs.data(), s.host_inputs.data(),
                                      kIndicesOffset + indices.size_bytes(), cudaMemcpyHostToDevice,
                                      stream));
    GPULAB_CUDA_CHECK(cudaEventRecord(e.copied.get(), stream));
    run_phase(kGather, batch, [&] {
      kc::gather_batch(s.images.data(), s.labels.data(), train.pixels.data(), train.labels.data(),
                       device_indices, batch, train.image_size, data::kMnistMean, data::kMnistStd,
                       stream);
    });
    GPULAB_CUDA_CHECK(cudaEventRecord(e.gathered.get(), stream));
    run_phase(kForward, batch,
              [&] { s.network->forward(s.images.data(), s.labels.data(), batch, true); });
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.host_loss.data(), s.network->loss(), sizeof(DeviceLoss),
                                      cudaMemcpyDeviceToHost, stream));
    GPULAB_CUDA_CHECK(cudaEventRecord(e.forward.get(), stream));
    run_phase(kBackward, batch, [&] { s.network->backward(); });
    GPULAB_CUDA_CHECK(cudaEventRecord(e.backward.get(), stream));
    run_phase(kOptimizer, batch, [&] { enqueue_optimizer(); });
    GPULAB_CUDA_CHECK(cudaEventRecord(e.optimizer.get(), stream));

    GPULAB_CUDA_CHECK(cudaEventSynchronize(e.forward.get()));
    // The previous step is complete (this step's forward ran after it): its breakdown is read
    // now, without waiting. The first step reports its own copy, gather and forward.
    const StepEvents& done = steps_done_ > 0 ? s.events[(steps_done_ + 1) % 2] : e;
    times = StepTimes{};
    times.copy_ms = elapsed_ms(done.start, done.copied);
    times.data_ms = elapsed_ms(done.copied, done.gathered);
    times.forward_ms = elapsed_ms(done.gathered, done.forward);
    if (steps_done_ > 0) {
      times.backward_ms = elapsed_ms(done.forward, done.backward);
      times.optimizer_ms = elapsed_ms(done.backward, done.optimizer);
    }
    ++steps_done_;
    const DeviceLoss loss = *s.host_loss.data();
    return BatchStats{loss.loss_sum, loss.correct, batch};
  });
}

void CudaBackend::synchronize() {
  guarded([&] { GPULAB_CUDA_CHECK(cudaStreamSynchronize(state().stream.get())); });
}

BatchStats CudaBackend::evaluate(Split split, std::span<const int32_t> indices) {
  return guarded([&] {
    State& s = state();
    const auto found = s.sets.find(split);
    if (found == s.sets.end())
      throw ConfigError(std::string("no ") + split_name(split) + " set was loaded");
    const DeviceImageSet& set = found->second;
    cudaStream_t stream = s.stream.get();
    auto* device_indices = reinterpret_cast<int32_t*>(s.inputs.data() + kIndicesOffset);
    BatchStats total;
    for (size_t begin = 0; begin < indices.size(); begin += options_.batch) {
      const auto chunk =
          indices.subspan(begin, std::min<size_t>(options_.batch, indices.size() - begin));
      check_indices(chunk, set.count);
      const int n = static_cast<int>(chunk.size());
      // Only the indices: the step scalars may still be read by the last step's update.
      std::memcpy(s.host_inputs.data() + kIndicesOffset, chunk.data(), chunk.size_bytes());
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(device_indices, s.host_inputs.data() + kIndicesOffset,
                                        chunk.size_bytes(), cudaMemcpyHostToDevice, stream));
      kc::gather_batch(s.images.data(), s.labels.data(), set.pixels.data(), set.labels.data(),
                       device_indices, n, set.image_size, data::kMnistMean, data::kMnistStd,
                       stream);
      s.network->forward(s.images.data(), s.labels.data(), n, false);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.host_loss.data(), s.network->loss(), sizeof(DeviceLoss),
                                        cudaMemcpyDeviceToHost, stream));
      GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
      total.loss_sum += s.host_loss.data()->loss_sum;
      total.correct += s.host_loss.data()->correct;
      total.count += n;
    }
    return total;
  });
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                           const DataSets& data, const BackendOptions& options) {
  return std::make_unique<CudaBackend>(plan, optimizer, data, options);
}

CudaGraphCounts cuda_graph_counts(const Backend& backend) {
  const auto* cuda = dynamic_cast<const CudaBackend*>(&backend);
  return cuda ? cuda->graph_counts() : CudaGraphCounts{};
}

}  // namespace gpulab
