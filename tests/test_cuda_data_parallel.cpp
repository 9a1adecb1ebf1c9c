// Data parallelism on GPUs: R replicas on one GPU ("logical GPUs", cuda:0x4) and one replica
// per GPU through NCCL (cuda:0,1) train what one replica trains, to fp32 rounding, and so does
// the course's parameter server in host memory, with every replica's weights the same; a replica
// that fails ends the step naming itself, and an ordinary error leaves the backend training
// what it would have; device names are parsed and refused in one line; two MPI ranks (mpirun)
// train what one process trains, through NCCL on two GPUs or through host memory on one, each
// under a time limit of its own. Skips where there is no GPU (and the NCCL cases where there are
// fewer than two, the MPI ones without MPI or mpirun); the parsing checks and the limit's own
// check run everywhere.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "engine/devices/devices.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "engine/parallel/replicated_backend.hpp"
#include "engine/records/run_record.hpp"
#include "engine/training/backend_factory.hpp"
#include "gpulab/build_config.hpp"
#include "kernels/cuda/check.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

// ---------------------------------------------------------------------------------------------
// Everywhere.

TEST(CudaDevicesParse, EveryFormOfTheIssue) {
  EXPECT_EQ(parse_cuda_devices("cuda").replicas, (std::vector<int>{0}));
  EXPECT_EQ(parse_cuda_devices("cuda:1").replicas, (std::vector<int>{1}));
  EXPECT_EQ(parse_cuda_devices("cuda:0,1").replicas, (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_cuda_devices("cuda:0x4").replicas, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(parse_cuda_devices("cuda:0x2,1x2").replicas, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(parse_cuda_devices("cuda:2,0x2").replicas, (std::vector<int>{2, 0, 0}));
  const CudaDevices all = parse_cuda_devices("cuda:all");
  EXPECT_TRUE(all.all);
  EXPECT_TRUE(all.replicas.empty());
  EXPECT_EQ(cuda_device_index("cuda:all"), 0);
  EXPECT_EQ(cuda_device_index("cuda:1x2,0"), 1);
}

TEST(CudaDevicesParse, BadNamesAreRefusedNamingTheFlag) {
  for (const char* bad : {"cuda:", "cuda:0,", "cuda:,1", "cuda:0x", "cuda:0x0", "cuda:x2",
                          "cuda:0,0", "cuda:0x2,0", "cuda:0x17", "cuda:a", "cuda:0;1", "gpu:0"}) {
    try {
      parse_cuda_devices(bad);
      FAIL() << bad << " accepted";
    } catch (const ConfigError& e) {
      const std::string text = e.what();
      EXPECT_EQ(text.rfind(std::string("--device ") + bad + ": ", 0), 0u) << text;
      EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    }
  }
}

TEST(CudaDevicesParse, GpuReplicasComeFromTheDeviceNotFromReplicas) {
  BackendOptions options;
  options.device = "cuda:0";
  options.replicas = 2;
  try {
    validate(options);
    FAIL() << "--replicas 2 with --device cuda:0 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0x2"), std::string::npos) << e.what();
  }
  // The parameter server takes GPU replicas (issue 41.9), within one process only.
  options.replicas = 1;
  options.sync = SyncMode::ParameterServer;
  for (const char* device : {"cuda:0", "cuda:0x2", "cuda:0,1"}) {
    options.device = device;
    EXPECT_NO_THROW(validate(options)) << device;
  }
  options.device = "cuda:0";
  options.dist = Distribution::Mpi;
  try {
    validate(options);
    FAIL() << "--sync parameter-server with --dist mpi accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--sync parameter-server: runs within one process", 0),
              0u)
        << e.what();
  }
}

// The limit the MPI tests put on mpirun, here on commands that need no GPU.
TEST(MpirunLimit, ACommandPastItsLimitIsStoppedAndSaysSo) {
  const auto started = std::chrono::steady_clock::now();
  const test::CliResult hung = test::run_command_for("sleep 60", 1);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(hung.timed_out) << hung.exit_code << " " << hung.output;
  EXPECT_LT(seconds, 15) << "the limit did not stop it";
  const test::CliResult quick = test::run_command_for("echo done", 30);
  EXPECT_FALSE(quick.timed_out);
  EXPECT_EQ(quick.exit_code, 0);
  EXPECT_EQ(quick.output, "done\n");
  const test::CliResult failed = test::run_command_for("false", 30);
  EXPECT_FALSE(failed.timed_out);
  EXPECT_EQ(failed.exit_code, 1);
}

