// A replica on one GPU. A training step: the step number and the shard's indices go over in
// one copy from pinned memory, the shard is gathered and normalized on the device from the data
// set uploaded once as bytes, then forward and backward run on the replica's stream; after the
// reduction, the learning rate goes over and the fused optimizer update runs. After a warm-up
// step each phase is captured into a CUDA graph and replayed (engine/cuda/cuda_graph_cache.hpp).
#include "engine/cuda/cuda_replica.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "datasets/augment.hpp"
#include "datasets/batching.hpp"
#include "engine/cuda/cuda_failure.hpp"
#include "engine/cuda/cuda_graph_cache.hpp"
#include "engine/cuda/cuda_network.hpp"
#include "engine/cuda/cuda_optimizer.hpp"
#include "engine/cuda/cuda_staging.hpp"
#include "engine/cuda/cuda_step_timer.hpp"
#include "kernels/cuda/gather.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

namespace {

// What the host sends each step in one copy: the step, then the shard's indices.
struct StepScalars {
  uint64_t step = 0;  // from 1; seeds dropout and Adam's bias corrections
  uint64_t unused = 0;
};
constexpr size_t kIndicesOffset = sizeof(StepScalars);
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;  // NVIDIA's advice for Hopper

kc::Precision kernel_precision(Precision p) {
  return p == Precision::Tf32   ? kc::Precision::Tf32
         : p == Precision::Bf16 ? kc::Precision::Bf16
                                : kc::Precision::Fp32;
}

void check_indices(std::span<const int32_t> indices, int count) {
  for (const int32_t index : indices)
    if (index < 0 || index >= count)
      throw std::out_of_range("gather_batch: index " + std::to_string(index) +
                              " is outside a set of " + std::to_string(count) + " images");
}

}  // namespace

// Everything on the device, dropped at once when the GPU fails. Declared in the order of need,
// destroyed in reverse: the handle goes before its workspace, everything before the stream.
struct CudaReplica::State {
  kc::Stream stream;
  std::shared_ptr<const DeviceDataSets> data;
  kc::DeviceBuffer<uint8_t> blas_workspace;
  kc::CublasHandle blas;
  kc::DeviceBuffer<uint8_t> inputs;       // StepScalars, then (max_batch) int32 indices
  kc::PinnedBuffer<uint8_t> host_inputs;  // the same layout
  kc::DeviceBuffer<float> lr;             // (1)
  kc::PinnedBuffer<float> host_lr;        // (1)
  kc::PinnedBuffer<DeviceLoss> host_loss;
  kc::DeviceBuffer<float> images;         // (max_batch, image_size)
  kc::DeviceBuffer<uint8_t> labels;       // (max_batch)
  kc::PinnedBuffer<float> host_images;    // --data-on host: (max_batch, image_size)
  kc::PinnedBuffer<uint8_t> host_labels;  // --data-on host: (max_batch)
  std::unique_ptr<CudaStaging> staging;
  std::unique_ptr<CudaNetwork> network;
  std::unique_ptr<CudaOptimizer> optimizer;
  std::unique_ptr<CudaStepTimer> timer;
  std::unique_ptr<CudaGraphCache> graphs;
  StepGraphKeys keys;  // of the last training step: its backward's and its update's graphs

  const uint64_t* device_step() const {
    return reinterpret_cast<const uint64_t*>(inputs.data() + offsetof(StepScalars, step));
  }
  int32_t* device_indices() const {
    return reinterpret_cast<int32_t*>(inputs.data() + kIndicesOffset);
  }
};

CudaReplica::CudaReplica(const ModelPlan& plan, const OptimizerConfig& optimizer,
                         std::shared_ptr<const DeviceDataSets> data,
                         const CudaReplicaOptions& options)
    : plan_(plan), optimizer_(optimizer), options_(options) {
  try {
    build(std::move(data));
  } catch (...) {
    release();  // waits for its stream before the buffers go
    throw;
  }
}

