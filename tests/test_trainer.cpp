// The training loop: PyTorch's losses reproduced, determinism, divergence, cancellation, step
// budgets, checkpoints that continue bit for bit.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/base/errors.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "engine/records/run_record.hpp"
#include "engine/training/trainer.hpp"
#include "kernels/cpu/ops.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

struct Recorder : TrainObserver {
  std::vector<double> losses;
  std::vector<EvalMetrics> evals;
  std::function<void(const StepMetrics&)> hook;
  void on_step(const StepMetrics& m) override {
    losses.push_back(m.loss);
    if (hook) hook(m);
  }
  void on_eval(const EvalMetrics& e) override { evals.push_back(e); }
};

struct Fixture {
  data::ImageSet train = test::synthetic_set(96, 1), test = test::synthetic_set(40, 2);
  DataSets sets{&train, nullptr, &test};
};

// Trains `config` from `params` (or a fresh init) and returns the losses.
std::vector<double> run(const ModelConfig& config, const TrainOptions& options, const DataSets& sets,
                        std::vector<float>* params = nullptr, RunSummary* summary_out = nullptr,
                        std::function<void(const StepMetrics&)> hook = {},
                        RunControl* control_in = nullptr) {
  const ModelPlan plan = plan_model(config);
  BackendOptions backend_options;
  backend_options.batch = options.batch;
  backend_options.seed = options.seed;
  CpuBackend backend(plan, options.optimizer, sets, backend_options);
  std::vector<float> init(plan.parameter_count);
  if (params && !params->empty()) {
    init = *params;
  } else {
    init_parameters(init, plan, options.seed);
  }
  backend.set_parameters(init);
  Recorder recorder;
  recorder.hook = hook;
  RunControl control;
  const RunSummary summary = train(backend, sets, options, recorder, control_in ? *control_in : control);
  if (summary_out) *summary_out = summary;
  if (params) {
    params->resize(plan.parameter_count);
    backend.get_parameters(*params);
  }
  return recorder.losses;
}

// The golden table: PyTorch's losses for the same weights, data and recipe (make_golden.py).
TEST(Trainer, ReproducesPyTorchLosses) {
  const auto dir = test::golden_dir();
  const data::MnistData mnist = data::load_mnist(dir);
  const DataSets sets{&mnist.train, nullptr, &mnist.test};
  std::ifstream in(dir / "losses.json");
  const auto golden = nlohmann::json::parse(in);
  for (const auto& recipe : golden["runs"]) {
    const Checkpoint checkpoint = load_checkpoint(dir / recipe["init"].get<std::string>());
    const ModelConfig config = *checkpoint.model();
    const ModelPlan plan = plan_model(config);
    std::vector<float> params(plan.parameter_count);
    apply_checkpoint(checkpoint, plan, params, "golden");
    TrainOptions options;
    options.batch = recipe["batch"];
    options.shuffle = false;
    options.epochs = 0;
    options.max_steps = recipe["losses"].size();
    options.eval_at_epoch_end = false;
    options.optimizer.kind = parse_optimizer(recipe["optimizer"]);
    options.optimizer.lr = recipe["lr"];
    options.optimizer.momentum = recipe["momentum"];
    const auto losses = run(config, options, sets, &params);
    const auto expected = recipe["losses"].get<std::vector<double>>();
    ASSERT_EQ(losses.size(), expected.size());
    for (size_t i = 0; i < losses.size(); ++i)
      EXPECT_NEAR(losses[i], expected[i], 1e-5 + 2e-4 * std::abs(expected[i]))
          << config.name << " step " << i + 1;
  }
}

TEST(Trainer, SameSeedSameRunDifferentSeedDifferentRun) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.epochs = 2;
  options.seed = 5;
  const ModelConfig config = preset("pytorch-example");  // with dropout
  const auto a = run(config, options, f.sets);
  const auto b = run(config, options, f.sets);
  EXPECT_EQ(a, b);
  options.seed = 6;
  EXPECT_NE(run(config, options, f.sets), a);
}

