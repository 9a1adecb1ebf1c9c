// Data parallelism: R replicas compute what one replica computes (with and without dropout, with
// a batch that does not divide), all-reduce and the parameter server agree, bucket sizes change
// nothing, a peer that never arrives times out, a failing replica names itself, and two MPI
// processes end with the weights of one.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <thread>

#include "engine/checkpoint.hpp"
#include "engine/cpu_backend.hpp"
#include "engine/gradient_reducer.hpp"
#include "engine/init.hpp"
#include "engine/process_group.hpp"
#include "engine/run_record.hpp"
#include "engine/trainer.hpp"
#include "gpulab/build_config.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

// LeNet-5 with a dropout layer: convolutions, pooling and dropout all see sharded batches.
ModelConfig test_model(float dropout) {
  ModelConfig config = preset("lenet5");
  LayerSpec layer;
  layer.type = LayerType::Dropout;
  layer.p = dropout;
  config.layers.insert(config.layers.begin() + 9, layer);
  return config;
}

struct Data {
  data::ImageSet train = test::synthetic_set(200, 1), test = test::synthetic_set(30, 2);
  DataSets sets{&train, nullptr, &test};
};

struct Setup {
  int replicas = 1;
  int batch = 24;
  float dropout = 0.0f;
  SyncMode sync = SyncMode::AllReduce;
  double bucket_mb = 25;
  OptimizerKind optimizer = OptimizerKind::Momentum;
};

// The weights after 20 steps.
std::vector<float> train_weights(const Setup& s, std::vector<StepMetrics>* steps = nullptr) {
  static const Data data;
  const ModelPlan plan = plan_model(test_model(s.dropout));
  TrainOptions options;
  options.batch = s.batch;
  options.max_steps = 20;
  options.epochs = 0;
  options.optimizer.kind = s.optimizer;
  options.optimizer.lr = 0.02f;
  options.eval_at_epoch_end = false;
  BackendOptions backend_options;
  backend_options.batch = s.batch;
  backend_options.seed = options.seed;
  backend_options.threads = 2;
  backend_options.replicas = s.replicas;
  backend_options.sync = s.sync;
  backend_options.bucket_mb = s.bucket_mb;
  CpuBackend backend(plan, options.optimizer, data.sets, backend_options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, options.seed);
  backend.set_parameters(params);
  struct Steps : TrainObserver {
    std::vector<StepMetrics>* out;
    void on_step(const StepMetrics& m) override {
      if (out) out->push_back(m);
    }
  } observer;
  observer.out = steps;
  RunControl control;
  const RunSummary summary = train(backend, data.sets, options, observer, control);
  EXPECT_EQ(summary.status, RunStatus::Finished) << summary.message;
  EXPECT_EQ(summary.steps, 20);
  backend.get_parameters(params);
  return params;
}

// ||a - b|| / ||b||
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

TEST(DataParallel, ShardsSplitEvenlyAndKeepEveryImage) {
  for (int batch : {1, 7, 24, 25, 64})
    for (int replicas = 1; replicas <= std::min(batch, 5); ++replicas) {
      int next = 0;
      for (int r = 0; r < replicas; ++r) {
        const ShardRange range = shard_range(batch, replicas, r);
        EXPECT_EQ(range.first, next);
        EXPECT_GE(range.count, batch / replicas);
        EXPECT_LE(range.count, batch / replicas + 1);
        next += range.count;
      }
      EXPECT_EQ(next, batch);
    }
}

TEST(DataParallel, ReplicasEndWithOneReplicasWeights) {
  const std::vector<float> one = train_weights({});
  for (int replicas : {2, 3, 4}) {
    const std::vector<float> many = train_weights({.replicas = replicas});
    EXPECT_LE(relative_error(many, one), 1e-5) << replicas << " replicas";
  }
  // 25 images do not divide by 2, 3 or 4: the first replicas take one more.
  const std::vector<float> odd = train_weights({.batch = 25});
  for (int replicas : {2, 3, 4})
    EXPECT_LE(relative_error(train_weights({.replicas = replicas, .batch = 25}), odd), 1e-5)
        << replicas << " replicas, batch 25";
}

