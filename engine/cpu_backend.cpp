// The CPU backend: gathers a batch, runs the network, updates the parameters in place.
#include "engine/cpu_backend.hpp"

#include <algorithm>
#include <chrono>

#include "datasets/batching.hpp"
#include "engine/errors.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

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

CpuBackend::CpuBackend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                       const DataSets& data, const BackendOptions& options)
    : data_(data),
      options_(options),
      network_(plan, options.batch,
               options.reference_kernels ? CpuKernels::Reference : CpuKernels::Fast),
      optimizer_(optimizer, plan.parameter_count),
      parameters_size_(plan.parameter_count) {
  kernels::cpu::set_num_threads(options.threads);
  const int image_size = static_cast<int>(plan.layers.front().input.size());
  if (data.train && data.train->image_size() != image_size)
    throw ConfigError("the model expects " + std::to_string(image_size) +
                      " values per image but the data has " +
                      std::to_string(data.train->image_size()));
  batch_images_.resize(static_cast<size_t>(options.batch) * image_size);
  batch_labels_.resize(options.batch);
}

std::string CpuBackend::description() const {
  const int threads = kernels::cpu::num_threads();
  return "cpu (" + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
         (options_.reference_kernels ? ", reference kernels)" : ")");
}

void CpuBackend::set_parameters(std::span<const float> params) {
  std::copy(params.begin(), params.end(), network_.parameters().begin());
}

void CpuBackend::get_parameters(std::span<float> params) {
  std::copy(network_.parameters().begin(), network_.parameters().end(), params.begin());
}

BatchStats CpuBackend::train_step(std::span<const int32_t> indices, float lr, int64_t step,
                                  StepTimes& times) {
  const int batch = static_cast<int>(indices.size());
  auto start = Clock::now();
  data::gather_batch(batch_images_.data(), batch_labels_.data(), *data_.train, indices);
  times.data_ms = ms_since(start);

  start = Clock::now();
  const LossStats loss = network_.forward(batch_images_.data(), batch_labels_.data(), batch,
                                          /*training=*/true, options_.seed, static_cast<uint64_t>(step));
  times.forward_ms = ms_since(start);

  start = Clock::now();
  network_.backward();
  times.backward_ms = ms_since(start);

  start = Clock::now();
  optimizer_.update(network_.parameters(), network_.gradients(), lr, step);
  times.optimizer_ms = ms_since(start);
  return {loss.loss_sum, loss.correct, loss.count};
}

BatchStats CpuBackend::evaluate(Split split, std::span<const int32_t> indices) {
  const data::ImageSet& set = data_.get(split);
  BatchStats total;
  for (size_t begin = 0; begin < indices.size(); begin += options_.batch) {
    const auto chunk = indices.subspan(begin, std::min<size_t>(options_.batch, indices.size() - begin));
    data::gather_batch(batch_images_.data(), batch_labels_.data(), set, chunk);
    const LossStats loss = network_.forward(batch_images_.data(), batch_labels_.data(),
                                            static_cast<int>(chunk.size()), false, 0, 0);
    total.loss_sum += loss.loss_sum;
    total.correct += loss.correct;
    total.count += loss.count;
  }
  return total;
}

}  // namespace gpulab