TEST(CudaDevicesParse, WithoutAGpuEveryFormSaysWhy) {
  if (test::gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  for (const char* device : {"cuda:0x2", "cuda:0,1", "cuda:all", "cuda:9"}) {
    try {
      require_gpus(device);
      FAIL() << device << " accepted without a GPU";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--device ") + device + ": no GPU: "),
                std::string::npos)
          << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// On a GPU.

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

struct Trained {
  std::vector<double> losses;
  std::vector<float> params;
  std::vector<StepTimes> times;
  std::vector<std::vector<ReplicaTimes>> replicas;
  std::vector<std::vector<float>> replica_params;  // each local replica's, at the end
  std::string description;
  CudaGraphCounts graphs;
  std::string cuda_graphs;  // as run.json says it
};

// `steps` steps of batch `batch` over `train` in order (the last batch of an epoch is short), from
// the weights of `seed`, on `device`.
Trained train_steps(const std::string& device, const ModelConfig& model,
                    const OptimizerConfig& optimizer, const data::ImageSet& train, int batch,
                    int steps, uint64_t seed, bool graphs = true, double bucket_mb = 25,
                    SyncMode sync = SyncMode::AllReduce) {
  const ModelPlan plan = plan_model(model);
  BackendOptions options;
  options.device = device;
  options.bucket_mb = bucket_mb;
  options.batch = batch;
  options.seed = seed;
  options.cuda_graph = graphs;
  options.sync = sync;
  const DataSets data{&train, nullptr, nullptr};
  auto backend = make_backend(plan, optimizer, data, options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, seed);
  backend->set_parameters(params);
  Trained out;
  out.description = backend->description();
  int next = 0;
  for (int step = 1; step <= steps; ++step) {
    std::vector<int32_t> indices;
    for (int i = 0; i < batch && next < train.count; ++i) indices.push_back(next++);
    if (next >= train.count) next = 0;
    StepTimes times;
    const BatchStats stats = backend->train_step(indices, optimizer.lr, step, times);
    out.losses.push_back(stats.mean_loss());
    out.times.push_back(times);
    out.replicas.push_back(backend->replica_times());
  }
  backend->synchronize();
  out.params.resize(plan.parameter_count);
  backend->get_parameters(out.params);
  if (auto* replicated = dynamic_cast<ReplicatedBackend*>(backend.get()))
    for (int r = 0; r < replicated->local_replicas(); ++r) {
      out.replica_params.emplace_back(plan.parameter_count);
      replicated->get_replica_parameters(r, out.replica_params.back());
    }
  out.graphs = cuda_graph_counts(*backend);
  out.cuda_graphs = backend->cuda_graphs();
  return out;
}

using test::relative_error;

class CudaDataParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { GPULAB_REQUIRE_GPU(); }
  // 330 images in batches of 32: step 11 is a batch of 10, which 4 replicas split 3, 3, 2, 2.
  data::ImageSet train_set = test::synthetic_set(330, 1);
  static OptimizerConfig momentum() {
    OptimizerConfig o;
    o.kind = OptimizerKind::Momentum;
    o.lr = 0.01f;
    return o;
  }
  void expect_same_training(const std::string& device, float dropout, const OptimizerConfig& o) {
    ModelConfig model = preset("pytorch-example");
    override_dropout(model, dropout);
    const Trained one = train_steps("cuda:0", model, o, train_set, 32, 20, 7);
    const Trained many = train_steps(device, model, o, train_set, 32, 20, 7);
    ASSERT_EQ(many.params.size(), one.params.size());
    EXPECT_TRUE(test::all_finite(many.params)) << device;
    EXPECT_LE(relative_error(many.params, one.params), 1e-5)
        << device << " vs cuda:0, dropout " << dropout << " (" << many.description << ")";
    for (size_t i = 0; i < one.losses.size(); ++i)
      EXPECT_NEAR(many.losses[i], one.losses[i], 1e-5 * std::abs(one.losses[i]) + 1e-6)
          << device << " step " << i + 1;
  }
};

TEST_F(CudaDataParallelTest, LogicalReplicasTrainWhatOneReplicaTrains) {
  for (const char* device : {"cuda:0x2", "cuda:0x4"})
    expect_same_training(device, 0.0f, momentum());
}

TEST_F(CudaDataParallelTest, LogicalReplicasDrawTheWholeBatchsDropout) {
  for (const char* device : {"cuda:0x2", "cuda:0x4"})
    expect_same_training(device, 0.5f, momentum());
}

TEST_F(CudaDataParallelTest, LogicalReplicasWithAdam) {
  OptimizerConfig adam;
  adam.kind = OptimizerKind::Adam;
  adam.lr = 2e-4f;
  expect_same_training("cuda:0x3", 0.25f, adam);
}

// 66 images in batches of 32: steps 3 and 6 are batches of 2, which 3 replicas split 1, 1, 0.
// The replica with no images still updates its weights with Adam, whose bias corrections read
// the step number: it must be this step's, as on the others, or the replicas drift apart.
TEST_F(CudaDataParallelTest, AReplicaWithAnEmptyShardTakesTheSameAdamStep) {
  const data::ImageSet small_set = test::synthetic_set(66, 1);
  OptimizerConfig adam;
  adam.kind = OptimizerKind::Adam;
  // The rate and bounds of LogicalReplicasWithAdam. Step 2's bias corrections instead of step
  // 3's make replica 2's step-3 update about a sixth larger, which its later shards' losses show.
  adam.lr = 2e-4f;
  const ModelConfig model = preset("pytorch-example");
  const Trained one = train_steps("cuda:0", model, adam, small_set, 32, 6, 7);
  const Trained many = train_steps("cuda:0x3", model, adam, small_set, 32, 6, 7);
  ASSERT_EQ(many.params.size(), one.params.size());
  EXPECT_LE(relative_error(many.params, one.params), 1e-5) << many.description;
  for (size_t i = 0; i < one.losses.size(); ++i)
    EXPECT_NEAR(many.losses[i], one.losses[i], 1e-5 * std::abs(one.losses[i]) + 1e-6)
        << "step " << i + 1;
}

TEST_F(CudaDataParallelTest, LogicalReplicasAreDeterministicAndTimed) {
  const ModelConfig model = preset("pytorch-example");
  const Trained a = train_steps("cuda:0x4", model, momentum(), train_set, 32, 12, 3);
  const Trained b = train_steps("cuda:0x4", model, momentum(), train_set, 32, 12, 3);
  EXPECT_EQ(a.params, b.params) << "a fixed-order sum gives the same bits";
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_NE(a.description.find("4 replicas"), std::string::npos) << a.description;
  EXPECT_NE(a.description.find("device all-reduce"), std::string::npos) << a.description;
  EXPECT_EQ(a.graphs.captures, 0) << "several replicas run without graphs for now";
  for (size_t i = 0; i < a.times.size(); ++i) {
    ASSERT_EQ(a.replicas[i].size(), 4u) << "step " << i + 1;
    for (const double ms :
         {a.times[i].forward_ms, a.times[i].allreduce_ms, a.times[i].optimizer_ms}) {
      EXPECT_GE(ms, 0) << "step " << i + 1;
    }
    if (i > 0) {
      EXPECT_GT(a.times[i].allreduce_ms, 0) << "step " << i + 1;
    }
  }
}

// Buckets of 10 KB are reduced on the communication stream while the replicas' backward passes
// still run: the same bits as one bucket after backward, and some of the reduction hidden.
TEST_F(CudaDataParallelTest, SmallBucketsOverlapTheBackwardPassWithTheSameWeights) {
  const ModelConfig model = preset("pytorch-example");
  const Trained whole = train_steps("cuda:0x2", model, momentum(), train_set, 32, 12, 3, true, 25);
  const Trained small = train_steps("cuda:0x2", model, momentum(), train_set, 32, 12, 3, true, 0.01);
  EXPECT_EQ(small.params, whole.params) << "the same sums in the same order";
  double hidden = 0, whole_hidden = 0;
  for (size_t i = 2; i < small.replicas.size(); ++i) {  // times are read a step late
    for (const ReplicaTimes& r : small.replicas[i]) {
      EXPECT_GE(r.hidden_ms, 0) << "step " << i + 1;
      EXPECT_GE(r.communication_ms, 0) << "step " << i + 1;
      hidden += r.hidden_ms;
    }
    for (const ReplicaTimes& r : whole.replicas[i]) whole_hidden += r.hidden_ms;
  }
  EXPECT_GT(hidden, 0) << "no bucket was reduced during a backward pass";
  // One bucket starts after every backward pass; the events around that moment may differ by
  // the timer's resolution (about 0.5 us), no more.
  EXPECT_LT(whole_hidden, 0.01 * double(whole.replicas.size()))
      << "one bucket starts after every backward pass";
}

TEST_F(CudaDataParallelTest, OneReplicaStillReplaysGraphs) {
  const Trained one =
      train_steps("cuda:0", preset("pytorch-example"), momentum(), train_set, 32, 12, 3);
  EXPECT_GT(one.graphs.captures, 0);
  EXPECT_GT(one.graphs.launches, 0);
  const Trained eager =
      train_steps("cuda:0", preset("pytorch-example"), momentum(), train_set, 32, 12, 3, false);
  EXPECT_EQ(eager.graphs.captures, 0);
  EXPECT_LE(relative_error(one.params, eager.params), 1e-6);
}

// The course's recipe (issue 41.9): each replica's gradients go to host memory, a server there
// sums them and takes the optimizer step on its fp32 parameters, and every replica copies the
// new parameters back. Two logical GPUs end with all-reduce's weights and one replica's, to fp32
// rounding (the server steps with the CPU's optimizer, the others with the GPU's), and with the
// same bits on both replicas: both copy one buffer.
TEST_F(CudaDataParallelTest, AParameterServerOnLogicalGpusTrainsWhatAllReduceTrains) {
  OptimizerConfig adam;
  adam.kind = OptimizerKind::Adam;
  adam.lr = 2e-4f;
  ModelConfig model = preset("pytorch-example");
  override_dropout(model, 0.25f);
  for (const OptimizerConfig& o : {momentum(), adam}) {
    SCOPED_TRACE(o.kind == OptimizerKind::Adam ? "adam" : "momentum");
    const Trained one = train_steps("cuda:0", model, o, train_set, 32, 20, 7);
    const Trained all_reduce = train_steps("cuda:0x2", model, o, train_set, 32, 20, 7);
    const Trained server = train_steps("cuda:0x2", model, o, train_set, 32, 20, 7, true, 25,
                                       SyncMode::ParameterServer);
    ASSERT_EQ(server.replica_params.size(), 2u);
    EXPECT_EQ(server.replica_params[1], server.replica_params[0])
        << "the replicas' parameters parted";
    EXPECT_EQ(server.replica_params[0], server.params);
    EXPECT_TRUE(test::all_finite(server.params));
    EXPECT_LE(relative_error(server.params, all_reduce.params), 1e-5) << server.description;
    EXPECT_LE(relative_error(server.params, one.params), 1e-5) << server.description;
    for (size_t i = 0; i < all_reduce.losses.size(); ++i)
      EXPECT_NEAR(server.losses[i], all_reduce.losses[i],
                  1e-5 * std::abs(all_reduce.losses[i]) + 1e-6)
          << "step " << i + 1;
  }
}

// The server's round trip is timed in the step's phases, as the lab compares it with all-reduce:
// the copies and the sum as all-reduce time, the server's update as the optimizer's, on every
// step (the host waits for both copies, so nothing is read a step late). Graphs are off, and the
// run says why. One replica with a server takes the same round trip and trains what it trains
// alone.
TEST_F(CudaDataParallelTest, AParameterServerTimesItsRoundTripAndRunsWithoutGraphs) {
  const ModelConfig model = preset("pytorch-example");
  const Trained server = train_steps("cuda:0x2", model, momentum(), train_set, 32, 12, 3, true, 25,
                                     SyncMode::ParameterServer);
  EXPECT_NE(server.description.find("2 replicas on 1 GPU"), std::string::npos)
      << server.description;
  EXPECT_NE(server.description.find("parameter server in host memory"), std::string::npos)
      << server.description;
  EXPECT_EQ(server.graphs.captures, 0);
  EXPECT_EQ(server.cuda_graphs.rfind("off: the parameter server runs eagerly", 0), 0u)
      << server.cuda_graphs;
  for (size_t i = 0; i < server.times.size(); ++i) {
    EXPECT_GT(server.times[i].allreduce_ms, 0) << "step " << i + 1;
    EXPECT_GT(server.times[i].optimizer_ms, 0) << "step " << i + 1;
    ASSERT_EQ(server.replicas[i].size(), 2u) << "step " << i + 1;
    for (const ReplicaTimes& r : server.replicas[i]) {
      EXPECT_GT(r.communication_ms, 0) << "step " << i + 1 << ", replica " << r.replica;
      EXPECT_GE(r.waiting_ms, 0) << "step " << i + 1 << ", replica " << r.replica;
      EXPECT_EQ(r.hidden_ms, 0) << "nothing starts before a replica's backward pass ends";
    }
  }
  const Trained alone = train_steps("cuda:0", model, momentum(), train_set, 32, 12, 3);
  const Trained alone_server = train_steps("cuda:0", model, momentum(), train_set, 32, 12, 3, true,
                                           25, SyncMode::ParameterServer);
  EXPECT_EQ(alone_server.graphs.captures, 0);
  EXPECT_GT(alone_server.times.back().optimizer_ms, 0);
  EXPECT_LE(relative_error(alone_server.params, alone.params), 1e-5) << alone_server.description;
}

// `gpulab-cli train --device cuda:0x2 --sync parameter-server` records the recipe it ran: the
// sync mode, the parameter server as its reducer, graphs off and why, each replica's share.
TEST_F(CudaDataParallelTest, AParameterServerRunSaysSoInItsRecord) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string command = std::string(GPULAB_CLI_PATH) +
                              " train --model lenet5 --steps 6 --batch 32 --quiet --device "
                              "cuda:0x2 --sync parameter-server --data-dir " +
                              (dir.path() / "data").string() + " --out " +
                              (dir.path() / "run").string();
  const test::CliResult result = test::run_command_for(command, 60);
  ASSERT_EQ(result.exit_code, 0) << command << "\n" << result.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "finished");
  EXPECT_EQ(run.info["config"]["sync"], "parameter-server");
  EXPECT_EQ(run.info["reduction"]["reducer"], "parameter-server");
  EXPECT_EQ(run.info["reduction"]["replicas"], 2);
  EXPECT_EQ(run.info["cuda_graphs"].get<std::string>().rfind("off: the parameter server", 0), 0u)
      << run.info["cuda_graphs"];
  ASSERT_EQ(run.steps.size(), 6u);
  for (const StepMetrics& m : run.steps) EXPECT_GT(m.times.optimizer_ms, 0) << "step " << m.step;
  EXPECT_EQ(run.replica_steps.size(), 12u);
}