TEST(Trainer, LearnsTheSyntheticTask) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.epochs = 4;
  RunSummary summary;
  run(preset("lenet5"), options, f.sets, nullptr, &summary);
  EXPECT_EQ(summary.status, RunStatus::Finished);
  EXPECT_EQ(summary.epochs.size(), 4u);
  EXPECT_GT(summary.test_accuracy, 0.9);
}

TEST(Trainer, DivergingLossFailsWithAClearMessage) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 1e12f;
  RunSummary summary;
  run(preset("mlp"), options, f.sets, nullptr, &summary);
  EXPECT_EQ(summary.status, RunStatus::Failed);
  EXPECT_NE(summary.message.find("loss became"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("lower learning rate"), std::string::npos) << summary.message;
}

// Issue 9.7: a learning rate of 5 keeps LeNet-5's loss finite (tanh saturates) but far above its
// start; the run finishes as asked, flagged as diverged with a hint, in its summary and run.json.
TEST(Trainer, AFiniteDivergenceIsFlaggedAndANormalRunIsNot) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.epochs = 0;
  options.max_steps = 150;
  options.optimizer.kind = OptimizerKind::Adam;
  options.optimizer.lr = 5;
  RunSummary diverged;
  const std::vector<double> losses = run(preset("lenet5"), options, f.sets, nullptr, &diverged);
  EXPECT_EQ(diverged.status, RunStatus::Finished) << diverged.message;
  EXPECT_TRUE(diverged.diverged) << "losses " << losses.front() << " ... " << losses.back();
  EXPECT_NE(diverged.divergence.find("lower learning rate"), std::string::npos)
      << diverged.divergence;
  EXPECT_NE(diverged.divergence.find("--lr 5"), std::string::npos) << diverged.divergence;
  const nlohmann::json json = summary_to_json(diverged);
  EXPECT_EQ(json["diverged"], true);
  EXPECT_EQ(json["divergence"], diverged.divergence);

  options.optimizer.lr = 0.001f;
  RunSummary normal;
  run(preset("lenet5"), options, f.sets, nullptr, &normal);
  EXPECT_EQ(normal.status, RunStatus::Finished);
  EXPECT_FALSE(normal.diverged) << normal.divergence;
  EXPECT_EQ(summary_to_json(normal)["diverged"], false);
}

TEST(Trainer, CancelStopsAtTheNextStep) {
  Fixture f;
  TrainOptions options;
  options.batch = 8;
  options.epochs = 3;
  RunControl control;
  RunSummary summary;
  run(preset("mlp"), options, f.sets, nullptr, &summary,
      [&](const StepMetrics& m) { if (m.step == 3) control.cancel = true; }, &control);
  EXPECT_EQ(summary.status, RunStatus::Cancelled);
  EXPECT_EQ(summary.steps, 3);
}

// A race of 1 thread against 2 in one process: making the second backend must not change the
// first one's count, and a step on one thread leaves the other thread's count alone.
TEST(Trainer, EachCpuBackendKeepsItsOwnThreadCount) {
  Fixture f;
  const ModelPlan plan = plan_model(preset("mlp"));
  const OptimizerConfig optimizer;
  CpuBackend one(plan, optimizer, f.sets, BackendOptions{.threads = 1, .batch = 16});
  CpuBackend two(plan, optimizer, f.sets, BackendOptions{.threads = 2, .batch = 16});
  EXPECT_EQ(one.threads(), 1);
  EXPECT_EQ(two.threads(), 2);
  EXPECT_EQ(one.description(), "cpu (1 thread)");
  EXPECT_EQ(two.description(), "cpu (2 threads)");
  const int process_default = kernels::cpu::num_threads();
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 1);
  one.set_parameters(params);
  StepTimes times;
  const std::vector<int32_t> indices = {0, 1, 2, 3};
  one.train_step(indices, 0.01f, 1, times);
  EXPECT_EQ(kernels::cpu::num_threads(), process_default);
  {
    const kernels::cpu::ThreadCountScope scope(3);
    EXPECT_EQ(kernels::cpu::num_threads(), 3);
    int seen_elsewhere = 0;
    std::thread([&] { seen_elsewhere = kernels::cpu::num_threads(); }).join();
    EXPECT_EQ(seen_elsewhere, process_default);
  }
  EXPECT_EQ(kernels::cpu::num_threads(), process_default);
}