void CudaReplica::build(std::shared_ptr<const DeviceDataSets> data) {
  guarded([&] {
    state_ = std::make_unique<State>();
    State& s = *state_;
    const int batch = options_.max_batch;
    const int image_size = static_cast<int>(plan_.layers.front().input.size());
    s.stream = kc::make_stream();
    s.data = std::move(data);
    s.blas_workspace = kc::DeviceBuffer<uint8_t>(kBlasWorkspaceBytes, "the cuBLAS workspace");
    s.blas = kc::CublasHandle::create();
    kc::gemm_bind(s.blas.get(), s.stream.get(), s.blas_workspace.data(), kBlasWorkspaceBytes);
    const size_t input_bytes = kIndicesOffset + sizeof(int32_t) * size_t(batch);
    s.inputs = kc::DeviceBuffer<uint8_t>(input_bytes, "the step inputs");
    s.host_inputs = kc::PinnedBuffer<uint8_t>(input_bytes, "the step inputs");
    s.lr = kc::DeviceBuffer<float>(1, "the learning rate");
    s.host_lr = kc::PinnedBuffer<float>(1, "the learning rate");
    s.host_loss = kc::PinnedBuffer<DeviceLoss>(1, "the loss");
    s.images = kc::DeviceBuffer<float>(size_t(batch) * image_size, "the batch images");
    s.labels = kc::DeviceBuffer<uint8_t>(size_t(batch), "the batch labels");
    if (options_.batches_from_host) {
      s.host_images =
          kc::PinnedBuffer<float>(size_t(batch) * image_size, "the host's batch images");
      s.host_labels = kc::PinnedBuffer<uint8_t>(size_t(batch), "the host's batch labels");
    }
    s.staging = std::make_unique<CudaStaging>();
    s.network = std::make_unique<CudaNetwork>(plan_, batch, kernel_precision(options_.precision),
                                              options_.conv, s.blas.get(), options_.seed,
                                              s.device_step(), s.stream.get());
    if (options_.with_optimizer)
      s.optimizer =
          std::make_unique<CudaOptimizer>(optimizer_, s.network->parameter_count(), s.stream.get());
    s.timer = std::make_unique<CudaStepTimer>();
    s.graphs = std::make_unique<CudaGraphCache>(options_.cuda_graph);
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
  });
}

CudaReplica::~CudaReplica() { release(); }

void CudaReplica::release() {
  if (!state_) return;
  released_counts_ = state_->graphs ? state_->graphs->counts() : released_counts_;
  if (cudaSetDevice(options_.device) != cudaSuccess) cudaGetLastError();
  // The last step's backward and update may still be running on the stream, reading and writing
  // the buffers about to be freed: cudaFree only may synchronize, so wait here. After a fault the
  // wait returns the sticky error at once.
  if (state_->stream && cudaStreamSynchronize(state_->stream.get()) != cudaSuccess)
    cudaGetLastError();
  state_.reset();
}

CudaGraphCounts CudaReplica::graph_counts() const {
  return state_ && state_->graphs ? state_->graphs->counts() : released_counts_;
}

template <class F>
auto CudaReplica::guarded(F&& f) -> decltype(f()) {
  try {
    GPULAB_CUDA_CHECK(cudaSetDevice(options_.device));
    return f();
  } catch (const kc::CudaError&) {
    fail(std::current_exception());
  }
}

void CudaReplica::fail(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const kc::CudaError& e) {
    kc::CudaError described = describe_cuda_failure(e, options_.name, options_.requested_batch);
    // A fault or out of memory: its memory goes now, so that the next run has it; the backend
    // releases the other replicas and resets a GPU a fault broke (engine/cuda/cuda_failure.hpp) once
    // all of them have let go. Any other error leaves the replica as it was.
    if (kernels::leaves_device_unusable(e.kind())) {
      release();
      failure_ = described.what();
    }
    throw described;
  }
  std::rethrow_exception(error);  // only CUDA errors come here
}

CudaReplica::State& CudaReplica::state() {
  if (!state_)
    throw std::logic_error(options_.name + ": the GPU backend failed earlier: " + failure_);
  return *state_;
}

