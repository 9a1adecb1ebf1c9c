// The one interface every way of running a model implements (the CPU, one GPU, and later data
// parallel replicas), so a single training loop drives them all.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "datasets/mnist.hpp"
#include "engine/model_config.hpp"
#include "engine/optimizer.hpp"

namespace gpulab {

// Milliseconds spent in each part of one training step.
struct StepTimes {
  double data_ms = 0, copy_ms = 0, forward_ms = 0, backward_ms = 0, allreduce_ms = 0,
         optimizer_ms = 0;
  double total_ms() const {
    return data_ms + copy_ms + forward_ms + backward_ms + allreduce_ms + optimizer_ms;
  }
};

struct BatchStats {
  double loss_sum = 0;  // summed over the images of the batch
  int correct = 0;
  int count = 0;
  double mean_loss() const { return count ? loss_sum / count : 0.0; }
  double accuracy() const { return count ? double(correct) / count : 0.0; }
};

enum class Split { Train, Validation, Test };
const char* split_name(Split split);

// The data a backend trains and evaluates on; a GPU backend uploads it once.
struct DataSets {
  const data::ImageSet* train = nullptr;
  const data::ImageSet* validation = nullptr;  // may be null
  const data::ImageSet* test = nullptr;
  const data::ImageSet& get(Split split) const;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "cpu (2 threads)", "cuda:0 NVIDIA H100 80GB HBM3"
  virtual std::string description() const = 0;
  virtual size_t parameter_count() const = 0;
  virtual void set_parameters(std::span<const float> params) = 0;
  virtual void get_parameters(std::span<float> params) = 0;
  // One optimizer step on the images `indices` of the training set: gather, forward, loss,
  // backward, gradient reduction, update. `step` counts from 1 and seeds dropout.
  virtual BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                                StepTimes& times) = 0;
  // Loss and accuracy, no dropout, no update.
  virtual BatchStats evaluate(Split split, std::span<const int32_t> indices) = 0;
  // Waits for all queued device work and throws the device's error if any: train_step returns
  // before its backward and update are done, so a fault there shows only here.
  virtual void synchronize() {}
};

// The math of the matrix products. fp32 everywhere; tf32 and bf16 (CUDA only) round the GEMM
// inputs to TF32 or bfloat16 on the tensor cores and accumulate in fp32, with fp32 master
// weights and fp32 activations.
enum class Precision { Fp32, Tf32, Bf16 };
Precision parse_precision(const std::string& name);  // throws ConfigError
const char* precision_name(Precision precision);

struct BackendOptions {
  std::string device = "cpu";  // cpu, cuda:N
  int threads = 0;             // CPU threads; 0: all cores
  int batch = 64;
  uint64_t seed = 1;
  bool reference_kernels = false;  // CPU: the plain reference kernels (slow; for checking)
  Precision precision = Precision::Fp32;
  bool cuda_graph = true;  // CUDA: replay the training step from CUDA graphs after warm-up
};

// N for "cuda:N" (and "cuda", meaning cuda:0), -1 for "cpu"; throws ConfigError otherwise.
int cuda_device_index(const std::string& device);
// Checks the device name and the precision it supports; throws ConfigError naming the flag.
void validate(const BackendOptions& options);

// Builds the backend for options.device; throws ConfigError when the device is unknown or absent.
std::unique_ptr<Backend> make_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                      const DataSets& data, const BackendOptions& options);

}  // namespace gpulab