TEST_F(CudaDataParallelTest, AReplicaOutOfMemoryNamesItselfAndTheNextRunWorks) {
  const ModelPlan plan = plan_model(preset("pytorch-example"));
  BackendOptions options;
  options.device = "cuda:0x2";
  options.batch = 8'000'000;  // 4 million images a replica: far beyond any GPU
  const DataSets data{&train_set, nullptr, nullptr};
  try {
    make_backend(plan, OptimizerConfig{}, data, options);
    FAIL() << "a batch of 8 million images fitted";
  } catch (const kernels::cuda::CudaError& e) {
    const std::string text = e.what();
    EXPECT_EQ(e.kind(), kernels::cuda::ErrorKind::OutOfMemory) << text;
    EXPECT_NE(text.find("replica 0 (cuda:0)"), std::string::npos) << text;
    EXPECT_NE(text.find("smaller --batch"), std::string::npos) << text;
  }
  const Trained after =
      train_steps("cuda:0x2", preset("pytorch-example"), momentum(), train_set, 32, 5, 3);
  for (const double loss : after.losses) EXPECT_TRUE(std::isfinite(loss));
}

TEST_F(CudaDataParallelTest, AnOrdinaryErrorOnOneReplicaLeavesTheBackendWorking) {
  // A bad index on replica 1's shard fails the step naming the replica; it is no GPU failure, so
  // the backend keeps its replicas and trains on: the next steps are what a backend that never
  // saw the error trains.
  const ModelPlan plan = plan_model(preset("pytorch-example"));
  BackendOptions options;
  options.device = "cuda:0x2";
  options.batch = 8;
  options.seed = 3;
  const DataSets data{&train_set, nullptr, nullptr};
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 3);
  const auto three_steps = [&](bool with_error) {
    auto backend = make_backend(plan, momentum(), data, options);
    backend->set_parameters(params);
    std::vector<double> losses;
    StepTimes times;
    for (int step = 1; step <= 3; ++step) {
      if (with_error && step == 2) {
        const std::vector<int32_t> bad = {0, 1, 2, 3, 4, 5, 6, train_set.count};
        try {
          backend->train_step(bad, 0.01f, step, times);
          ADD_FAILURE() << "an index outside the set was taken";
        } catch (const ReplicaError& e) {
          EXPECT_NE(std::string(e.what()).find("replica 1 failed at step 2"), std::string::npos)
              << e.what();
        }
      }
      std::vector<int32_t> batch(8);
      std::iota(batch.begin(), batch.end(), 8 * (step - 1));
      losses.push_back(backend->train_step(batch, 0.01f, step, times).mean_loss());
    }
    backend->synchronize();
    return losses;
  };
  const std::vector<double> clean = three_steps(false), after_error = three_steps(true);
  EXPECT_EQ(after_error, clean);
}