TEST(Trainer, StepBudgetEvalEveryAndTarget) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.epochs = 0;
  options.max_steps = 15;  // 6 steps an epoch: 2.5 epochs
  options.eval_every = 5;
  options.target_accuracy = 0.5;
  const ModelPlan plan = plan_model(preset("lenet5"));
  CpuBackend backend(plan, options.optimizer, f.sets, BackendOptions{.batch = 16});
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 1);
  backend.set_parameters(params);
  Recorder recorder;
  RunControl control;
  const RunSummary s = train(backend, f.sets, options, recorder, control);
  EXPECT_EQ(s.steps, 15);
  EXPECT_EQ(s.epochs.size(), 3u);
  // every 5 steps (5, 10; 15 is the end) and at the ends of epochs 1, 2 and the partial 3rd
  ASSERT_EQ(recorder.evals.size(), 5u);
  EXPECT_EQ(recorder.evals[0].step, 5);
  EXPECT_EQ(recorder.evals.back().step, 15);
  ASSERT_TRUE(s.time_to_target_s.has_value());
  EXPECT_GT(*s.time_to_target_s, 0.0);
  // Each epoch says how many steps it ran: the third was cut short by the step budget.
  EXPECT_EQ(s.epochs[0].steps, 6);
  EXPECT_EQ(s.epochs[2].steps, 3);
}

// A batch larger than the training set is refused, naming the flag, the batch and the set's size.
TEST(Trainer, ABatchLargerThanTheTrainingSetIsRefused) {
  Fixture f;  // 96 training images
  TrainOptions options;
  options.batch = 97;
  options.epochs = 1;
  try {
    run(preset("mlp"), options, f.sets);
    FAIL() << "a batch of 97 from 96 images was accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--batch 97 is larger than the training set (96 images); use at most 96");
  }
}

TEST(Trainer, StopAtAccuracyEndsAtTheFirstEvaluationAtTheTarget) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.epochs = 4;  // 6 steps an epoch
  options.eval_every = 2;
  const ModelConfig config = preset("lenet5");
  // The same run to the end gives the evaluations the stopped run must cut short at.
  const ModelPlan plan = plan_model(config);
  auto train_with = [&](const TrainOptions& o, Recorder& recorder) {
    CpuBackend backend(plan, o.optimizer, f.sets, BackendOptions{.batch = 16});
    std::vector<float> params(plan.parameter_count);
    init_parameters(params, plan, 1);
    backend.set_parameters(params);
    RunControl control;
    return train(backend, f.sets, o, recorder, control);
  };
  Recorder full_recorder;
  const RunSummary full = train_with(options, full_recorder);
  ASSERT_EQ(full.steps, 24);
  // A target first reached inside the run, after its first evaluation.
  double target = 0;
  size_t first_at_target = 0;
  for (size_t i = 1; i < full_recorder.evals.size() && target == 0; ++i) {
    if (full_recorder.evals[i].accuracy > full_recorder.evals[0].accuracy) {
      target = full_recorder.evals[i].accuracy;
      first_at_target = i;
    }
  }
  ASSERT_GT(target, 0) << "the synthetic task's accuracy never rose";
  ASSERT_LT(full_recorder.evals[first_at_target].step, 24);

  options.stop_at_accuracy = target;
  Recorder recorder;
  const RunSummary stopped = train_with(options, recorder);
  const int64_t stop_step = full_recorder.evals[first_at_target].step;
  EXPECT_EQ(stopped.status, RunStatus::Finished);
  EXPECT_EQ(stopped.steps, stop_step);
  ASSERT_EQ(recorder.evals.size(), first_at_target + 1);  // no evaluation after the stop
  EXPECT_EQ(recorder.evals.back().step, stop_step);
  EXPECT_DOUBLE_EQ(stopped.test_accuracy, target);
  // The epoch it stopped in is closed with the evaluation that stopped it.
  ASSERT_EQ(stopped.epochs.size(), static_cast<size_t>((stop_step + 5) / 6));
  EXPECT_DOUBLE_EQ(stopped.epochs.back().test_accuracy, target);
  EXPECT_NE(stopped.message.find("stopped at step " + std::to_string(stop_step)), std::string::npos)
      << stopped.message;

  // A target the run never reaches leaves it to train to the end.
  double best = 0;
  for (const EvalMetrics& e : full_recorder.evals) best = std::max(best, e.accuracy);
  options.stop_at_accuracy = 1.0;
  Recorder unreached;
  if (best < 1.0) {
    EXPECT_EQ(train_with(options, unreached).steps, 24);
  }
}

TEST(Trainer, SaveLoadContinueIsBitIdentical) {
  Fixture f;
  test::TempDir dir;
  TrainOptions options;
  options.batch = 16;
  options.shuffle = false;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 0.05f;
  options.eval_at_epoch_end = false;
  const ModelConfig config = preset("lenet5");
  const ModelPlan plan = plan_model(config);

  options.epochs = 4;  // 24 steps straight through
  const auto straight = run(config, options, f.sets);

  options.epochs = 2;  // 12 steps, save, load, 12 more
  std::vector<float> params;
  const auto first = run(config, options, f.sets, &params);
  save_checkpoint(dir.path() / "w.safetensors", plan, config, params);
  std::vector<float> loaded(plan.parameter_count);
  apply_checkpoint(load_checkpoint(dir.path() / "w.safetensors"), plan, loaded, "w");
  EXPECT_EQ(loaded, params);
  const auto second = run(config, options, f.sets, &loaded);
  std::vector<double> joined = first;
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(joined, straight);
}

TEST(Trainer, RejectsImpossibleOptions) {
  TrainOptions o;
  o.batch = 0;
  EXPECT_THROW(validate(o), ConfigError);
  o = {};
  o.optimizer.lr = -1;
  EXPECT_THROW(validate(o), ConfigError);
  o = {};
  o.target_accuracy = 2;
  EXPECT_THROW(validate(o), ConfigError);
  o = {};
  o.stop_at_accuracy = 1.5;
  EXPECT_THROW(validate(o), ConfigError);
}

// Options set in code (the window, a setup read before) meet the same bounds as the flags: gamma
// and the largest values were left to the command line, so a gamma of -1 or NaN, a weight decay
// of infinity (null in run.json), a seed past 2^63 and a step budget past an int's epochs ran.
TEST(Trainer, OptionsPastTheSharedBoundsAreRefusedNamingTheFlagValueAndRange) {
  const std::vector<std::pair<std::function<void(TrainOptions&)>, std::string>> cases = {
      {[](TrainOptions& o) { o.schedule.gamma = -1; },
       "--gamma -1 is out of range: give a number from 0 to 1"},
      {[](TrainOptions& o) { o.schedule.gamma = std::nanf(""); },
       "--gamma nan is out of range: give a number from 0 to 1"},
      {[](TrainOptions& o) { o.optimizer.weight_decay = INFINITY; },
       "--weight-decay inf is out of range: give a number from 0 to 3.40282e+38"},
      {[](TrainOptions& o) { o.seed = uint64_t(-1); },
       "--seed 18446744073709551615 is out of range: give a whole number from 0 to "
       "9223372036854775807"},
      {[](TrainOptions& o) { o.max_steps = 3000000000000; },
       "--steps 3000000000000 is out of range: give a whole number from 0 to 2147483647"},
  };
  for (const auto& [set, said] : cases) {
    TrainOptions o;
    set(o);
    try {
      validate(o);
      ADD_FAILURE() << said << ": taken";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), said);
    }
  }
  TrainOptions edges;
  edges.schedule.gamma = 1;
  edges.seed = uint64_t(INT64_MAX);
  edges.max_steps = INT_MAX;
  EXPECT_NO_THROW(validate(edges));
}

