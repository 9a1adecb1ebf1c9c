// Data parallelism: R replicas compute what one replica computes (with and without dropout, with
// a batch that does not divide), all-reduce and the parameter server agree (the server's update
// is every replica's optimizer time; it runs on GPUs too, not across MPI), bucket sizes change
// nothing, a peer that never arrives times out, a failing replica names itself, two MPI
// processes end with the weights of one, a NaN on one rank, a rank that never arrives or a dead
// rank ends the MPI job with rank 0's record saying why, GPU ranks choose their GPU and transport
// (and are refused in one line), and the all-reduce benchmark.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "engine/parallel/allreduce_bench.hpp"
#include "engine/parallel/gpu_ranks.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/parallel/replicated_backend.hpp"
#include "engine/records/run_record.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/trainer.hpp"
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
  Preprocess preprocess = Preprocess::None;
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
  backend_options.preprocess = s.preprocess;
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

using test::relative_error;

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

// --preprocess per-batch: each image's rotation and shift are drawn from the seed, the step and
// its index, so replicas augment their shards as one replica augments the whole batch. The
// batch is made in host memory, the CPU's only memory: its time is the data phase, and there is
// no copy phase.
TEST(DataParallel, ReplicasAugmentOneReplicasImages) {
  std::vector<StepMetrics> steps;
  const std::vector<float> one =
      train_weights({.batch = 25, .preprocess = Preprocess::PerBatch}, &steps);
  EXPECT_GT(relative_error(one, train_weights({.batch = 25})), 1e-3);  // other images
  for (int replicas : {2, 3})
    EXPECT_LE(
        relative_error(
            train_weights({.replicas = replicas, .batch = 25, .preprocess = Preprocess::PerBatch}),
            one),
        1e-5)
        << replicas << " replicas";
  ASSERT_EQ(steps.size(), 20u);
  for (const StepMetrics& m : steps) EXPECT_EQ(m.times.copy_ms, 0) << "step " << m.step;
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

// No replica goes on before the server's update, so every replica reports it as optimizer time
// and the sum as communication, whichever replica's thread ran them: the step's phases show the
// update whichever replica is its critical path.
TEST(DataParallel, EveryReplicaOfAParameterServerReportsItsUpdate) {
  const size_t count = 100'000;
  auto reducer = make_parameter_server(3, count, OptimizerConfig{}, 1 << 20, 600);
  std::vector<float> start(count, 0.5f);
  reducer->set_parameters(start);
  std::vector<std::vector<float>> grads(3, std::vector<float>(count, 1.0f)), params(3, start);
  std::vector<ReduceTimes> times(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      reducer->reduce(r, {grads[size_t(r)].data(), count}, {params[size_t(r)].data(), count},
                      {0.1f, 1}, times[size_t(r)]);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    EXPECT_GT(times[size_t(r)].optimizer_ms, 0) << "replica " << r;
    EXPECT_EQ(times[size_t(r)].optimizer_ms, times[0].optimizer_ms) << "replica " << r;
    EXPECT_GT(times[size_t(r)].communication_ms, 0) << "replica " << r;
    EXPECT_GE(times[size_t(r)].waiting_ms, 0) << "replica " << r;
    EXPECT_EQ(params[size_t(r)], params[0]);
  }
  EXPECT_NE(params[0][0], 0.5f);
}

// The parameter server runs wherever the replicas share one process: CPU threads, logical GPUs,
// several GPUs (issue 41.9; before, GPUs were refused). Across MPI processes it cannot meet, and
// is refused in one line naming both flags, whether or not mpirun started the process.
TEST(DataParallel, TheParameterServerIsRefusedOnlyAcrossProcesses) {
  BackendOptions options;
  options.sync = SyncMode::ParameterServer;
  options.batch = 32;
  for (const char* device : {"cpu", "cuda:0", "cuda:0x2", "cuda:0,1"}) {
    options.device = device;
    if (options.device != "cpu" && !GPULAB_CUDA_ENABLED) {
      EXPECT_THROW(validate(options), ConfigError) << device << ": this build has no GPU";
      continue;
    }
    EXPECT_NO_THROW(validate(options)) << device;
  }
  options.dist = Distribution::Mpi;
  for (const char* device : {"cpu", "cuda:0"}) {
    options.device = device;
    if (options.device != "cpu" && !GPULAB_CUDA_ENABLED) continue;
    try {
      validate(options);
      ADD_FAILURE() << device << ": --dist mpi with a parameter server was accepted";
    } catch (const ConfigError& e) {
      const std::string text = e.what();
      EXPECT_EQ(text.rfind("--sync parameter-server: runs within one process", 0), 0u) << text;
      EXPECT_NE(text.find("with --dist mpi use --sync allreduce"), std::string::npos) << text;
    }
  }
}

TEST(DataParallel, BucketSizesDoNotChangeTheWeights) {
  const std::vector<float> whole = train_weights({.replicas = 2});
  EXPECT_EQ(train_weights({.replicas = 2, .bucket_mb = 0.01}), whole);
  EXPECT_EQ(train_weights({.replicas = 2, .bucket_mb = 0.0001}), whole);
  EXPECT_EQ(train_weights({.replicas = 2, .sync = SyncMode::ParameterServer, .bucket_mb = 0.01}),
            train_weights({.replicas = 2, .sync = SyncMode::ParameterServer}));
}

// Two replicas finish the last half of their gradients, then go on computing for 50 ms: the
// buckets of that half are summed meanwhile, and reduce() finds them done and counts their time
// as hidden.
TEST(DataParallel, BucketsAreReducedWhileTheBackwardPassGoesOn) {
  const size_t count = 4096;
  auto reducer = make_threads_reducer(2, count, 1024 * sizeof(float), 10.0);
  std::vector<std::vector<float>> grads(2, std::vector<float>(count));
  for (int r = 0; r < 2; ++r)
    for (size_t i = 0; i < count; ++i) grads[r][i] = float(r + 1) * float(i % 7);
  std::vector<ReduceTimes> times(2);
  std::vector<bool> summed_early(2, false);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      const BufferView view{grads[r].data(), count};
      reducer->gradients_ready(r, view, count / 2);  // the last two buckets are final
      // "The earlier layers' backward": wait until the other replica's half is in this one's.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (std::chrono::steady_clock::now() < give_up &&
             !(grads[r][count - 1] == 3.0f * float((count - 1) % 7)))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      summed_early[r] = grads[r][count - 1] == 3.0f * float((count - 1) % 7) &&
                        grads[r][0] == 0.0f && grads[r][1] == float(r + 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      reducer->gradients_ready(r, view, 0);
      reducer->reduce(r, view, {}, {0.1f, 1}, times[r]);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(summed_early[r]) << "replica " << r << ": the last half was not summed early";
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(grads[r][i], 3.0f * float(i % 7)) << i;
    EXPECT_GT(times[r].hidden_ms, 0.0) << "replica " << r;
  }
  EXPECT_EQ(reducer->bucket_ms().size(), 4u);
}