TEST_F(CudaDataParallelTest, AMissingGpuIsRefusedInOneLine) {
  const std::string device = "cuda:" + std::to_string(gpu_count());
  try {
    require_gpus(device + "x2");
    FAIL() << device << " accepted";
  } catch (const ConfigError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("--device " + device + "x2: no such GPU"), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  }
}

TEST_F(CudaDataParallelTest, NcclAcrossGpusTrainsWhatOneReplicaTrains) {
  if (gpu_count() < 2)
    GTEST_SKIP() << "NCCL needs two GPUs (NCCL refuses two ranks on one GPU); this machine has "
                 << gpu_count();
  expect_same_training("cuda:0,1", 0.0f, momentum());
  expect_same_training("cuda:0x2,1x2", 0.5f, momentum());
  expect_same_training("cuda:all", 0.0f, momentum());
}

// ---------------------------------------------------------------------------------------------
// GPU ranks under MPI: `mpirun -np 2 gpulab-cli train --dist mpi` ends with the weights of one
// process on one GPU, through NCCL (a GPU per rank) or through host memory (both on cuda:0).

// mpirun has no limit of its own: a rank that hangs (before its first collective, where
// --collective-timeout cannot help) would hold the suite until ctest kills it, saying nothing.
// 12 steps take seconds. The cap leaves a test's two runs inside the 75 s the GPU check's single
// stage gives these tests, and a hung collective (30 s) reports itself before it.
constexpr int kRunTimeoutS = 45;