// What a run reports of its learning rate: each step's, and the changes in the order they came.
struct LrLog : TrainObserver {
  std::vector<float> lrs;  // per step
  std::vector<LrChange> changes;
  std::vector<int64_t> change_before;  // the steps already reported when each change came
  std::function<void(const StepMetrics&)> hook;
  void on_step(const StepMetrics& m) override {
    lrs.push_back(m.lr);
    if (hook) hook(m);
  }
  void on_lr_change(const LrChange& c) override {
    changes.push_back(c);
    change_before.push_back(int64_t(lrs.size()));
  }
};

// Trains the mlp on `replicas` CPU replicas with `observer`; the final weights.
std::vector<float> train_lr_run(const Fixture& f, const TrainOptions& options, LrLog& observer,
                                RunControl& control, int replicas = 1) {
  const ModelPlan plan = plan_model(preset("mlp"));
  BackendOptions backend_options;
  backend_options.batch = options.batch;
  backend_options.seed = options.seed;
  backend_options.replicas = replicas;
  CpuBackend backend(plan, options.optimizer, f.sets, backend_options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, options.seed);
  backend.set_parameters(params);
  const RunSummary summary = train(backend, f.sets, options, observer, control);
  EXPECT_EQ(summary.status, RunStatus::Finished) << summary.message;
  backend.get_parameters(params);
  return params;
}

// A learning rate asked for while the run trains is the next step's, and every step after it;
// the change is reported before that step, with its step and epoch.
TEST(Trainer, ALearningRateChangedWhileItTrainsTakesEffectAtTheNextStep) {
  Fixture f;
  TrainOptions options;
  options.batch = 8;  // 12 steps an epoch
  options.epochs = 2;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 0.01f;
  RunControl control;
  LrLog log;
  log.hook = [&](const StepMetrics& m) {
    if (m.step == 4) control.request_lr(0.2);
    if (m.step == 15) control.request_lr(0.005);
  };
  train_lr_run(f, options, log, control);
  ASSERT_EQ(log.lrs.size(), 24u);
  for (size_t i = 0; i < log.lrs.size(); ++i) {
    const float expected = i < 4 ? 0.01f : i < 15 ? 0.2f : 0.005f;
    EXPECT_EQ(log.lrs[i], expected) << "step " << i + 1;
  }
  ASSERT_EQ(log.changes.size(), 2u);
  EXPECT_EQ(log.changes[0].step, 5);
  EXPECT_EQ(log.changes[0].epoch, 1);
  EXPECT_EQ(log.changes[0].lr, 0.2);
  EXPECT_EQ(log.change_before[0], 4) << "reported before step 5";
  EXPECT_EQ(log.changes[1].step, 16);
  EXPECT_EQ(log.changes[1].epoch, 2);
  EXPECT_EQ(log.changes[1].lr, 0.005);
  EXPECT_LE(log.changes[0].time_s, log.changes[1].time_s);
  EXPECT_TRUE(std::isnan(control.requested_lr.load())) << "taken, not left for later";
}

// Under a schedule the new value is the next step's learning rate, and the schedule goes on
// scaling it: Step keeps halving every 4 steps from there.
TEST(Trainer, AScheduleGoesOnFromALearningRateChangedWhileItTrains) {
  Fixture f;
  TrainOptions options;
  options.batch = 8;
  options.epochs = 1;  // 12 steps
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 0.1f;
  options.schedule.kind = ScheduleKind::Step;
  options.schedule.gamma = 0.5f;
  options.schedule.step_size = 4;
  RunControl control;
  LrLog log;
  log.hook = [&](const StepMetrics& m) {
    if (m.step == 5) control.request_lr(0.04);
  };
  train_lr_run(f, options, log, control);
  ASSERT_EQ(log.lrs.size(), 12u);
  EXPECT_FLOAT_EQ(log.lrs[4], 0.05f);  // step 5, scheduled: 0.1 x 0.5
  EXPECT_FLOAT_EQ(log.lrs[5], 0.04f);  // step 6: the value asked for
  EXPECT_FLOAT_EQ(log.lrs[7], 0.04f);  // step 8, still in the schedule's second stretch
  EXPECT_FLOAT_EQ(log.lrs[8], 0.02f);  // step 9: halved, as the schedule does
  EXPECT_FLOAT_EQ(log.lrs[11], 0.02f);
}

