// Data parallelism: R replicas compute what one replica computes (with and without dropout, with
// a batch that does not divide), all-reduce and the parameter server agree, bucket sizes change
// nothing, a peer that never arrives times out, a failing replica names itself, two MPI
// processes end with the weights of one, GPU ranks choose their GPU and transport (and are
// refused in one line), and the all-reduce benchmark.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/allreduce_bench.hpp"
#include "engine/checkpoint.hpp"
#include "engine/errors.hpp"
#include "engine/cpu_backend.hpp"
#include "engine/gpu_ranks.hpp"
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

// Two processes under mpirun, each one replica of a batch of 32, end with the weights of one
// process training on the whole batch.
TEST(DataParallelMpi, TwoProcessesEndWithOneProcesssWeights) {
  if (!GPULAB_MPI_ENABLED) GTEST_SKIP() << "this build has no MPI (GPULAB_MPI)";
  if (run_command("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun is not installed";
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
                                     " --dist mpi --collective-timeout 60 --out " +
                                     (dir.path() / "run2").string() + " --save " + two.string());
  ASSERT_EQ(pair.exit_code, 0) << pair.output;
  const ModelPlan plan = plan_model(preset("lenet5"));
  std::vector<float> a(plan.parameter_count), b(plan.parameter_count);
  apply_checkpoint(load_checkpoint(one), plan, a, one.string());
  apply_checkpoint(load_checkpoint(two), plan, b, two.string());
  EXPECT_LE(relative_error(b, a), 1e-5);
  const RunData run = load_run(dir.path() / "run2");
  EXPECT_EQ(run.status(), "finished");
  ASSERT_EQ(run.info["devices"].size(), 2u);
  EXPECT_TRUE(run.info["devices"][1].contains("host"));
  // Each rank's own entry, gathered from it.
  EXPECT_EQ(run.info["devices"][1]["rank"], 1);
  const std::string second = run.info["devices"][1]["description"];
  EXPECT_EQ(second.rfind("MPI rank 1 of 2: cpu", 0), 0u) << second;
  EXPECT_EQ(run.replica_steps.size(), 24u);  // both ranks, every step
}

TEST(AllreduceBench, SizesAndBandwidthsFollowNcclTests) {
  EXPECT_EQ(parse_byte_sizes("4K,...,32K"), (std::vector<size_t>{4096, 8192, 16384, 32768}));
  EXPECT_EQ(parse_byte_sizes("1M,10"), (std::vector<size_t>{1 << 20, 8}));  // whole floats
  EXPECT_EQ(parse_replica_counts("2,4"), (std::vector<int>{2, 4}));
  EXPECT_THROW(parse_byte_sizes("4Q"), ConfigError);
  EXPECT_THROW(parse_byte_sizes("...,4K"), ConfigError);
  EXPECT_THROW(parse_replica_counts("2,zero"), ConfigError);
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