struct MpiGpuRun {
  std::vector<float> params;
  RunData run;
};

class CudaMpiRanksTest : public CudaDataParallelTest {
 protected:
  void SetUp() override {
    CudaDataParallelTest::SetUp();
    if (IsSkipped()) return;
    if (!GPULAB_MPI_ENABLED) GTEST_SKIP() << "this build has no MPI (GPULAB_MPI)";
    if (test::run_command("command -v mpirun").exit_code != 0)
      GTEST_SKIP() << "mpirun is not installed";
    test::write_mnist(dir_.path() / "data", test::synthetic_set(256, 1),
                      test::synthetic_set(64, 2));
  }
  // 12 steps of 32 images on `device`, as one process or as `ranks` processes under mpirun.
  MpiGpuRun train(const std::string& name, const std::string& device, int ranks) {
    const auto weights = dir_.path() / (name + ".safetensors");
    const auto out = dir_.path() / name;
    std::string command = std::string(GPULAB_CLI_PATH) +
                          " train --model lenet5 --steps 12 --batch 32 --quiet --device " + device +
                          " --data-dir " + (dir_.path() / "data").string() + " --out " +
                          out.string() + " --save " + weights.string();
    if (ranks > 1)
      command = "mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " " +
                command + " --dist mpi --collective-timeout 30";
    const test::CliResult result = test::run_command_for(command, kRunTimeoutS);
    if (result.timed_out)
      ADD_FAILURE() << (ranks > 1 ? "mpirun" : "gpulab-cli") << " did not finish in "
                    << kRunTimeoutS << " s and was stopped (a rank hung, or the machine is slower "
                    << "than kRunTimeoutS allows): " << command << "\n"
                    << result.output;
    else
      EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
    MpiGpuRun trained;
    if (result.exit_code != 0) return trained;
    const ModelPlan plan = plan_model(preset("lenet5"));
    trained.params.resize(plan.parameter_count);
    apply_checkpoint(load_checkpoint(weights), plan, trained.params, weights.string());
    trained.run = load_run(out);
    return trained;
  }
  // Trains one process on cuda:0, then two ranks on `device`, into `two`; the ranks must end
  // with the one process's weights and finish.
  void train_two_ranks_like_one(const std::string& device, MpiGpuRun* two) {
    const MpiGpuRun one = train("one", "cuda:0", 1);
    *two = train("two", device, 2);
    ASSERT_FALSE(one.params.empty());
    ASSERT_FALSE(two->params.empty());
    EXPECT_TRUE(test::all_finite(two->params));
    EXPECT_LE(relative_error(two->params, one.params), 1e-5);
    EXPECT_EQ(two->run.status(), "finished");
  }
  test::TempDir dir_;
};

