// A model executed on the CPU: the shared layer walk (engine/model/layer_stack.hpp) over host memory,
// with either the fast or the reference kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/model/model_config.hpp"

namespace gpulab {

enum class CpuKernels { Fast, Reference };

struct LossStats {
  double loss_sum = 0;  // summed over the batch
  int correct = 0;
  int count = 0;
};

class CpuNetwork {
 public:
  CpuNetwork(const ModelPlan& plan, int max_batch, CpuKernels kernels = CpuKernels::Fast);
  ~CpuNetwork();
  CpuNetwork(CpuNetwork&&) noexcept;

  std::span<float> parameters();
  std::span<float> gradients();
  int max_batch() const;

  // images (batch, C*H*W) normalized, labels (batch). Runs the forward pass and the loss; with
  // training set, dropout is drawn from (seed, step) and dlogits is written for backward().
  LossStats forward(const float* images, const uint8_t* labels, int batch, bool training,
                    uint64_t seed, uint64_t step, Shard shard = {});
  // Zeroes and fills gradients() for the batch of the last training forward(); ready(offset)
  // after each layer with parameters, as LayerStack::backward says.
  void backward(const std::function<void(size_t)>& ready = {});
  // Milliseconds the last forward() and the backward() after it spent in the convolution and
  // fully connected kernels: the step's matrix products (StepTimes::matmul_ms).
  double matmul_ms() const;
  // (batch, classes): the logits of the last forward(), before the softmax.
  std::span<const float> logits() const;
  // (batch, output.size()): layer `layer`'s output of the last forward(), the layer walk's own
  // buffer. Reference networks only: the fast one fuses convolution blocks, whose inner layers
  // keep no output of their own (throws std::logic_error).
  std::span<const float> layer_output(size_t layer) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulab
