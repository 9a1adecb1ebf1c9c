// Parameter initialization as PyTorch's defaults, drawn from the run's seed on the host so every
// backend starts from the same weights.
#pragma once

#include <cstdint>
#include <span>

#include "engine/model/model_config.hpp"

namespace gpulab {

// Conv2d and Linear: weight ~ kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
// bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)). params has plan.parameter_count floats.
void init_parameters(std::span<float> params, const ModelPlan& plan, uint64_t seed);

// A small counter-based generator (splitmix64) for host-side draws that must not depend on the
// standard library's distributions.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

 private:
  uint64_t state_;
};

}  // namespace gpulab