BatchStats CudaReplica::compute_gradients(std::span<const int32_t> shard, Shard position,
                                          int64_t step, StepTimes& times) {
  return guarded([&] {
    State& s = state();
    const int rows = static_cast<int>(shard.size());
    if (rows > options_.max_batch)
      throw std::invalid_argument("batch of " + std::to_string(rows) + " exceeds the network's " +
                                  std::to_string(options_.max_batch));
    const DeviceImageSet& train = s.data->sets.at(Split::Train);
    check_indices(shard, train.count);
    // Before anything is enqueued, and before an empty shard returns: its update must not
    // replay the graph of the step before.
    s.keys.start_step(rows, position);
    cudaStream_t stream = s.stream.get();
    CudaStepTimer& timer = *s.timer;
    timer.begin_step();
    timer.record(CudaStepTimer::kStart, stream);
    // The pinned inputs are free to overwrite: the previous step's copy ran before its loss,
    // which the host has waited for. The step goes over even for an empty shard: this replica's
    // update reads it (Adam's bias corrections), as every other replica's does.
    StepScalars scalars;
    scalars.step = static_cast<uint64_t>(step);
    std::memcpy(s.host_inputs.data(), &scalars, sizeof scalars);
    if (!shard.empty())
      std::memcpy(s.host_inputs.data() + kIndicesOffset, shard.data(), shard.size_bytes());
    if (options_.batches_from_host && rows > 0) {
      // Fed as a data loader feeds a GPU: the batch is made on the host (gathered, or augmented
      // on this thread with --preprocess per-batch) and crosses the bus every step. The stream
      // waits for it from the start mark to the prepared one: the data phase; the copy phase
      // that follows is the transfer alone.
      if (options_.augment_per_batch)
        data::augment_batch(s.host_images.data(), s.host_labels.data(), *train.host, shard,
                            options_.seed, static_cast<uint64_t>(step));
      else
        data::gather_batch(s.host_images.data(), s.host_labels.data(), *train.host, shard);
    }
    timer.record(CudaStepTimer::kPrepared, stream);
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.inputs.data(), s.host_inputs.data(),
                                      kIndicesOffset + shard.size_bytes(), cudaMemcpyHostToDevice,
                                      stream));
    if (rows == 0) {
      // A last batch smaller than the replicas: nothing to add to the sum.
      GPULAB_CUDA_CHECK(cudaMemsetAsync(s.network->gradients(), 0,
                                        s.network->parameter_count() * sizeof(float), stream));
      for (const auto mark : {CudaStepTimer::kCopied, CudaStepTimer::kGathered,
                              CudaStepTimer::kForward, CudaStepTimer::kBackward})
        timer.record(mark, stream);
      GPULAB_CUDA_CHECK(cudaEventSynchronize(timer.event(CudaStepTimer::kForward)));
      times = timer.read();
      return BatchStats{};
    }
    if (options_.batches_from_host) {
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.images.data(), s.host_images.data(),
                                        sizeof(float) * size_t(rows) * train.image_size,
                                        cudaMemcpyHostToDevice, stream));
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.labels.data(), s.host_labels.data(), size_t(rows),
                                        cudaMemcpyHostToDevice, stream));
    }
    timer.record(CudaStepTimer::kCopied, stream);
    if (!options_.batches_from_host)
      s.graphs->run(s.keys.key(kGatherPhase), stream, [&] {
        kc::gather_batch(s.images.data(), s.labels.data(), train.pixels.data(), train.labels.data(),
                         s.device_indices(), rows, train.image_size, data::kMnistMean,
                         data::kMnistStd, stream);
      });
    timer.record(CudaStepTimer::kGathered, stream);
    s.graphs->run(s.keys.key(kForwardPhase), stream, [&] {
      s.network->forward(s.images.data(), s.labels.data(), rows, true, s.keys.shard());
    });
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.host_loss.data(), s.network->loss(), sizeof(DeviceLoss),
                                      cudaMemcpyDeviceToHost, stream));
    timer.record(CudaStepTimer::kForward, stream);
    if (options_.cuda_graph)
      s.graphs->run(s.keys.key(kBackwardPhase), stream, [&] { s.network->backward(); });
    else
      s.network->backward(ready_);  // the reducer starts on each bucket as it is enqueued
    timer.record(CudaStepTimer::kBackward, stream);

    GPULAB_CUDA_CHECK(cudaEventSynchronize(timer.event(CudaStepTimer::kForward)));
    // The previous step is complete (this step's forward ran after it): its breakdown is read
    // now, without waiting.
    times = timer.read();
    const DeviceLoss loss = *s.host_loss.data();
    return BatchStats{loss.loss_sum, loss.correct, rows};
  });
}

