// PyTorch's default initialization for Conv2d and Linear.
#include "engine/model/init.hpp"

#include <cmath>

namespace gpulab {

void init_parameters(std::span<float> params, const ModelPlan& plan, uint64_t seed) {
  SplitMix64 rng(seed ^ 0x5EEDC0DEull);
  for (const auto& p : plan.parameters) {
    // fan_in of a weight [out, in, kh, kw] is in*kh*kw; a bias uses its layer's weight fan_in,
    // which is the parameter just before it.
    const ParameterInfo* weight = &p;
    if (p.shape.size() == 1) weight = &p - 1;
    int64_t fan_in = 1;
    for (size_t d = 1; d < weight->shape.size(); ++d) fan_in *= weight->shape[d];
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    float* out = params.data() + p.offset;
    for (int64_t i = 0; i < p.numel(); ++i) out[i] = (2.0f * rng.uniform() - 1.0f) * bound;
  }
}

}  // namespace gpulab
