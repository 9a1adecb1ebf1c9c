// A model executed on the CPU: activations, gradients and the layer-by-layer forward and backward
// passes over a flat parameter buffer, with either the fast or the reference kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/model_config.hpp"

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

  std::span<float> parameters() { return params_; }
  std::span<float> gradients() { return grads_; }
  int max_batch() const { return max_batch_; }

  // images (batch, C*H*W) normalized, labels (batch). Runs the forward pass and the loss; with
  // training set, dropout is drawn from (seed, step) and dlogits is written for backward().
  LossStats forward(const float* images, const uint8_t* labels, int batch, bool training,
                    uint64_t seed, uint64_t step);
  // Zeroes and fills gradients() for the batch of the last training forward().
  void backward();

 private:
  struct Layer {
    LayerInfo info;
    float* out = nullptr;       // (batch, output.size()); aliases the input for identities
    float* dout = nullptr;
    const float* weight = nullptr;
    const float* bias = nullptr;
    float* dweight = nullptr;
    float* dbias = nullptr;
    std::vector<float> mask;        // dropout
    std::vector<int32_t> argmax;    // max pooling
    // A convolution computes the ReLU after it (absorbs 1), and the max pooling after that
    // (absorbs 2), with the fused ops; the layers it absorbs are folded and do nothing.
    int absorbs = 0;
    bool folded = false;
  };
  bool is_identity(const Layer& layer) const;

  ModelPlan plan_;
  int max_batch_;
  CpuKernels kernels_;
  std::vector<float> params_, grads_;
  std::vector<std::vector<float>> activations_, activation_grads_;
  std::vector<Layer> layers_;
  const float* input_ = nullptr;
  int batch_ = 0;
  bool trained_forward_ = false;
};

}  // namespace gpulab