TEST(DataParallel, ReplicasDrawOneReplicasDropoutMasks) {
  const std::vector<float> one = train_weights({.batch = 25, .dropout = 0.5f});
  for (int replicas : {2, 3})
    EXPECT_LE(
        relative_error(train_weights({.replicas = replicas, .batch = 25, .dropout = 0.5f}), one),
        1e-5)
        << replicas << " replicas";
}

TEST(DataParallel, AdamAgreesToo) {
  const std::vector<float> one = train_weights({.optimizer = OptimizerKind::Adam});
  EXPECT_LE(relative_error(train_weights({.replicas = 3, .optimizer = OptimizerKind::Adam}), one),
            1e-5);
}

TEST(DataParallel, ParameterServerAndAllReduceAgree) {
  const std::vector<float> all_reduce = train_weights({.replicas = 3});
  const std::vector<float> server =
      train_weights({.replicas = 3, .sync = SyncMode::ParameterServer});
  EXPECT_LE(relative_error(server, all_reduce), 1e-6);
  // The same sum in the same order: the same bits.
  EXPECT_EQ(server, all_reduce);
}

TEST(DataParallel, BucketSizesDoNotChangeTheWeights) {
  const std::vector<float> whole = train_weights({.replicas = 2});
  EXPECT_EQ(train_weights({.replicas = 2, .bucket_mb = 0.01}), whole);
  EXPECT_EQ(train_weights({.replicas = 2, .bucket_mb = 0.0001}), whole);
  EXPECT_EQ(train_weights({.replicas = 2, .sync = SyncMode::ParameterServer, .bucket_mb = 0.01}),
            train_weights({.replicas = 2, .sync = SyncMode::ParameterServer}));
}

TEST(DataParallel, EveryReplicaReportsItsShareOfTheStep) {
  std::vector<StepMetrics> steps;
  train_weights({.replicas = 3}, &steps);
  ASSERT_EQ(steps.size(), 20u);
  for (const StepMetrics& m : steps) {
    ASSERT_EQ(m.replicas.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(m.replicas[r].replica, r);
      EXPECT_GT(m.replicas[r].compute_ms, 0.0);
      EXPECT_GE(m.replicas[r].waiting_ms, 0.0);
    }
    EXPECT_GE(m.times.allreduce_ms, 0.0);
  }
}

TEST(DataParallel, APeerThatNeverArrivesTimesOut) {
  const size_t count = 1000;
  auto reducer = make_threads_reducer(3, count, 1 << 20, 0.2);
  std::vector<std::vector<float>> grads(3, std::vector<float>(count, 1.0f));
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 2; ++r)  // replica 2 never comes
    threads.emplace_back([&, r] {
      ReduceTimes times;
      try {
        reducer->reduce(r, {grads[r].data(), count}, {}, {0.1f, 7}, times);
      } catch (const CollectiveError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  for (const std::string& error : errors) {
    EXPECT_NE(error.find("timed out after 0.2 s waiting for replica 2"), std::string::npos)
        << error;
    EXPECT_NE(error.find("step 7"), std::string::npos) << error;
    EXPECT_NE(error.find("--collective-timeout"), std::string::npos) << error;
  }
}

TEST(DataParallel, AFailingReplicaEndsTheStepNamingIt) {
  const Data data;
  const ModelPlan plan = plan_model(preset("mlp"));
  BackendOptions options;
  options.batch = 6;
  options.replicas = 3;
  options.threads = 3;
  options.collective_timeout_s = 30;
  CpuBackend backend(plan, OptimizerConfig{}, data.sets, options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 1);
  backend.set_parameters(params);
  // Replica 2's shard holds an image the set does not have.
  const std::vector<int32_t> indices = {0, 1, 2, 3, 4, 100000};
  StepTimes times;
  const auto start = std::chrono::steady_clock::now();
  try {
    backend.train_step(indices, 0.01f, 3, times);
    ADD_FAILURE() << "the step should have failed";
  } catch (const ReplicaError& e) {
    EXPECT_NE(std::string(e.what()).find("replica 2 failed at step 3"), std::string::npos)
        << e.what();
  }
  // The others stopped waiting at once, long before the timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // And the backend still trains.
  const std::vector<int32_t> good = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(backend.train_step(good, 0.01f, 4, times).count, 6);
}

}  // namespace
}  // namespace gpulab