// In a real run: buckets smaller than the model hide some of the reduction under the backward
// pass; one bucket of 25 MB (PyTorch's default) waits for the whole backward pass and hides none.
TEST(DataParallel, SmallBucketsHideCommunicationAndOneBucketHidesNone) {
  std::vector<StepMetrics> whole, small;
  train_weights({.replicas = 2}, &whole);
  train_weights({.replicas = 2, .bucket_mb = 0.01}, &small);
  double hidden = 0;
  for (const StepMetrics& m : whole) {
    EXPECT_EQ(m.times.allreduce_hidden_ms, 0.0) << "step " << m.step;
    for (const ReplicaTimes& r : m.replicas) EXPECT_EQ(r.hidden_ms, 0.0) << "step " << m.step;
  }
  for (const StepMetrics& m : small) {
    for (const ReplicaTimes& r : m.replicas) {
      EXPECT_GE(r.hidden_ms, 0.0);
      hidden += r.hidden_ms;
    }
    EXPECT_GE(m.times.allreduce_hidden_ms, 0.0);
  }
  EXPECT_GT(hidden, 0.0) << "no bucket was reduced during a backward pass in 20 steps";
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

// Replicas run their phases side by side: the step's phases are one replica's critical path,
// never more than the step took (the most of each phase over 4 replicas on 2 threads was).
TEST(DataParallel, ThePhasesOfAStepAddUpToNoMoreThanTheStep) {
  std::vector<StepMetrics> steps;
  train_weights({.replicas = 4}, &steps);
  ASSERT_EQ(steps.size(), 20u);
  RunData run;
  run.info = {{"config", {{"replicas", 4}, {"device", "cpu"}}}};
  for (const StepMetrics& m : steps) {
    EXPECT_LE(m.times.total_ms(), m.step_ms * 1.0001 + 0.01) << "step " << m.step;
    run.steps.push_back(m);
  }
  const MedianStep median = median_step(run);
  double phases = 0;
  for (double ms : median.phases_ms) phases += ms;
  EXPECT_LE(phases, median.step_ms * 1.0001 + 0.01);
  EXPECT_NEAR(phases + median.other_ms, median.step_ms, 0.05 * median.step_ms);
}

// The threads reducer's replicas and the parameter server's wait the same way: a replica that
// never comes is named, with the step and the flag to change.
TEST(DataParallel, APeerThatNeverArrivesTimesOut) {
  const size_t count = 1000;
  for (const bool server : {false, true}) {
    SCOPED_TRACE(server ? "parameter server" : "threads");
    auto reducer = server ? make_parameter_server(3, count, OptimizerConfig{}, 1 << 20, 0.2)
                          : make_threads_reducer(3, count, 1 << 20, 0.2);
    std::vector<std::vector<float>> grads(3, std::vector<float>(count, 1.0f)),
        params(3, std::vector<float>(count, 0.0f));
    std::vector<std::string> errors(2);
    std::vector<std::thread> threads;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < 2; ++r)  // replica 2 never comes
      threads.emplace_back([&, r] {
        ReduceTimes times;
        try {
          reducer->reduce(r, {grads[r].data(), count}, {params[r].data(), count}, {0.1f, 7}, times);
        } catch (const CollectiveError& e) {
          errors[r] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    for (const std::string& error : errors) {
      EXPECT_NE(error.find("timed out after 0.2 s waiting for replica 2 of 3"), std::string::npos)
          << error;
      EXPECT_NE(error.find("step 7"), std::string::npos) << error;
      EXPECT_NE(error.find("--collective-timeout"), std::string::npos) << error;
    }
  }
}

// A replica that fails aborts the reduction: one waiting for it leaves with the failure's reason
// (not after the timeout), and after reset() every replica reduces again.
TEST(DataParallel, AnAbortEndsTheWaitAndResetMakesTheReducerUsableAgain) {
  const size_t count = 1000;
  for (const bool server : {false, true}) {
    SCOPED_TRACE(server ? "parameter server" : "threads");
    auto reducer = server ? make_parameter_server(3, count, OptimizerConfig{}, 400, 600)
                          : make_threads_reducer(3, count, 400, 600);
    std::vector<float> start(count, 0.5f);
    reducer->set_parameters(start);
    std::vector<std::vector<float>> grads(3, std::vector<float>(count, 1.0f)), params(3, start);
    std::string error;
    std::thread waiting([&] {
      ReduceTimes times;
      try {
        reducer->reduce(0, {grads[0].data(), count}, {params[0].data(), count}, {0.1f, 1}, times);
      } catch (const CollectiveError& e) {
        error = e.what();
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reducer->abort("replica 1 failed at step 1");
    waiting.join();
    EXPECT_EQ(error, "replica 1 failed at step 1");

    reducer->reset();
    std::vector<std::thread> threads;
    std::vector<std::string> errors(3);
    for (int r = 0; r < 3; ++r) {
      grads[size_t(r)].assign(count, float(r + 1));
      threads.emplace_back([&, r] {
        ReduceTimes times;
        try {
          reducer->reduce(r, {grads[size_t(r)].data(), count}, {params[size_t(r)].data(), count},
                          {0.1f, 2}, times);
        } catch (const CollectiveError& e) {
          errors[size_t(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(errors[size_t(r)], "");
      // All-reduce: every replica holds the sum 1 + 2 + 3; the server: the parameters after one
      // step, the same on every replica.
      if (server) {
        EXPECT_EQ(params[size_t(r)], params[0]);
        EXPECT_NE(params[size_t(r)][0], 0.5f);
      } else {
        EXPECT_EQ(grads[size_t(r)], std::vector<float>(count, 6.0f));
      }
    }
    EXPECT_EQ(reducer->bucket_ms().size(), 10u);  // 1000 floats in buckets of 100
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

// A replica with no model: its gradients are ones, and a bad one reports a NaN loss.
class NanReplica final : public Replica {
 public:
  NanReplica(size_t count, bool bad) : params_(count, 0.0f), grads_(count, 0.0f), bad_(bad) {}
  BatchStats compute_gradients(std::span<const int32_t> shard, Shard, int64_t,
                               StepTimes&) override {
    std::fill(grads_.begin(), grads_.end(), 1.0f);
    const int count = int(shard.size());
    return {bad_ ? std::nan("") : 2.3 * count, 0, count};
  }
  BufferView gradients() override { return {grads_.data(), grads_.size()}; }
  BufferView parameters() override { return {params_.data(), params_.size()}; }
  void apply_update(float lr, int64_t) override {
    for (size_t i = 0; i < params_.size(); ++i) params_[i] -= lr * grads_[i];
  }
  void set_parameters(std::span<const float> params) override {
    std::copy(params.begin(), params.end(), params_.begin());
  }
  void get_parameters(std::span<float> params) override {
    std::copy(params_.begin(), params_.end(), params.begin());
  }
  BatchStats evaluate(const data::ImageSet&, std::span<const int32_t>) override { return {}; }

 private:
  std::vector<float> params_, grads_;
  bool bad_;
};

// R NanReplicas on threads, summed by the threads reducer with a long timeout.
class NanReplicas final : public ReplicatedBackend {
 public:
  NanReplicas(int replicas, int bad, double timeout_s) {
    constexpr size_t kCount = 1000;
    std::vector<std::unique_ptr<Replica>> list;
    for (int r = 0; r < replicas; ++r)
      list.push_back(std::make_unique<NanReplica>(kCount, r == bad));
    assemble(std::move(list), make_threads_reducer(replicas, kCount, 1 << 20, timeout_s), nullptr,
             DataSets{}, kCount, 1, "NaN replicas");
  }
};

TEST(DataParallel, ANanOnOneReplicaEndsTheStepNamingIt) {
  NanReplicas backend(3, 1, 30);
  const std::vector<int32_t> indices = {0, 1, 2, 3, 4, 5};
  StepTimes times;
  const auto start = std::chrono::steady_clock::now();
  try {
    backend.train_step(indices, 0.01f, 5, times);
    ADD_FAILURE() << "the step should have failed";
  } catch (const ReplicaError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("replica 1 failed at step 5"), std::string::npos) << message;
    EXPECT_NE(message.find("loss became NaN"), std::string::npos) << message;
    EXPECT_NE(message.find("--lr"), std::string::npos) << message;
  }
  // Replicas 0 and 2 stopped waiting for replica 1 at once, not after the 30 s timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// GPU ranks under MPI: the choice of GPU and of transport are plain functions, so every rank
// reaches the same answer and the tests need neither MPI nor a GPU.
RankGpu gpu_on(const std::string& host, int index, const std::string& bus_id) {
  return RankGpu{host, index, bus_id, "NVIDIA H100 80GB HBM3", ""};
}

TEST(GpuRanks, NcclWhenEveryRankHasAGpuOfItsOwn) {
  EXPECT_EQ(choose_rank_transport({gpu_on("a", 0, "0000:65:00.0")}).transport, RankTransport::None);
  const TransportChoice two =
      choose_rank_transport({gpu_on("a", 0, "0000:65:00.0"), gpu_on("a", 1, "0000:66:00.0")});
  EXPECT_EQ(two.transport, RankTransport::Nccl) << two.reason;
  // The same bus id on two hosts is two GPUs.
  EXPECT_EQ(choose_rank_transport({gpu_on("a", 0, "0000:65:00.0"), gpu_on("b", 0, "0000:65:00.0"),
                                   gpu_on("a", 1, "0000:66:00.0")})
                .transport,
            RankTransport::Nccl);
  // Each rank sees its GPU as cuda:0 (CUDA_VISIBLE_DEVICES): the bus ids tell them apart.
  EXPECT_EQ(choose_rank_transport({gpu_on("a", 0, "0000:65:00.0"), gpu_on("a", 0, "0000:66:00.0")})
                .transport,
            RankTransport::Nccl);
  EXPECT_STREQ(rank_transport_name(RankTransport::Nccl), "nccl");
  EXPECT_STREQ(rank_transport_name(RankTransport::HostMpi), "mpi-host");
}

TEST(GpuRanks, RanksSharingAGpuGoThroughHostMemoryAndSayWhy) {
  const TransportChoice shared = choose_rank_transport(
      {gpu_on("node1", 0, "0000:65:00.0"), gpu_on("node1", 0, "0000:65:00.0")});
  EXPECT_EQ(shared.transport, RankTransport::HostMpi);
  EXPECT_EQ(shared.reason,
            "ranks 0 and 1 share GPU 0 (0000:65:00.0) on host node1: NCCL needs one rank per GPU; "
            "gradients go through host memory over MPI");
  // Every rank on the shared GPU is named; an unknown bus id falls back to the index.
  const TransportChoice three = choose_rank_transport(
      {gpu_on("n", 1, ""), gpu_on("n", 0, ""), gpu_on("m", 1, ""), gpu_on("n", 1, "")});
  EXPECT_EQ(three.transport, RankTransport::HostMpi);
  EXPECT_EQ(three.reason.rfind("ranks 0 and 3 share GPU 1 on host n: ", 0), 0u) << three.reason;
  const TransportChoice four = choose_rank_transport(
      {gpu_on("n", 0, "x"), gpu_on("n", 0, "x"), gpu_on("n", 0, "x"), gpu_on("n", 1, "y")});
  EXPECT_EQ(four.reason.rfind("ranks 0, 1 and 2 share GPU 0 (x) on host n", 0), 0u) << four.reason;
  // A rank without NCCL sends everyone through host memory, naming itself.
  std::vector<RankGpu> ranks = {gpu_on("a", 0, "p"), gpu_on("b", 0, "p")};
  ranks[1].nccl_problem = "NCCL is not installed (libnccl.so.2 could not be loaded)";
  const TransportChoice missing = choose_rank_transport(ranks);
  EXPECT_EQ(missing.transport, RankTransport::HostMpi);
  EXPECT_EQ(missing.reason,
            "rank 1 (host b) cannot use NCCL: NCCL is not installed (libnccl.so.2 could not be "
            "loaded); gradients go through host memory over MPI");
}

TEST(GpuRanks, EachRankTakesAGpuOfItsHost) {
  const std::vector<std::string> hosts = {"a", "a", "b", "a", "b"};
  EXPECT_EQ(local_rank_from_hosts(hosts, 0), 0);
  EXPECT_EQ(local_rank_from_hosts(hosts, 3), 2);
  EXPECT_EQ(local_rank_from_hosts(hosts, 4), 1);
  EXPECT_EQ(rank_device("cuda", 3, 2), "cuda:1");  // local rank mod the host's GPUs
  EXPECT_EQ(rank_device("cuda:auto", 2, 4), "cuda:2");
  EXPECT_EQ(rank_device("cuda:auto", 0, 0), "cuda:0");  // left for require_gpus to refuse
  EXPECT_EQ(rank_device("cuda:1", 5, 8), "cuda:1");     // named: every rank on GPU 1
  EXPECT_EQ(rank_device("cuda:0x2", 1, 2), "cuda:0x2");
  EXPECT_EQ(parse_cuda_devices("cuda:auto").replicas, (std::vector<int>{0}));

  // The launcher's local rank wins over the host names.
  const char* saved = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const std::string kept = saved ? saved : "";
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(launcher_local_rank(), 3);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "three", 1);
  const int ignored = launcher_local_rank();  // SLURM_LOCALID may still be set outside
  EXPECT_NE(ignored, 3);
  if (saved)
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", kept.c_str(), 1);
  else
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

// What a Slurm job shows (tests/test_slurm.cpp's cluster, Slurm 22.05 and Open MPI 4.1): under
// mpirun inside the allocation every rank inherits SLURM_LOCALID=0 from the step that started
// Open MPI's daemon, and OMPI_COMM_WORLD_LOCAL_RANK holds the real one, so Open MPI's is read
// first; under srun --mpi=pmix only SLURM_LOCALID is set, and it is the rank's own.
TEST(GpuRanks, InASlurmJobTheLaunchersOwnLocalRankWins) {
  const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* name : names)
    if (const char* value = std::getenv(name)) saved.emplace_back(name, value);
  for (const char* name : names) unsetenv(name);
  setenv("SLURM_LOCALID", "0", 1);  // mpirun's ranks, both on one node
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  EXPECT_EQ(launcher_local_rank(), 1);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");  // srun's second task
  setenv("SLURM_LOCALID", "1", 1);
  EXPECT_EQ(launcher_local_rank(), 1);
  for (const char* name : names) unsetenv(name);
  for (const auto& [name, value] : saved) setenv(name.c_str(), value.c_str(), 1);
}

TEST(GpuRanks, ARankDrivesOneGpu) {
  EXPECT_EQ(mpi_device_problem("cuda"), "");
  EXPECT_EQ(mpi_device_problem("cuda:auto"), "");
  EXPECT_EQ(mpi_device_problem("cuda:1"), "");
  EXPECT_EQ(mpi_device_problem("cuda:0x2"), "");  // summed on the GPU, then across the ranks
  for (const char* device : {"cuda:0,1", "cuda:all", "cuda:0x2,1x2"}) {
    const std::string why = mpi_device_problem(device);
    const std::string expected =
        std::string("--device ") + device + ": with --dist mpi each rank drives one GPU";
    EXPECT_EQ(why.rfind(expected, 0), 0u) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

using test::CliResult;
using test::run_command;

// Refused in one line naming the flag, before any data is looked for (the folder is missing).
TEST(DataParallelCli, RefusesBadCombinationsNamingTheFlag) {
  const std::string cli = std::string("env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK ") +
                          GPULAB_CLI_PATH + " train --data-dir /nonexistent ";
  const std::pair<const char*, const char*> cases[] = {
      {"--replicas 0", "--replicas"},
      {"--replicas 9 --batch 8", "--replicas 9: more replicas than images in a batch"},
      {"--sync ring", "--sync ring"},
      {"--dist mpi", "--dist mpi"},
      {"--dist carrier-pigeon", "--dist"},
      {"--bucket-mb 0", "--bucket-mb"},
      {"--bucket-mb inf", "--bucket-mb inf: not a finite size"},
      {"--collective-timeout 0", "--collective-timeout"},
  };
  for (const auto& [flags, mention] : cases) {
    const CliResult r = run_command(cli + flags);
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_NE(r.output.find(mention), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(r.output.find("/nonexistent"), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << flags << "\n" << r.output;
  }
  if (!mpi_built()) {
    const CliResult r = run_command("env OMPI_COMM_WORLD_SIZE=2 " + cli + "--dist mpi");
    EXPECT_NE(r.output.find("this build has no MPI"), std::string::npos) << r.output;
  }
}

// GPU ranks are refused in one line naming the flag, before any data is looked for: outside
// mpirun (naming --dist), several GPUs per rank (naming --device), a GPU that is not there.
TEST(DataParallelCli, GpuRanksAreRefusedNamingTheFlag) {
  const std::string cli = std::string(GPULAB_CLI_PATH) + " train --data-dir /nonexistent ";
  const std::string outside = "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK ";
  // As if under mpirun (the launcher's variable set): the checks before MPI starts still apply.
  const std::string inside = outside + "OMPI_COMM_WORLD_SIZE=2 ";
  struct Case {
    std::string command, mention;
  };
  std::vector<Case> cases;
  if (GPULAB_CUDA_ENABLED) {
    cases = {{outside + cli + "--device cuda --dist mpi", "--dist mpi: not started by mpirun"},
             {outside + cli + "--device cuda:auto --dist mpi", "--dist mpi: not started by mpirun"},
             {outside + cli + "--device cuda:0,1 --dist mpi", "--device cuda:0,1: with --dist mpi"},
             {outside + cli + "--device cuda:all --dist mpi", "--device cuda:all: with --dist mpi"},
             {outside + cli + "--device cuda --dist mpi --sync parameter-server",
              "--sync parameter-server"}};
    if (mpi_built())
      cases.push_back({inside + cli + "--device cuda:9 --dist mpi", "--device cuda:9: "});
  } else {
    cases = {{outside + cli + "--device cuda --dist mpi", "--device cuda: no GPU"}};
  }
  for (const Case& c : cases) {
    const CliResult r = run_command(c.command);
    EXPECT_NE(r.exit_code, 0) << c.command;
    EXPECT_NE(r.output.find(c.mention), std::string::npos) << c.command << "\n" << r.output;
    EXPECT_EQ(r.output.find("/nonexistent"), std::string::npos) << c.command << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << c.command << "\n"
                                                                     << r.output;
  }
}

TEST(DataParallelCli, ThreadReplicasRecordEveryReplica) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const CliResult r =
      run_command(std::string(GPULAB_CLI_PATH) +
                  " train --model mlp --steps 4 --batch 30 --replicas 4 --sync "
                  "parameter-server --quiet --data-dir " +
                  (dir.path() / "data").string() + " --out " + (dir.path() / "run").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.info["config"]["replicas"], 4);
  EXPECT_EQ(run.info["config"]["sync"], "parameter-server");
  EXPECT_EQ(run.steps.size(), 4u);
  ASSERT_EQ(run.replica_steps.size(), 16u);
  EXPECT_EQ(run.replica_steps.back().step, 4);
  EXPECT_EQ(run.replica_steps.back().times.replica, 3);
}

// Why the MPI tests cannot run here; "" when they can.
std::string why_no_mpirun() {
  if (!GPULAB_MPI_ENABLED) return "this build has no MPI (GPULAB_MPI)";
  if (run_command("command -v mpirun").exit_code != 0) return "mpirun is not installed";
  return "";
}

// Two processes under mpirun, each one replica of a batch of 32, end with the weights of one
// process training on the whole batch; their small buckets are summed during backward.
TEST(DataParallelMpi, TwoProcessesEndWithOneProcesssWeights) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string common =
      " train --model lenet5 --steps 12 --batch 32 --threads 1 --quiet"
      " --data-dir " +
      (dir.path() / "data").string();
  const auto one = dir.path() / "one.safetensors", two = dir.path() / "two.safetensors";
  const CliResult single = run_command(std::string(GPULAB_CLI_PATH) + common + " --out " +
                                       (dir.path() / "run1").string() + " --save " + one.string());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const CliResult pair = run_command("mpirun --allow-run-as-root --oversubscribe -np 2 " +
                                     std::string(GPULAB_CLI_PATH) + common +
                                     " --dist mpi --collective-timeout 60 --bucket-mb 0.01 --out " +
                                     (dir.path() / "run2").string() + " --save " + two.string());
  ASSERT_EQ(pair.exit_code, 0) << pair.output;
  const ModelPlan plan = plan_model(preset("lenet5"));
  std::vector<float> a(plan.parameter_count), b(plan.parameter_count);
  apply_checkpoint(load_checkpoint(one), plan, a, one.string());
  apply_checkpoint(load_checkpoint(two), plan, b, two.string());
  EXPECT_LE(relative_error(b, a), 1e-5);
  const RunData run = load_run(dir.path() / "run2");
  EXPECT_EQ(run.status(), "finished");
  EXPECT_EQ(run.name(), "lenet5 cpu, 1 thread, 2 MPI ranks, b32, adam, lr 0.001, fp32");
  ASSERT_EQ(run.info["devices"].size(), 2u);
  EXPECT_TRUE(run.info["devices"][1].contains("host"));
  // Each rank's own entry, gathered from it.
  EXPECT_EQ(run.info["devices"][1]["rank"], 1);
  const std::string second = run.info["devices"][1]["description"];
  EXPECT_EQ(second.rfind("MPI rank 1 of 2: cpu", 0), 0u) << second;
  EXPECT_EQ(run.replica_steps.size(), 24u);  // both ranks, every step
}

// Runs `mpirun [MCA] -np 1 RANK0 : -np 1 RANK1` (each rank its own command line), never for more
// than 120 s, and says how long it took.
struct MpiJob {
  CliResult result;
  double seconds = 0;
};
MpiJob run_mpmd(const std::string& rank0, const std::string& rank1, const std::string& mca = "") {
  const auto start = std::chrono::steady_clock::now();
  MpiJob job;
  job.result = run_command("timeout 120 mpirun --allow-run-as-root --oversubscribe " + mca +
                           " -np 1 " + rank0 + " : -np 1 " + rank1);
  job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return job;
}
// Both ranks run gpulab-cli with `args`, then their own flags.
MpiJob run_two_ranks(const std::string& args, const std::string& rank0, const std::string& rank1) {
  const std::string cli = std::string(GPULAB_CLI_PATH) + " " + args;
  return run_mpmd(cli + " " + rank0, cli + " " + rank1);
}

// The flags of a small MPI training run on `dir`'s data, recorded in dir/run.
std::string mpi_train_args(const test::TempDir& dir, double timeout_s) {
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  std::ostringstream timeout;
  timeout << timeout_s;
  return "train --model mlp --batch 32 --threads 1 --quiet --dist mpi --collective-timeout " +
         timeout.str() + " --data-dir " + (dir.path() / "data").string() + " --out " +
         (dir.path() / "run").string();
}

// Rank 1 alone takes a learning rate that blows its weights up, so its loss stops being finite
// after a step or two. Rank 0 records that, naming rank 1, long before the 30 s timeout, keeps the
// steps before it, and the job ends non-zero.
TEST(DataParallelMpi, ANanOnOneRankEndsTheJobNamingIt) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const MpiJob job =
      run_two_ranks(mpi_train_args(dir, 30) + " --steps 8", "--lr 0.01", "--lr 1e30");
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_LT(job.seconds, 15.0) << job.result.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "failed");
  const std::string message = run.info["message"];
  EXPECT_NE(message.find("rank 1 of 2"), std::string::npos) << message;
  EXPECT_NE(message.find("replica 1 failed at step " + std::to_string(run.steps.size() + 1)),
            std::string::npos)
      << message;
  EXPECT_TRUE(message.find("NaN") != std::string::npos ||
              message.find("infinite") != std::string::npos)
      << message;
  EXPECT_NE(job.result.output.find("run failed: " + message), std::string::npos)
      << job.result.output;
  // The steps before the failure are kept, in metrics.csv and in the summary.
  EXPECT_GE(run.steps.size(), 1u);
  EXPECT_EQ(run.info["summary"]["steps"], run.steps.size());
}

// Rank 1 stops after 2 steps; rank 0 waits for it in step 3 and gives up after 2 s, saying so.
TEST(DataParallelMpi, ARankThatNeverArrivesTimesOut) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const MpiJob job = run_two_ranks(mpi_train_args(dir, 2), "--steps 6", "--steps 2");
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_LT(job.seconds, 15.0) << job.result.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "failed");
  const std::string message = run.info["message"];
  EXPECT_NE(message.find("step 3 timed out after 2 s"), std::string::npos) << message;
  EXPECT_NE(message.find("--collective-timeout"), std::string::npos) << message;
  EXPECT_NE(job.result.output.find("run failed: " + message), std::string::npos)
      << job.result.output;
  EXPECT_EQ(run.steps.size(), 2u);
}

// A command line for one rank: it runs `cli` and, once rank 0 has recorded 5 steps (or after a
// minute), runs `then` (shell commands; $pid is cli's process); `name` names its script.
std::string after_five_steps(const test::TempDir& dir, const std::string& name,
                             const std::string& cli, const std::string& then) {
  const auto script = dir.path() / (name + ".sh");
  std::ofstream(script) << cli << " & pid=$!\n"
                        << "n=0\n"
                        << "while [ \"$(cat " << (dir.path() / "run" / "metrics.csv").string()
                        << " 2>/dev/null | wc -l)\" -le 5 ] && [ $n -lt 600 ]; do\n"
                        << "  sleep 0.1; n=$((n + 1))\n"
                        << "done\n"
                        << then << "\n"
                        << "wait $pid\n";
  return "sh " + script.string();
}
// The same, sending `signal` (9, TERM, INT) to cli's process.
std::string signal_after_five_steps(const test::TempDir& dir, const std::string& cli,
                                    const std::string& signal) {
  return after_five_steps(dir, "signal-" + signal, cli, "kill -" + signal + " $pid");
}

// Rank 1 is killed (kill -9) once rank 0 has recorded 5 steps; mpirun then signals rank 0 and
// kills it a moment later. Rank 0, waiting for the dead rank, records the run's end with its
// steps first, and the job ends non-zero in seconds. mpirun's pause between its signal and its
// kill (1 s by default, and enough on a loaded 2-core machine) is 2 s here, for a margin.
TEST(DataParallelMpi, ADeadRankEndsTheJobAndRankZeroRecordsIt) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const std::string cli =
      std::string(GPULAB_CLI_PATH) + " " + mpi_train_args(dir, 30) + " --steps 100000";
  const std::string rank1 = signal_after_five_steps(dir, cli, "9");
  const MpiJob job = run_mpmd(cli, rank1, "--mca odls_base_sigkill_timeout 2");
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_LT(job.seconds, 30.0) << job.result.output;
  const RunData run = load_run(dir.path() / "run");
  // Signalled inside a collective, rank 0 records a failure; signalled between two steps (a short
  // moment of each), it takes the signal as a cancel. Either way the record is closed.
  EXPECT_TRUE(run.status() == "failed" || run.status() == "cancelled") << run.status();
  const std::string message = run.info.value("message", "");
  if (run.status() == "failed") {
    EXPECT_NE(message.find("was interrupted: mpirun is ending the job"), std::string::npos)
        << message;
  }
  EXPECT_GE(run.steps.size(), 5u);
  EXPECT_EQ(run.info["summary"]["steps"], run.steps.size());
}

// The weights a cancelled job's rank 0 saves (--save), whichever rank was cancelled.
std::filesystem::path cancelled_weights(const test::TempDir& dir) {
  return dir.path() / "weights.safetensors";
}

// A long job that saves its weights where cancelled_weights says.
std::string cancellable_job(const test::TempDir& dir) {
  return std::string(GPULAB_CLI_PATH) + " " + mpi_train_args(dir, 30) + " --steps 100000 --save " +
         cancelled_weights(dir).string();
}

// The run's weights were saved as a cancelled run's are, and are the MLP's.
void expect_weights_kept(const test::TempDir& dir, const RunData& run) {
  ASSERT_TRUE(std::filesystem::exists(cancelled_weights(dir)));
  EXPECT_EQ(run.info.value("weights", ""), cancelled_weights(dir).string());
  int64_t saved = 0;
  for (const auto& [name, tensor] : load_checkpoint(cancelled_weights(dir)).tensors)
    saved += int64_t(tensor.data.size());
  EXPECT_EQ(saved, plan_model(preset("mlp")).parameter_count);
}

// Runs a two-rank job in which rank `target` is sent `signal` (TERM, INT) once rank 0 has recorded
// 5 steps; the collective timeout is 30 s, so a job that ends in seconds did not wait for it.
MpiJob signal_one_rank(const test::TempDir& dir, int target, const std::string& signal) {
  const std::string cli = cancellable_job(dir);
  const std::string signalled = signal_after_five_steps(dir, cli, signal);
  return target == 0 ? run_mpmd(signalled, cli) : run_mpmd(cli, signalled);
}

// Rank 0, stopped by a signal, records its cancel naming itself and its signal, and ends the job
// at once (it used to sit in MPI_Finalize while rank 1 waited out the timeout).
TEST(DataParallelMpi, ASignalledRankEndsTheJobAtOnceAndIsNamed) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const MpiJob job = signal_one_rank(dir, 0, "TERM");
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_LT(job.seconds, 20.0) << job.result.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "cancelled");
  const std::string message = run.info["message"];
  EXPECT_EQ(message.rfind("rank 0 of 2", 0), 0u) << message;
  EXPECT_NE(message.find("by SIGTERM"), std::string::npos) << message;
  EXPECT_GE(run.steps.size(), 5u);
  expect_weights_kept(dir, run);
}

// What rank 0 records when rank 1 was stopped by SIGINT: the run cancelled (it used to say
// failed), naming rank 1, its step and its signal, with the steps done; the job exits 130 in
// seconds (rank 1 used to wait out the timeout, and read as "another rank never arrived").
void expect_rank_one_cancelled(const test::TempDir& dir, const MpiJob& job) {
  EXPECT_EQ(job.result.exit_code, 130) << job.result.output;
  EXPECT_LT(job.seconds, 20.0) << job.result.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "cancelled");
  const std::string message = run.info["message"];
  EXPECT_EQ(message.rfind("rank 1 of 2", 0), 0u) << message;
  EXPECT_NE(message.find("cancelled at step "), std::string::npos) << message;
  EXPECT_NE(message.find("by SIGINT"), std::string::npos) << message;
  EXPECT_EQ(message.find("never arrived"), std::string::npos) << message;
  EXPECT_NE(job.result.output.find("run cancelled: " + message), std::string::npos)
      << job.result.output;
  EXPECT_GE(run.steps.size(), 5u);
  EXPECT_EQ(run.info["summary"]["steps"], run.steps.size());
  // Nothing lost: the weights and the energy, as a cancel of rank 0 keeps them.
  expect_weights_kept(dir, run);
  EXPECT_TRUE(run.info.contains("energy")) << run.info.dump();
}

// Rank 1, stopped by a signal, tells rank 0 it was cancelled.
TEST(DataParallelMpi, ASignalledRankOneIsRecordedAsCancelledNamingIt) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  expect_rank_one_cancelled(dir, signal_one_rank(dir, 1, "INT"));
}

// Rank 1 is signalled while it waits in a collective (rank 0 is held by SIGSTOP from a second
// before to a second after), so the signal breaks that collective off: still a cancel of rank 1.
TEST(DataParallelMpi, ARankOneSignalledInsideACollectiveIsRecordedAsCancelled) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const std::string cli = cancellable_job(dir);
  const std::string rank0_pid = (dir.path() / "rank0.pid").string();
  const auto rank0 = dir.path() / "rank0.sh";
  std::ofstream(rank0) << "echo $$ > " << rank0_pid << "\nexec " << cli << "\n";
  const std::string rank1 =
      after_five_steps(dir, "held", cli,
                       "kill -STOP $(cat " + rank0_pid + "); sleep 1; kill -INT $pid; sleep 1; " +
                           "kill -CONT $(cat " + rank0_pid + ")");
  expect_rank_one_cancelled(dir, run_mpmd("sh " + rank0.string(), rank1));
}

// A refusal every rank makes (an --out that holds a run) is made before the ranks meet: the job
// ends in seconds with the reason, and the run there is untouched.
TEST(DataParallelMpi, AnOutputEveryRankRefusesEndsTheJobWithTheReason) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const std::string args = mpi_train_args(dir, 30) + " --steps 2";
  ASSERT_EQ(run_two_ranks(args, "", "").result.exit_code, 0);
  const MpiJob again = run_two_ranks(args, "", "");
  EXPECT_NE(again.result.exit_code, 0) << again.result.output;
  EXPECT_LT(again.seconds, 20.0) << again.result.output;
  EXPECT_NE(
      again.result.output.find("--out " + (dir.path() / "run").string() + ": already holds a run"),
      std::string::npos)
      << again.result.output;
  EXPECT_EQ(load_run(dir.path() / "run").status(), "finished");
}

// The folder is taken after rank 0 checked it and before it claims it (rank 1 writes a run.json
// there 2 s after the start, then joins): rank 0's refusal comes after MPI started, and it ends
// the job with its reason instead of leaving rank 1 to wait out the 30 s timeout.
TEST(DataParallelMpi, RankZerosRefusalAfterTheStartEndsTheJobWithTheReason) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const std::string cli = std::string(GPULAB_CLI_PATH) + " " + mpi_train_args(dir, 30);
  const auto taken = dir.path() / "run";  // rank 0's --out
  std::string rank1 = cli;                // rank 1 records nothing; its --out is elsewhere
  rank1.replace(rank1.find(taken.string()), taken.string().size(), (dir.path() / "other").string());
  const auto script = dir.path() / "rank1.sh";
  std::ofstream(script) << "sleep 2\nmkdir -p " << taken.string() << " && echo '{}' > "
                        << (taken / "run.json").string() << "\nexec " << rank1 << " --steps 4\n";
  const MpiJob job = run_mpmd(cli + " --steps 4", "sh " + script.string());
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_LT(job.seconds, 20.0) << job.result.output;
  EXPECT_NE(job.result.output.find("--out " + taken.string() + ": already holds a run"),
            std::string::npos)
      << job.result.output;
}

TEST(AllreduceBench, SizesAndBandwidthsFollowNcclTests) {
  EXPECT_EQ(parse_byte_sizes("4K,...,32K"), (std::vector<size_t>{4096, 8192, 16384, 32768}));
  EXPECT_EQ(parse_byte_sizes("1M,10"), (std::vector<size_t>{1 << 20, 8}));  // whole floats
  EXPECT_EQ(parse_replica_counts("2,4"), (std::vector<int>{2, 4}));
  EXPECT_THROW(parse_byte_sizes("4Q"), ConfigError);
  EXPECT_THROW(parse_byte_sizes("...,4K"), ConfigError);
  EXPECT_THROW(parse_replica_counts("2,zero"), ConfigError);
  // Every flag's list is split the same way: spaces go, an empty entry is refused by name.
  EXPECT_EQ(parse_replica_counts(" 2, 4"), (std::vector<int>{2, 4}));
  EXPECT_EQ(parse_byte_sizes("4K, 8K"), (std::vector<size_t>{4096, 8192}));
  for (const char* bad : {"4K,8K,", "4K,,8K", ""})
    EXPECT_THROW(parse_byte_sizes(bad), ConfigError) << bad;
  EXPECT_THROW(parse_replica_counts("2,"), ConfigError);
  EXPECT_DOUBLE_EQ(bus_bandwidth(10.0, 2), 10.0);  // 2(n-1)/n = 1
  EXPECT_DOUBLE_EQ(bus_bandwidth(10.0, 4), 15.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth(10.0, 1), 0.0);   // one replica moves nothing
  AllreduceBenchOptions quick;
  quick.iterations = 3;
  quick.min_seconds = 0.01;
  const AllreduceTiming t = time_thread_allreduce(3, 64 * 1024, quick);
  EXPECT_EQ(t.replicas, 3);
  EXPECT_EQ(t.bytes, 64u * 1024);
  EXPECT_GT(t.time_us, 0.0);
  EXPECT_NEAR(t.algbw_gbs, 64.0 * 1024 / (t.time_us * 1e-6) / 1e9, 1e-9);
  EXPECT_NEAR(t.busbw_gbs, t.algbw_gbs * 4.0 / 3.0, 1e-9);
}

TEST(AllreduceBench, TheCliPrintsATableAndWritesJson) {
  test::TempDir dir;
  const auto json_path = dir.path() / "allreduce.json";
  const CliResult r = run_command(std::string(GPULAB_CLI_PATH) +
                                  " bench allreduce --device cpu --replicas 2,4 --sizes 4K,...,16K"
                                  " --json " + json_path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("busbw (GB/s)"), std::string::npos) << r.output;
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["results"].size(), 6u);  // 2 replica counts x 3 sizes
  EXPECT_EQ(j["results"][0]["replicas"], 2);
  EXPECT_EQ(j["results"][2]["bytes"], 16384);
  EXPECT_EQ(j["results"][5]["replicas"], 4);
  const CliResult bad = run_command(std::string(GPULAB_CLI_PATH) + " bench allreduce --sizes 4Q");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--sizes"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace gpulab