// Every replica of a data-parallel run takes the new learning rate at the same step: two
// replicas end with the weights one replica reaches with the same change.
TEST(Trainer, EveryReplicaTakesALearningRateChangedWhileItTrains) {
  Fixture f;
  TrainOptions options;
  options.batch = 8;
  options.epochs = 1;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 0.01f;
  std::vector<std::vector<float>> weights;
  for (int replicas : {1, 2}) {
    RunControl control;
    LrLog log;
    log.hook = [&](const StepMetrics& m) {
      if (m.step == 3) control.request_lr(0.3);
    };
    weights.push_back(train_lr_run(f, options, log, control, replicas));
    ASSERT_EQ(log.lrs.size(), 12u);
    EXPECT_EQ(log.lrs[3], 0.3f) << replicas << " replicas";
  }
  RunControl unchanged;
  LrLog log;
  const std::vector<float> without = train_lr_run(f, options, log, unchanged);
  EXPECT_LE(test::relative_error(weights[1], weights[0]), 1e-5);
  EXPECT_GT(test::relative_error(without, weights[0]), 1e-3) << "the change made a difference";
}

// Zero, negative and non-finite learning rates are refused with a message, and so is any change
// to a run that keeps its learning rate (an MPI job); the run goes on with the one it has.
TEST(Trainer, ALearningRateThatCannotBeUsedIsRefusedWithAMessage) {
  RunControl control;
  for (double bad : {0.0, -0.1, std::nan(""), std::numeric_limits<double>::infinity(), 1e300}) {
    try {
      control.request_lr(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("learning rate"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("positive number"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(std::isnan(control.requested_lr.load())) << bad;
  }
  control.lr_fixed_because = "the learning rate of an MPI job cannot change while it trains";
  try {
    control.request_lr(0.1);
    ADD_FAILURE() << "a fixed learning rate was changed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("MPI job"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::isnan(control.requested_lr.load()));
}

// Learning rates planned before the run (--lr-change STEP:LR) are taken at their steps as a
// change asked for just before them is, and reported the same way; they give the same weights as
// those changes asked for by hand. In an MPI job, whose live changes are refused, they still
// hold: every rank has the same plan.
TEST(Trainer, PlannedLearningRatesAreTakenAtTheirStepsAsChangesAskedFor) {
  Fixture f;
  TrainOptions options;
  options.batch = 8;  // 12 steps an epoch
  options.epochs = 2;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.lr = 0.01f;
  RunControl by_hand;
  LrLog asked;
  asked.hook = [&](const StepMetrics& m) {
    if (m.step == 4) by_hand.request_lr(0.2);
    if (m.step == 15) by_hand.request_lr(0.005);
  };
  const std::vector<float> asked_weights = train_lr_run(f, options, asked, by_hand);

  options.lr_changes = {{5, 0.2}, {16, 0.005}};
  RunControl control;
  control.lr_fixed_because = "the learning rate of an MPI job cannot change while it trains";
  LrLog planned;
  const std::vector<float> planned_weights = train_lr_run(f, options, planned, control);
  ASSERT_EQ(planned.lrs.size(), 24u);
  EXPECT_EQ(planned.lrs, asked.lrs);
  ASSERT_EQ(planned.changes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(planned.changes[i].step, asked.changes[i].step);
    EXPECT_EQ(planned.changes[i].epoch, asked.changes[i].epoch);
    EXPECT_EQ(planned.changes[i].lr, asked.changes[i].lr);
    EXPECT_EQ(planned.change_before[i], asked.change_before[i]);
  }
  EXPECT_EQ(planned_weights, asked_weights);

  // One asked for by hand at a planned step wins there; the plan goes on after it.
  options.lr_changes = {{5, 0.2}, {8, 0.05}};
  RunControl both;
  LrLog mixed;
  mixed.hook = [&](const StepMetrics& m) {
    if (m.step == 4) both.request_lr(0.1);
  };
  train_lr_run(f, options, mixed, both);
  EXPECT_EQ(mixed.lrs[4], 0.1f);
  EXPECT_EQ(mixed.lrs[7], 0.05f);
  EXPECT_EQ(mixed.changes.size(), 2u);
}

// Plans that cannot be taken are refused before the first step, naming the change.
TEST(Trainer, ImpossibleLearningRatePlansAreRefusedNamingTheChange) {
  Fixture f;
  const std::vector<std::pair<std::vector<PlannedLr>, std::string>> cases = {
      {{{0, 0.1}}, "--lr-change 0:0.1: the step must be 1 or more"},
      {{{3, -1.0}}, "--lr-change 3:-1: the learning rate must be a positive number"},
      {{{3, 1e300}}, "positive number"},
      {{{5, 0.1}, {5, 0.2}}, "--lr-change 5:0.2: give the changes in increasing step order"},
      {{{30, 0.1}}, "--lr-change 30:0.1: the run has 12 steps; give a step up to that"}};
  for (const auto& [plan, expected] : cases) {
    TrainOptions options;
    options.batch = 8;
    options.lr_changes = plan;
    RunControl control;
    LrLog log;
    const ModelPlan model = plan_model(preset("mlp"));
    BackendOptions backend_options;
    backend_options.batch = options.batch;
    CpuBackend backend(model, options.optimizer, f.sets, backend_options);
    try {
      train(backend, f.sets, options, log, control);
      ADD_FAILURE() << expected;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_TRUE(log.lrs.empty()) << expected;
  }
  EXPECT_EQ(parse_planned_lr("300:0.05"), (PlannedLr{300, 0.05}));
  for (const char* bad : {"300", "300:", ":0.1", "3x:0.1", "300:0.1x", "0.5:0.1", ""}) {
    try {
      parse_planned_lr(bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("like 300:0.05"), std::string::npos) << e.what();
    }
  }
}

// A CPU backend whose device fails after the last step has returned, as a GPU's does when the
// last backward or update faults: only its synchronize() can tell.
// A backend that passes every call to `inner`: the test backends below change one or two of them.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
  std::string description() const override { return inner_.description(); }
  size_t parameter_count() const override { return inner_.parameter_count(); }
  void set_parameters(std::span<const float> p) override { inner_.set_parameters(p); }
  void get_parameters(std::span<float> p) override { inner_.get_parameters(p); }
  BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                        StepTimes& times) override {
    return inner_.train_step(indices, lr, step, times);
  }
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override {
    return inner_.evaluate(split, indices);
  }
  void stop_evaluations_on(const std::atomic<bool>* stop) override {
    inner_.stop_evaluations_on(stop);
  }
  void synchronize() override { inner_.synchronize(); }

 protected:
  Backend& inner_;
};

class FaultsAfterTheLastStep final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void synchronize() override {
    ++synchronized;
    throw std::runtime_error("the device failed after the last step");
  }
  int synchronized = 0;
};

// The mlp on the CPU at the options' batch, its parameters initialised from their seed.
struct MlpOnCpu {
  MlpOnCpu(const Fixture& f, const TrainOptions& options)
      : plan(plan_model(preset("mlp"))),
        cpu(plan, options.optimizer, f.sets, BackendOptions{.batch = options.batch}),
        params(plan.parameter_count) {
    init_parameters(params, plan, options.seed);
    cpu.set_parameters(params);
  }
  ModelPlan plan;
  CpuBackend cpu;
  std::vector<float> params;  // as initialised
};

TEST(Trainer, WaitsForTheDeviceBeforeARunIsFinished) {
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.eval_at_epoch_end = false;  // nothing else touches the device after the last step
  MlpOnCpu mlp(f, options);
  FaultsAfterTheLastStep backend(mlp.cpu);
  Recorder recorder;
  RunControl control;
  EXPECT_THROW(train(backend, f.sets, options, recorder, control), std::runtime_error);
  EXPECT_EQ(backend.synchronized, 1);
  EXPECT_EQ(recorder.losses.size(), 6u) << "every step ran before the failure showed";
}

// A CPU backend that logs the calls a trainer makes: "step", "sync", "eval".
class CallLog final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                        StepTimes& times) override {
    calls.push_back("step");
    return inner_.train_step(indices, lr, step, times);
  }
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override {
    calls.push_back("eval");
    return inner_.evaluate(split, indices);
  }
  void synchronize() override { calls.push_back("sync"); }
  std::vector<std::string> calls;
};

// A CPU backend whose run is cancelled as its test evaluation starts: Ctrl-C or SIGTERM during
// the last epoch's evaluation, which let a run go on for minutes and be recorded as finished.
class CancelledWhileEvaluating final : public ForwardingBackend {
 public:
  CancelledWhileEvaluating(Backend& inner, RunControl& control)
      : ForwardingBackend(inner), control_(control) {}
  BatchStats evaluate(Split split, std::span<const int32_t> indices) override {
    control_.cancelled_by.store("SIGINT (Ctrl-C)");
    control_.cancel.store(true);
    const BatchStats stats = inner_.evaluate(split, indices);
    evaluated.push_back(stats.count);
    return stats;
  }
  std::vector<int> evaluated;  // images each evaluation counted before it returned

 private:
  RunControl& control_;
};

TEST(Trainer, ACancelDuringTheLastEvaluationEndsTheRunCancelledAtOnce) {
  Fixture f;  // 96 training images, 40 test images: an epoch of 6 steps, evaluated 16 at a time
  TrainOptions options;
  options.batch = 16;
  MlpOnCpu mlp(f, options);
  RunControl control;
  CancelledWhileEvaluating backend(mlp.cpu, control);
  Recorder recorder;
  const RunSummary summary = train(backend, f.sets, options, recorder, control);
  EXPECT_EQ(summary.status, RunStatus::Cancelled) << summary.message;
  EXPECT_EQ(summary.message, "cancelled at step 6 by SIGINT (Ctrl-C)");
  ASSERT_EQ(backend.evaluated.size(), 1u);
  EXPECT_EQ(backend.evaluated[0], 0)
      << "the evaluation stopped at its next batch, not at 40 images";
  EXPECT_TRUE(std::isnan(summary.test_loss)) << "no figure of part of the test set";
  // Without a cancel, every image is evaluated as before.
  RunControl plain;
  mlp.cpu.set_parameters(mlp.params);
  EXPECT_EQ(train(mlp.cpu, f.sets, options, recorder, plain).status, RunStatus::Finished);
  mlp.cpu.stop_evaluations_on(nullptr);
  EXPECT_EQ(mlp.cpu.evaluate(Split::Test, std::vector<int32_t>{0, 1, 2, 3}).count, 4);
}

TEST(Trainer, TheStepsBeforeAnEvaluationEndOnTheTrainingClock) {
  // A GPU's last backward and update are still running when train_step returns; the
  // evaluation's first wait would take them out of the training time (and time to accuracy),
  // where a framework that synchronizes before its clock stops counts them. The trainer waits
  // for them first.
  Fixture f;
  TrainOptions options;
  options.batch = 16;
  options.eval_every = 2;
  MlpOnCpu mlp(f, options);
  CallLog backend(mlp.cpu);
  Recorder recorder;
  RunControl control;
  const RunSummary summary = train(backend, f.sets, options, recorder, control);
  ASSERT_EQ(summary.status, RunStatus::Finished) << summary.message;
  int evaluations = 0;
  for (size_t i = 0; i < backend.calls.size(); ++i) {
    if (backend.calls[i] != "eval") continue;
    ++evaluations;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(backend.calls[i - 1], "sync") << "evaluation " << evaluations;
  }
  EXPECT_EQ(evaluations, 3) << "steps 2 and 4, and the epoch's end";
}

}  // namespace
}  // namespace gpulab
