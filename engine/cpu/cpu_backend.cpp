// The CPU replica and the CPU backend: replicas, their threads and their reducer.
#include "engine/cpu/cpu_backend.hpp"

#include <algorithm>
#include <chrono>

#include "datasets/augment.hpp"
#include "datasets/batching.hpp"
#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {
const char* split_name(Split split) {
  switch (split) {
    case Split::Train: return "train";
    case Split::Validation: return "validation";
    case Split::Test: return "test";
  }
  return "?";
}

const data::ImageSet& DataSets::get(Split split) const {
  const data::ImageSet* set = split == Split::Train ? train : split == Split::Test ? test : validation;
  if (!set) throw ConfigError(std::string("no ") + split_name(split) + " set was loaded");
  return *set;
}

CpuReplica::CpuReplica(const ModelPlan& plan, const OptimizerConfig& optimizer,
                       const DataSets& data, int max_batch, CpuKernels kernels, uint64_t seed,
                       bool with_optimizer, bool augment_per_batch)
    : data_(data),
      seed_(seed),
      augment_per_batch_(augment_per_batch),
      network_(plan, max_batch, kernels) {
  if (with_optimizer) optimizer_.emplace_back(optimizer, size_t(plan.parameter_count));
  // Every set, not only the training set: eval gives a test set alone.
  check_images_fit(plan.layers.front().input, data);
  const int image_size = static_cast<int>(plan.layers.front().input.size());
  batch_images_.resize(static_cast<size_t>(max_batch) * image_size);
  batch_labels_.resize(max_batch);
}

BatchStats CpuReplica::compute_gradients(std::span<const int32_t> shard, Shard position,
                                         int64_t step, StepTimes& times) {
  if (shard.empty()) {  // a last batch smaller than the replicas: nothing to add to the sum
    kernels::cpu::zero(network_.gradients().data(), network_.gradients().size());
    times.matmul_ms = 0;
    return {};
  }
  const int batch = static_cast<int>(shard.size());
  auto start = Clock::now();
  // The data phase: the batch assembled in host memory, the only memory the CPU trains from, so
  // there is no copy phase.
  if (augment_per_batch_)
    data::augment_batch(batch_images_.data(), batch_labels_.data(), *data_.train, shard, seed_,
                        static_cast<uint64_t>(step));
  else
    data::gather_batch(batch_images_.data(), batch_labels_.data(), *data_.train, shard);
  times.data_ms = ms_since(start);

  start = Clock::now();
  const LossStats loss =
      network_.forward(batch_images_.data(), batch_labels_.data(), batch,
                       /*training=*/true, seed_, static_cast<uint64_t>(step), position);
  times.forward_ms = ms_since(start);

  start = Clock::now();
  network_.backward(ready_);
  times.backward_ms = ms_since(start);
  times.matmul_ms = network_.matmul_ms();
  return {loss.loss_sum, loss.correct, loss.count};
}

BufferView CpuReplica::gradients() {
  return {network_.gradients().data(), network_.gradients().size()};
}

BufferView CpuReplica::parameters() {
  return {network_.parameters().data(), network_.parameters().size()};
}

void CpuReplica::apply_update(float lr, int64_t step) {
  optimizer_.at(0).update(network_.parameters(), network_.gradients(), lr, step);
}

void CpuReplica::set_parameters(std::span<const float> params) {
  std::copy(params.begin(), params.end(), network_.parameters().begin());
}

void CpuReplica::get_parameters(std::span<float> params) {
  std::copy(network_.parameters().begin(), network_.parameters().end(), params.begin());
}

BatchStats CpuReplica::evaluate(const data::ImageSet& set, std::span<const int32_t> indices) {
  const size_t chunk_size = size_t(network_.max_batch());
  BatchStats total;
  for (size_t begin = 0; begin < indices.size() && !evaluation_stopped(); begin += chunk_size) {
    const auto chunk = indices.subspan(begin, std::min(chunk_size, indices.size() - begin));
    data::gather_batch(batch_images_.data(), batch_labels_.data(), set, chunk);
    const LossStats loss = network_.forward(batch_images_.data(), batch_labels_.data(),
                                            static_cast<int>(chunk.size()), false, 0, 0);
    total.loss_sum += loss.loss_sum;
    total.correct += loss.correct;
    total.count += loss.count;
  }
  return total;
}

CpuBackend::CpuBackend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                       const DataSets& data, const BackendOptions& options)
    : threads_(1) {
  const int local = std::max(1, options.replicas);
  std::shared_ptr<ProcessGroup> group;
  if (options.dist == Distribution::Mpi) group = mpi_world(options.collective_timeout_s);
  const int total = local * (group ? group->size() : 1);
  if (total > options.batch)
    throw ConfigError("--replicas " + std::to_string(total) +
                      ": more replicas than images in a batch (--batch " +
                      std::to_string(options.batch) + ")");
  threads_ = std::max(1, kernels::cpu::resolve_num_threads(options.threads) / local);
  const double bucket_bytes = options.bucket_mb * 1024.0 * 1024.0;
  const size_t count = size_t(plan.parameter_count);
  const bool server = options.sync == SyncMode::ParameterServer;

  std::unique_ptr<GradientReducer> reducer;
  if (group && group->size() > 1)
    reducer = make_mpi_reducer(group, count, bucket_bytes);
  else if (server)
    reducer =
        make_parameter_server(local, count, optimizer, bucket_bytes, options.collective_timeout_s);
  else if (local > 1)
    reducer = make_threads_reducer(local, count, bucket_bytes, options.collective_timeout_s);
  else
    reducer = make_no_reducer();

  const int max_shard = (options.batch + total - 1) / total;
  const CpuKernels kernels = options.reference_kernels ? CpuKernels::Reference : CpuKernels::Fast;
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int r = 0; r < local; ++r)
    replicas.push_back(std::make_unique<CpuReplica>(plan, optimizer, data, max_shard, kernels,
                                                    options.seed, !reducer->updates_parameters(),
                                                    options.preprocess == Preprocess::PerBatch));

  const std::string per_replica =
      std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
  std::string description;
  if (total == 1 && !server) {
    description =
        "cpu (" + per_replica + (options.reference_kernels ? ", reference kernels)" : ")");
  } else if (group && group->size() > 1) {
    description = "cpu, MPI rank " + std::to_string(group->rank()) + " of " +
                  std::to_string(group->size()) + " (" + per_replica + " each)";
  } else {
    description = "cpu, " + std::to_string(local) + (local == 1 ? " replica" : " replicas") +
                  " x " + per_replica + ", " + sync_name(options.sync);
  }
  assemble(std::move(replicas), std::move(reducer), std::move(group), data, count, threads_,
           std::move(description));
}

}  // namespace gpulab