BufferView CudaReplica::gradients() {
  State& s = state();
  return {s.network->gradients(), s.network->parameter_count(), MemoryKind::Device, options_.device,
          s.stream.get()};
}

BufferView CudaReplica::parameters() {
  State& s = state();
  return {s.network->parameters(), s.network->parameter_count(), MemoryKind::Device,
          options_.device, s.stream.get()};
}

void CudaReplica::apply_update(float lr, int64_t /*step*/) {
  guarded([&] {
    State& s = state();
    if (!s.optimizer)
      throw std::logic_error(options_.name + ": its parameters are updated by a parameter server");
    cudaStream_t stream = s.stream.get();
    CudaStepTimer& timer = *s.timer;
    // A reducer has made this stream wait for the reduced gradients by now.
    timer.record(CudaStepTimer::kReduced, stream);
    // The previous copy from host_lr ran before this step's forward, which the host waited for.
    *s.host_lr.data() = lr;
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.lr.data(), s.host_lr.data(), sizeof(float),
                                      cudaMemcpyHostToDevice, stream));
    // Keyed as the step's other phases; an empty shard's update has no key and runs eagerly.
    s.graphs->run(s.keys.key(kOptimizerPhase), stream, [&] {
      s.optimizer->enqueue(s.network->parameters(), s.network->gradients(), s.lr.data(),
                           s.device_step(), stream);
    });
    timer.record(CudaStepTimer::kOptimizer, stream);
  });
}

void CudaReplica::set_parameters(std::span<const float> params) {
  guarded([&] {
    State& s = state();
    if (params.size() != s.network->parameter_count())
      throw std::invalid_argument("set_parameters: " + std::to_string(params.size()) +
                                  " values for " + std::to_string(s.network->parameter_count()) +
                                  " parameters");
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));  // no step still reads them
    s.staging->upload(s.network->parameters(), params.data(), params.size_bytes(), s.stream.get());
  });
}

void CudaReplica::get_parameters(std::span<float> params) {
  guarded([&] {
    State& s = state();
    if (params.size() != s.network->parameter_count())
      throw std::invalid_argument("get_parameters: room for " + std::to_string(params.size()) +
                                  " values, " + std::to_string(s.network->parameter_count()) +
                                  " parameters");
    s.staging->download(params.data(), s.network->parameters(), params.size_bytes(),
                        s.stream.get());
  });
}

void CudaReplica::synchronize() {
  guarded([&] { GPULAB_CUDA_CHECK(cudaStreamSynchronize(state().stream.get())); });
}

BatchStats CudaReplica::evaluate(const data::ImageSet& host_set, std::span<const int32_t> indices) {
  return guarded([&] {
    State& s = state();
    const DeviceImageSet* found = s.data->find(host_set);
    if (!found) throw std::logic_error("evaluate: a set that was never uploaded to the GPU");
    const DeviceImageSet& set = *found;
    cudaStream_t stream = s.stream.get();
    BatchStats total;
    const size_t chunk_size = size_t(options_.max_batch);
    for (size_t begin = 0; begin < indices.size(); begin += chunk_size) {
      const auto chunk = indices.subspan(begin, std::min(chunk_size, indices.size() - begin));
      check_indices(chunk, set.count);
      const int n = static_cast<int>(chunk.size());
      // Only the indices: the step may still be read by the last step's update.
      std::memcpy(s.host_inputs.data() + kIndicesOffset, chunk.data(), chunk.size_bytes());
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(s.device_indices(), s.host_inputs.data() + kIndicesOffset,
                                        chunk.size_bytes(), cudaMemcpyHostToDevice, stream));
      kc::gather_batch(s.images.data(), s.labels.data(), set.pixels.data(), set.labels.data(),
                       s.device_indices(), n, set.image_size, data::kMnistMean, data::kMnistStd,
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

}  // namespace gpulab
