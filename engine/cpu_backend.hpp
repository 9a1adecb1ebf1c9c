// The CPU backend: the fast CPU kernels over host memory, threads shared through OpenMP and BLAS.
#pragma once

#include <vector>

#include "engine/backend.hpp"
#include "engine/cpu_network.hpp"

namespace gpulab {

class CpuBackend final : public Backend {
 public:
  CpuBackend(const ModelPlan& plan, const OptimizerConfig& optimizer, const DataSets& data,
             const BackendOptions& options);
  std::string description() const override;
  size_t parameter_count() const override { return parameters_size_; }
  void set_parameters(std::span<const float> params) override;
  void get_parameters(std::span<float> params) override;
  BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                        StepTimes& times) override;
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override;
  int threads() const { return threads_; }

 private:
  DataSets data_;
  BackendOptions options_;
  CpuNetwork network_;
  HostOptimizer optimizer_;
  size_t parameters_size_;
  int threads_;  // this backend's own: another backend in the process may use another count
  std::vector<float> batch_images_;   // (batch, C*H*W)
  std::vector<uint8_t> batch_labels_; // (batch)
};

}  // namespace gpulab
