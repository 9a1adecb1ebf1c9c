// Optimizer updates and learning-rate schedules against values worked out by hand and PyTorch's.
#include <cmath>

#include <gtest/gtest.h>

#include "engine/base/errors.hpp"
#include "engine/model/optimizer.hpp"

namespace gpulab {
namespace {

TEST(Optimizer, SgdAndMomentumByHand) {
  OptimizerConfig c;
  c.kind = OptimizerKind::Momentum;
  c.momentum = 0.9f;
  HostOptimizer momentum(c, 1);
  std::vector<float> p = {1.0f};
  const std::vector<float> g = {0.5f};
  momentum.update(p, g, 0.1f, 1);  // v = 0.5, p = 1 - 0.05
  EXPECT_FLOAT_EQ(p[0], 0.95f);
  momentum.update(p, g, 0.1f, 2);  // v = 0.45 + 0.5 = 0.95, p = 0.95 - 0.095
  EXPECT_FLOAT_EQ(p[0], 0.855f);

  c.kind = OptimizerKind::SGD;
  c.weight_decay = 0.1f;
  HostOptimizer sgd(c, 1);
  std::vector<float> q = {2.0f};
  sgd.update(q, g, 0.1f, 1);  // g' = 0.5 + 0.2 = 0.7
  EXPECT_FLOAT_EQ(q[0], 2.0f - 0.07f);
}

TEST(Optimizer, AdamFirstStepMovesByLr) {
  // On the first step Adam moves each weight by lr * sign(g) (up to eps).
  OptimizerConfig c;
  c.kind = OptimizerKind::Adam;
  HostOptimizer adam(c, 3);
  std::vector<float> p = {1.0f, -1.0f, 0.0f};
  const std::vector<float> g = {0.3f, -2.0f, 1e-3f};
  adam.update(p, g, 0.01f, 1);
  EXPECT_NEAR(p[0], 0.99f, 1e-6);
  EXPECT_NEAR(p[1], -0.99f, 1e-6);
  EXPECT_NEAR(p[2], -0.01f, 1e-4);
}

TEST(Optimizer, AdamWDecaysWeightsDecoupled) {
  OptimizerConfig c;
  c.kind = OptimizerKind::AdamW;
  c.weight_decay = 0.5f;
  HostOptimizer adamw(c, 1);
  std::vector<float> p = {2.0f};
  const std::vector<float> g = {0.0f};
  adamw.update(p, g, 0.1f, 1);  // p * (1 - 0.05), zero gradient moves nothing else
  EXPECT_FLOAT_EQ(p[0], 1.9f);
}

TEST(Schedule, StepAndOneCycle) {
  OptimizerConfig o;
  o.lr = 1.0f;
  ScheduleConfig s;
  s.kind = ScheduleKind::Step;
  EXPECT_FLOAT_EQ(scheduled_lr(o, s, 0, 100, 10), 1.0f);
  EXPECT_FLOAT_EQ(scheduled_lr(o, s, 9, 100, 10), 1.0f);
  EXPECT_FLOAT_EQ(scheduled_lr(o, s, 10, 100, 10), 0.7f);
  EXPECT_NEAR(scheduled_lr(o, s, 25, 100, 10), 0.49f, 1e-6);

  // PyTorch OneCycleLR(max_lr=1, total_steps=100): 0.04 at step 0, 1.0 at step 29, and
  // 4e-6 at the last step.
  s.kind = ScheduleKind::OneCycle;
  EXPECT_NEAR(scheduled_lr(o, s, 0, 100, 10), 0.04f, 1e-6);
  EXPECT_NEAR(scheduled_lr(o, s, 29, 100, 10), 1.0f, 1e-6);
  EXPECT_NEAR(scheduled_lr(o, s, 99, 100, 10), 4e-6f, 1e-9);
  EXPECT_NEAR(scheduled_lr(o, s, 60, 100, 10), 0.58928f, 1e-5);
}

TEST(Optimizer, NamesParseAndRejectUnknown) {
  EXPECT_EQ(parse_optimizer("adamw"), OptimizerKind::AdamW);
  EXPECT_EQ(parse_schedule("onecycle"), ScheduleKind::OneCycle);
  EXPECT_THROW(parse_optimizer("rmsprop"), ConfigError);
  EXPECT_THROW(parse_schedule("cosine"), ConfigError);
}

}  // namespace
}  // namespace gpulab
