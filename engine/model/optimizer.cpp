// Learning-rate schedules and the host optimizer over the flat parameter buffer.
#include "engine/model/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/base/errors.hpp"
#include "kernels/cpu/optimizer.hpp"

namespace gpulab {

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "sgd") return OptimizerKind::SGD;
  if (name == "momentum") return OptimizerKind::Momentum;
  if (name == "adam") return OptimizerKind::Adam;
  if (name == "adamw") return OptimizerKind::AdamW;
  throw ConfigError("unknown optimizer \"" + name + "\"; use sgd, momentum, adam or adamw");
}

ScheduleKind parse_schedule(const std::string& name) {
  if (name == "constant") return ScheduleKind::Constant;
  if (name == "step") return ScheduleKind::Step;
  if (name == "onecycle") return ScheduleKind::OneCycle;
  throw ConfigError("unknown schedule \"" + name + "\"; use constant, step or onecycle");
}

const char* optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::SGD: return "sgd";
    case OptimizerKind::Momentum: return "momentum";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
  }
  return "?";
}

const char* schedule_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::Constant: return "constant";
    case ScheduleKind::Step: return "step";
    case ScheduleKind::OneCycle: return "onecycle";
  }
  return "?";
}

float scheduled_lr(const OptimizerConfig& optim, const ScheduleConfig& schedule, int64_t step,
                   int64_t total_steps, int64_t steps_per_epoch) {
  switch (schedule.kind) {
    case ScheduleKind::Constant: return optim.lr;
    case ScheduleKind::Step: {
      const int64_t size = schedule.step_size > 0 ? schedule.step_size : std::max<int64_t>(1, steps_per_epoch);
      return optim.lr * std::pow(schedule.gamma, static_cast<float>(step / size));
    }
    case ScheduleKind::OneCycle: {
      // PyTorch's OneCycleLR (two phases, cosine annealing) with max_lr = lr.
      const double max_lr = optim.lr;
      const double initial = max_lr / schedule.div_factor;
      const double final_lr = initial / schedule.final_div_factor;
      const double up_end = schedule.pct_start * static_cast<double>(total_steps) - 1.0;
      const double down_end = static_cast<double>(total_steps) - 1.0;
      auto cosine = [](double start, double end, double pct) {
        return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
      };
      const double s = static_cast<double>(step);
      if (s <= up_end) return static_cast<float>(cosine(initial, max_lr, up_end > 0 ? s / up_end : 1.0));
      const double span = down_end - up_end;
      return static_cast<float>(cosine(max_lr, final_lr, span > 0 ? std::min(1.0, (s - up_end) / span) : 1.0));
    }
  }
  return optim.lr;
}

HostOptimizer::HostOptimizer(const OptimizerConfig& config, size_t parameter_count)
    : config_(config) {
  if (config.kind != OptimizerKind::SGD) first_.assign(parameter_count, 0.0f);
  if (config.kind == OptimizerKind::Adam || config.kind == OptimizerKind::AdamW)
    second_.assign(parameter_count, 0.0f);
}

void HostOptimizer::update(std::span<float> params, std::span<const float> grads, float lr,
                           int64_t step) {
  const auto& c = config_;
  switch (c.kind) {
    case OptimizerKind::SGD:
      kernels::sgd_update(params.data(), nullptr, grads.data(), params.size(), lr, 0.0f,
                          c.weight_decay);
      break;
    case OptimizerKind::Momentum:
      kernels::sgd_update(params.data(), first_.data(), grads.data(), params.size(), lr,
                          c.momentum, c.weight_decay);
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      kernels::adam_update(params.data(), first_.data(), second_.data(), grads.data(),
                           params.size(), lr, c.beta1, c.beta2, c.eps, c.weight_decay,
                           c.kind == OptimizerKind::AdamW, static_cast<long>(step));
      break;
  }
}

}  // namespace gpulab
