// Optimizer settings, their state over the flat parameter buffer, and learning-rate schedules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpulab {

enum class OptimizerKind { SGD, Momentum, Adam, AdamW };
enum class ScheduleKind { Constant, Step, OneCycle };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  float lr = 1e-3f;
  float momentum = 0.9f;     // Momentum only
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0.0f; // L2 for SGD/Momentum/Adam, decoupled for AdamW (PyTorch's 0.01)
};

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::Constant;
  float gamma = 0.7f;             // Step: lr *= gamma every step_size steps (PyTorch example)
  int64_t step_size = 0;          // Step: 0 means one epoch
  float pct_start = 0.3f;         // OneCycle, PyTorch's defaults
  float div_factor = 25.0f;
  float final_div_factor = 1e4f;
};

OptimizerKind parse_optimizer(const std::string& name);  // throws ConfigError
ScheduleKind parse_schedule(const std::string& name);    // throws ConfigError
const char* optimizer_name(OptimizerKind kind);
const char* schedule_name(ScheduleKind kind);

// The learning rate for optimizer step `step` (0-based) of `total_steps`.
float scheduled_lr(const OptimizerConfig& optim, const ScheduleConfig& schedule, int64_t step,
                   int64_t total_steps, int64_t steps_per_epoch);

// Optimizer state in host memory and the update, for backends whose parameters live on the host.
class HostOptimizer {
 public:
  HostOptimizer(const OptimizerConfig& config, size_t parameter_count);
  // step counts from 1.
  void update(std::span<float> params, std::span<const float> grads, float lr, int64_t step);

 private:
  OptimizerConfig config_;
  std::vector<float> first_, second_;  // velocity or exp_avg; exp_avg_sq
};

}  // namespace gpulab