TEST_F(CudaMpiRanksTest, TwoRanksOnTwoGpusAllReduceThroughNccl) {
  if (gpu_count() < 2)
    GTEST_SKIP() << "a GPU per rank needs two GPUs (NCCL refuses two ranks on one GPU); this "
                    "machine has "
                 << gpu_count();
  MpiGpuRun two;
  ASSERT_NO_FATAL_FAILURE(train_two_ranks_like_one("cuda", &two));  // rank r takes GPU r
  const nlohmann::json& info = two.run.info;
  EXPECT_EQ(info["transport"]["reducer"], "nccl") << info["transport"];
  EXPECT_NE(info["transport"]["reason"].get<std::string>().find("a GPU of its own"),
            std::string::npos)
      << info["transport"];
  ASSERT_EQ(info["devices"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(info["devices"][rank]["rank"], rank);
    EXPECT_EQ(info["devices"][rank]["id"], "cuda:" + std::to_string(rank));
    EXPECT_TRUE(info["devices"][rank].contains("host"));
    EXPECT_TRUE(info["devices"][rank].contains("pci_bus_id"));
  }
  EXPECT_NE(info["devices"][0]["pci_bus_id"], info["devices"][1]["pci_bus_id"]);
  EXPECT_EQ(two.run.replica_steps.size(), 24u);  // both ranks, every step
}

TEST_F(CudaMpiRanksTest, TwoRanksSharingAGpuGoThroughHostMemoryAndSaySo) {
  MpiGpuRun two;
  ASSERT_NO_FATAL_FAILURE(train_two_ranks_like_one("cuda:0", &two));  // both ranks on GPU 0
  const nlohmann::json& info = two.run.info;
  EXPECT_EQ(info["transport"]["reducer"], "mpi-host") << info["transport"];
  const std::string reason = info["transport"]["reason"];
  EXPECT_EQ(reason.rfind("ranks 0 and 1 share GPU 0", 0), 0u) << reason;
  EXPECT_NE(reason.find("gradients go through host memory over MPI"), std::string::npos) << reason;
  ASSERT_EQ(info["devices"].size(), 2u);
  EXPECT_EQ(info["devices"][1]["id"], "cuda:0");
  // Rank 0's start line (the description) says the same.
  const std::string start_line = info["devices"][0]["description"];
  EXPECT_NE(start_line.find("mpi-host all-reduce: ranks 0 and 1 share GPU 0"), std::string::npos)
      << start_line;
  EXPECT_EQ(info["reduction"]["reducer"], "mpi-host");
  EXPECT_EQ(two.run.replica_steps.size(), 24u);
}

}  // namespace
}  // namespace gpulab
