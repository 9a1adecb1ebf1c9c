// The CUDA backend: the same losses as the CPU from the same weights, the same losses again for
// the same seed, with CUDA graphs on (really captured and replayed) and off, out of memory that
// names what failed and leaves the process working, an ordinary error that leaves the backend
// working, a device fault that fails its run (saying whether the reset worked) and leaves the
// next process working, two runs on one GPU that do not disturb each other, step timings that
// skip what has not completed, and whole runs with GPU telemetry. Skips where there is no GPU;
// the device, precision, failure-message and no-GPU checks run everywhere.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_support.hpp"
#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_failure.hpp"
#include "engine/cuda/cuda_graph_cache.hpp"
#include "engine/cuda/cuda_replica.hpp"
#include "engine/cuda/cuda_staging.hpp"
#include "engine/cuda/cuda_step_timer.hpp"
#include "engine/devices/devices.hpp"
#include "engine/model/init.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/session.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/trainer.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/memory.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace test {
cudaError_t trap_on_device();  // cuda_fault.cu
}  // namespace test
namespace {

// ---------------------------------------------------------------------------------------------
// Everywhere.

TEST(CudaBackendConfig, PrecisionOtherThanFp32IsRejectedOnTheCpu) {
  // The CPU has no tf32 or bf16 kernels: it says so rather than run fp32 under another name.
  BackendOptions options;
  for (const Precision precision : {Precision::Tf32, Precision::Bf16}) {
    options.precision = precision;
    const std::string flag = std::string("--precision ") + precision_name(precision);
    try {
      validate(options);
      ADD_FAILURE() << flag << " accepted on the CPU";
    } catch (const ConfigError& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find(flag), std::string::npos) << text;
      EXPECT_NE(text.find("the CPU computes in fp32 only"), std::string::npos) << text;
      EXPECT_NE(text.find("no tf32 or bf16 CPU kernels"), std::string::npos) << text;
    }
  }
  options.precision = Precision::Fp32;
  EXPECT_NO_THROW(validate(options));
  EXPECT_EQ(parse_precision("tf32"), Precision::Tf32);
  EXPECT_STREQ(precision_name(Precision::Bf16), "bf16");
  EXPECT_THROW(parse_precision("fp16"), ConfigError);
}

TEST(CudaBackendConfig, DeviceNamesAreChecked) {
  EXPECT_EQ(cuda_device_index("cpu"), -1);
  EXPECT_EQ(cuda_device_index("cuda"), 0);
  EXPECT_EQ(cuda_device_index("cuda:3"), 3);
  for (const char* bad : {"cuda:", "cuda:x", "gpu", "cuda:-1", "cuda:1a"})
    EXPECT_THROW(cuda_device_index(bad), ConfigError) << bad;
}

TEST(CudaBackendConfig, NoGpuReasonsSayWhatIsWrong) {
  EXPECT_NE(no_gpu_reason(35, "", false, "", "13.0").find("no NVIDIA driver"), std::string::npos);
  const std::string old = no_gpu_reason(35, "", true, "535.104.05", "13.0");
  EXPECT_NE(old.find("too old"), std::string::npos) << old;
  EXPECT_NE(old.find("535.104.05"), std::string::npos) << old;
  EXPECT_NE(old.find("13.0"), std::string::npos) << old;
  EXPECT_NE(no_gpu_reason(100, "", true, "580.1", "13.0").find("sees no CUDA device"),
            std::string::npos);
  EXPECT_NE(no_gpu_reason(0, "", true, "580.1", "13.0").find("sees no CUDA device"),
            std::string::npos);
  EXPECT_NE(no_gpu_reason(3, "cudaErrorInitializationError: x", true, "", "13.0")
                .find("cudaErrorInitializationError"),
            std::string::npos);
}

TEST(CudaBackendConfig, RunJsonRecordsTheRealPrecision) {
  test::TempDir dir;
  const data::ImageSet train = test::synthetic_set(64, 1), test_images = test::synthetic_set(16, 2);
  const data::MnistData mnist{train, test_images, dir.path()};
  RunRequest request;
  request.model = preset("mlp");
  request.train.batch = 32;
  request.train.epochs = 1;
  request.backend.cuda_graph = false;
  request.out_dir = dir.path() / "run";
  RunObserver observer;
  RunControl control;
  const RunSummary summary = execute_run(request, observer, control, &mnist);
  ASSERT_EQ(summary.status, RunStatus::Finished) << summary.message;
  std::ifstream in(dir.path() / "run" / "run.json");
  const auto info = nlohmann::json::parse(in);
  EXPECT_EQ(info["config"]["precision"], "fp32");
  EXPECT_EQ(info["config"]["cuda_graph"], false);
  EXPECT_FALSE(info.contains("cuda_graphs")) << "a CPU run has no CUDA graphs to speak of";

  // A precision the device cannot do fails the run, saying so, with the record kept.
  request.backend.precision = Precision::Tf32;
  request.out_dir = dir.path() / "run2";
  const RunSummary refused = execute_run(request, observer, control, &mnist);
  EXPECT_EQ(refused.status, RunStatus::Failed);
  EXPECT_NE(refused.message.find("--precision tf32"), std::string::npos) << refused.message;
}

TEST(CudaFailure, AFaultSaysTheRunEndsAndNothingOfAReset) {
  // The reset comes later, once every replica has let go: the message says it only then.
  const kernels::cuda::CudaError fault(kernels::cuda::ErrorKind::DeviceFault, 719,
                                       "cudaStreamSynchronize(stream)", "x.cpp", 1,
                                       "cudaStreamSynchronize(stream) failed: "
                                       "cudaErrorLaunchFailure: unspecified launch failure");
  const std::string text = describe_cuda_failure(fault, "cuda:0", 32).what();
  EXPECT_EQ(text.find("cuda:0: the GPU failed; the run ends here: cudaStreamSynchronize"), 0u)
      << text;
  EXPECT_EQ(text.find("reset"), std::string::npos) << text;
  const kernels::cuda::CudaError other(kernels::cuda::ErrorKind::Other, 1, "cudaMemcpyAsync(...)",
                                       "x.cpp", 1, "cudaErrorInvalidValue: invalid argument");
  const std::string plain = describe_cuda_failure(other, "replica 1 (cuda:0)", 32).what();
  EXPECT_EQ(plain, "replica 1 (cuda:0): cudaErrorInvalidValue: invalid argument");
}

TEST(CudaFailure, TheMessageSaysResetOnlyWhereTheResetWorked) {
  EXPECT_EQ(reset_note({}), "");
  EXPECT_EQ(reset_note({{0, ""}}), "; cuda:0 was reset and takes work again");
  const std::string restart = reset_note({{0, "cudaErrorLaunchFailure"}});
  EXPECT_EQ(restart,
            "; GPU runs need a restart of gpulab: cuda:0 still fails after a reset "
            "(cudaErrorLaunchFailure)");
  EXPECT_EQ(restart.find("was reset"), std::string::npos);
  EXPECT_EQ(reset_note({{0, ""}, {1, "cudaErrorIllegalAddress"}, {2, "cudaErrorIllegalAddress"}}),
            "; cuda:0 was reset and takes work again; GPU runs need a restart of gpulab: cuda:1, "
            "cuda:2 still fails after a reset (cudaErrorIllegalAddress)");
  // Nothing but a fault resets a GPU: out of memory or a bad argument leave the context alone.
  EXPECT_EQ(reset_after_fault({0}, kernels::cuda::ErrorKind::OutOfMemory), "");
  EXPECT_EQ(reset_after_fault({0}, kernels::cuda::ErrorKind::Other), "");
}

// A stand-in for stream capture: it calls what it records (as a capture does, running nothing:
// the work counts as recorded, not run) and refuses, as a driver does, while `refusal` is set.
struct FakeCapturer final : GraphCapturer {
  struct Graph final : CapturedGraph {
    std::function<void()> replay;
    void launch(cudaStream_t) override { replay(); }
  };
  cudaError_t refusal = cudaSuccess;
  int captures = 0;
  bool* recording = nullptr;
  std::unique_ptr<CapturedGraph> capture(cudaStream_t,
                                         const std::function<void()>& enqueue) override {
    ++captures;
    *recording = true;
    enqueue();
    *recording = false;
    GPULAB_CUDA_CHECK(refusal);
    auto graph = std::make_unique<Graph>();
    graph->replay = enqueue;
    return graph;
  }
};

struct PhaseWork {
  bool recording = false;
  int ran = 0, recorded = 0;
  std::function<void()> enqueue() {
    return [this] { recording ? ++recorded : ++ran; };
  }
};

TEST(CudaGraphFallback, ACaptureTheDriverRefusesRunsThatPhaseEagerlyAndSaysWhy) {
  PhaseWork work;
  auto owned = std::make_unique<FakeCapturer>();
  FakeCapturer& capturer = *owned;
  capturer.recording = &work.recording;
  CudaGraphCache cache(true, std::move(owned));
  const CudaGraphCache::Key forward{kForwardPhase, 32, 0, 32}, backward{kBackwardPhase, 32, 0, 32},
      backward_last{kBackwardPhase, 10, 0, 10};

  // Step 1 is eager; step 2 captures both phases, and the driver refuses the backward one.
  cache.run(forward, nullptr, work.enqueue());
  cache.run(backward, nullptr, work.enqueue());
  EXPECT_EQ(work.ran, 2);
  cache.run(forward, nullptr, work.enqueue());
  capturer.refusal = cudaErrorStreamCaptureUnsupported;
  EXPECT_NO_THROW(cache.run(backward, nullptr, work.enqueue()));
  capturer.refusal = cudaSuccess;
  // The refused phase ran eagerly at once (recording it ran nothing), the forward replayed.
  EXPECT_EQ(work.recorded, 2);
  EXPECT_EQ(work.ran, 4);
  EXPECT_EQ(cache.counts().captures, 1);
  EXPECT_EQ(cache.counts().launches, 1);
  const std::string refused = cache.counts().refused;
  EXPECT_EQ(refused.rfind("backward phase: ", 0), 0u) << refused;
  EXPECT_NE(refused.find("cudaErrorStreamCaptureUnsupported"), std::string::npos) << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos) << refused;

  // From then on the phase is eager at every shape and never captured again; the others replay.
  for (int step = 3; step <= 5; ++step) {
    cache.run(forward, nullptr, work.enqueue());
    cache.run(backward, nullptr, work.enqueue());
    cache.run(backward_last, nullptr, work.enqueue());
  }
  EXPECT_EQ(capturer.captures, 2);
  EXPECT_EQ(work.ran, 4 + 3 * 3);
  EXPECT_EQ(cache.counts().launches, 4);
  EXPECT_EQ(cuda_graphs_text(true, 1, cache.counts()), "off after capture failed: " + refused);
}

TEST(CudaGraphFallback, AFaultWhileCapturingFailsTheStepInsteadOfRunningOn) {
  for (const cudaError_t fault : {cudaErrorIllegalAddress, cudaErrorMemoryAllocation}) {
    PhaseWork work;
    auto owned = std::make_unique<FakeCapturer>();
    owned->recording = &work.recording;
    owned->refusal = fault;
    CudaGraphCache cache(true, std::move(owned));
    const CudaGraphCache::Key key{kOptimizerPhase, 8, 0, 8};
    cache.run(key, nullptr, work.enqueue());
    EXPECT_THROW(cache.run(key, nullptr, work.enqueue()), kernels::cuda::CudaError)
        << cudaGetErrorName(fault);
    EXPECT_EQ(work.ran, 1) << cudaGetErrorName(fault);
    EXPECT_EQ(cache.counts().refused, "") << cudaGetErrorName(fault);
  }
}

TEST(CudaGraphFallback, GraphsOffOrNoKeyNeverCapture) {
  PhaseWork work;
  auto owned = std::make_unique<FakeCapturer>();
  FakeCapturer& capturer = *owned;
  capturer.recording = &work.recording;
  CudaGraphCache off(false, std::move(owned));
  for (int i = 0; i < 3; ++i)
    off.run(CudaGraphCache::Key{kGatherPhase, 4, 0, 4}, nullptr, work.enqueue());
  auto on_owned = std::make_unique<FakeCapturer>();
  FakeCapturer& on_capturer = *on_owned;
  on_capturer.recording = &work.recording;
  CudaGraphCache on(true, std::move(on_owned));
  for (int i = 0; i < 3; ++i) on.run(std::nullopt, nullptr, work.enqueue());
  EXPECT_EQ(work.ran, 6);
  EXPECT_EQ(capturer.captures + on_capturer.captures, 0);
  EXPECT_EQ(cuda_graphs_text(false, 1, off.counts()), "off");
  EXPECT_EQ(cuda_graphs_text(true, 1, on.counts()), "on");
  EXPECT_EQ(cuda_graphs_text(true, 4, on.counts()),
            "off: 4 replicas in one process run eagerly (graphs are for one replica)");
  // The parameter server's sum and update run on the host mid-step, for any number of replicas.
  for (const int replicas : {1, 2})
    EXPECT_EQ(cuda_graphs_text(true, replicas, on.counts(), true)
                  .rfind("off: the parameter server runs eagerly (each step's sum and update run "
                         "on the host",
                         0),
              0u);
  EXPECT_EQ(cuda_graphs_text(false, 2, on.counts(), true), "off");
}

// A replica whose shard is empty (a last batch smaller than the replicas) has no graph keys for
// its step, so its update runs eagerly instead of replaying the step before's graph.
TEST(CudaGraphFallback, AnEmptyShardHasNoGraphKeysAfterAFullOne) {
  StepGraphKeys keys;
  keys.start_step(32, Shard{32, 64});
  EXPECT_EQ(keys.key(kOptimizerPhase), (CudaGraphCache::Key{kOptimizerPhase, 32, 32, 64}));
  EXPECT_EQ(keys.key(kGatherPhase), (CudaGraphCache::Key{kGatherPhase, 32, 32, 64}));
  keys.start_step(0, Shard{5, 5});
  for (const GraphPhase phase : {kGatherPhase, kForwardPhase, kBackwardPhase, kOptimizerPhase})
    EXPECT_EQ(keys.key(phase), std::nullopt) << graph_phase_name(phase);
  // A whole batch (global_batch 0) is keyed with its own size.
  keys.start_step(10, Shard{});
  EXPECT_EQ(keys.key(kBackwardPhase), (CudaGraphCache::Key{kBackwardPhase, 10, 0, 10}));
  EXPECT_EQ(keys.shard().global_batch, 10);
}

TEST(CudaBackendConfig, WithoutAGpuTheBackendSaysWhy) {
  if (test::gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  const DeviceList devices = list_devices();
  EXPECT_TRUE(devices.gpus.empty());
  EXPECT_FALSE(devices.no_gpu_reason.empty());
  const ModelPlan plan = plan_model(preset("mlp"));
  const data::ImageSet train = test::synthetic_set(8, 1);
  BackendOptions options;
  options.device = "cuda:0";
  try {
    make_backend(plan, OptimizerConfig{}, DataSets{&train, nullptr, nullptr}, options);
    FAIL() << "a CUDA backend without a GPU";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--device cuda:0: no GPU: "), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// On a GPU.

struct Losses {
  std::vector<double> loss;
  std::vector<StepTimes> times;
  std::vector<double> step_ms, time_s;  // the host's timing of each step, and when it ended
};

struct Recorder : TrainObserver {
  Losses* out;
  std::function<void(const StepMetrics&)> after_step;
  explicit Recorder(Losses* o) : out(o) {}
  void on_step(const StepMetrics& m) override {
    out->loss.push_back(m.loss);
    out->times.push_back(m.times);
    out->step_ms.push_back(m.step_ms);
    out->time_s.push_back(m.time_s);
    if (after_step) after_step(m);
  }
};

struct Recipe {
  ModelConfig model = preset("pytorch-example");
  TrainOptions train;
  BackendOptions backend;
  std::vector<float> init;  // empty: init_parameters from the seed
  // A learning rate asked for after this step, as the window's field does; 0: none.
  int64_t change_lr_after = 0;
  double new_lr = 0;
};

Losses train_on(const Recipe& run, const std::string& device, const DataSets& data,
                std::vector<float>* final_params = nullptr, CudaGraphCounts* graphs = nullptr) {
  const ModelPlan plan = plan_model(run.model);
  BackendOptions options = run.backend;
  options.device = device;
  options.batch = run.train.batch;
  options.seed = run.train.seed;
  auto backend = make_backend(plan, run.train.optimizer, data, options);
  std::vector<float> params = run.init;
  if (params.empty()) {
    params.resize(plan.parameter_count);
    init_parameters(params, plan, run.train.seed);
  }
  backend->set_parameters(params);
  Losses losses;
  Recorder recorder(&losses);
  RunControl control;
  recorder.after_step = [&](const StepMetrics& m) {
    if (m.step == run.change_lr_after) control.request_lr(run.new_lr);
  };
  const RunSummary summary = train(*backend, data, run.train, recorder, control);
  EXPECT_EQ(summary.status, RunStatus::Finished) << summary.message;
  if (final_params) {
    final_params->resize(plan.parameter_count);
    backend->get_parameters(*final_params);
  }
  if (graphs) *graphs = cuda_graph_counts(*backend);
  return losses;
}

// |a - b| <= bound * |b| at every step (plus 1e-6 absolute, for losses near zero).
void expect_relative(const std::vector<double>& a, const std::vector<double>& b, double bound,
                     const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i])) << what << " step " << i + 1;
    EXPECT_LE(std::abs(a[i] - b[i]), bound * std::abs(b[i]) + 1e-6)
        << what << " step " << i + 1 << ": " << a[i] << " vs " << b[i];
  }
}

// One step's gradients of every parameter tensor of a preset (dropout on where the preset has
// it), on `device`: a backward kernel wrong for one tensor hides in a 50-step loss curve that the
// other tensors still bring down. Read through plain SGD at lr 1024, which passes the gradients
// through as they are (a power of two: (p0 - p1) / lr is g up to the rounding of p1, ~1e-7 of g).
struct PresetGradients {
  std::vector<std::string> names;  // "conv1.weight"
  std::vector<std::vector<float>> tensors;
};
PresetGradients one_step_gradients(const std::string& name, const std::string& device,
                                   const DataSets& data, bool reference_kernels,
                                   ConvAlgorithm conv = ConvAlgorithm::Im2col) {
  constexpr float kLr = 1024.0f;
  Recipe run;
  run.model = preset(name);
  run.train.batch = 8;
  run.train.epochs = 0;
  run.train.max_steps = 1;
  run.train.shuffle = false;
  run.train.seed = 11;
  run.train.optimizer.kind = OptimizerKind::SGD;
  run.train.optimizer.lr = kLr;
  run.train.optimizer.weight_decay = 0.0f;
  run.train.eval_at_epoch_end = false;
  run.backend.reference_kernels = reference_kernels;
  run.backend.conv = conv;
  const ModelPlan plan = plan_model(run.model);
  run.init.resize(plan.parameter_count);
  init_parameters(run.init, plan, run.train.seed);
  std::vector<float> after;
  train_on(run, device, data, &after);
  PresetGradients out;
  if (after.size() != run.init.size()) return out;
  for (const ParameterInfo& tensor : plan.parameters) {
    out.names.push_back(tensor.name);
    std::vector<float>& grad = out.tensors.emplace_back();
    for (int64_t i = tensor.offset; i < tensor.offset + tensor.numel(); ++i)
      grad.push_back((run.init[size_t(i)] - after[size_t(i)]) / kLr);
  }
  return out;
}
// Normalized error per tensor against the CPU's reference kernels: room for fp32 sums in another
// order through every layer (the fast CPU kernels, Winograd included, stay inside it:
// CudaBackendConfig.TheGradientBoundHoldsAFastFp32BackendAndFailsAWrongGradient); a wrong kernel
// is off by ~1.
constexpr double kGradientBound = 1e-5;

TEST(CudaBackendConfig, TheGradientBoundHoldsAFastFp32BackendAndFailsAWrongGradient) {
  // The comparison EveryPresetsGradientsMatchTheCpuTensorByTensor makes, on the CPU: the fast
  // kernels (float sums in another order) pass it on every tensor of two presets, and a gradient
  // that is wrong (one tensor's taken from another batch) fails it.
  const data::ImageSet train = test::synthetic_set(64, 1), other = test::synthetic_set(64, 9);
  const DataSets data{&train, nullptr, nullptr}, other_data{&other, nullptr, nullptr};
  for (const char* name : {"lenet5", "mlp"}) {
    const PresetGradients fast = one_step_gradients(name, "cpu", data, false),
                          reference = one_step_gradients(name, "cpu", data, true),
                          wrong = one_step_gradients(name, "cpu", other_data, true);
    ASSERT_FALSE(reference.tensors.empty()) << name;
    ASSERT_EQ(fast.tensors.size(), reference.tensors.size()) << name;
    for (size_t t = 0; t < reference.tensors.size(); ++t) {
      const std::string what = std::string(name) + " " + reference.names[t];
      EXPECT_LE(test::normalized_error(fast.tensors[t], reference.tensors[t]), kGradientBound)
          << what;
      EXPECT_GT(test::normalized_error(wrong.tensors[t], reference.tensors[t]), kGradientBound)
          << what;
    }
  }
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { GPULAB_REQUIRE_GPU(); }
  // 330 images: batches of 32 leave a last batch of 10, so two graph sizes get captured.
  data::ImageSet train_set = test::synthetic_set(330, 1), test_set = test::synthetic_set(100, 2);
  DataSets data{&train_set, nullptr, &test_set};
};

Recipe fifty_steps(const char* model, OptimizerKind optimizer, float dropout) {
  Recipe run;
  run.model = preset(model);
  override_dropout(run.model, dropout);
  run.train.batch = 32;
  run.train.epochs = 0;
  run.train.max_steps = 50;
  run.train.shuffle = false;
  run.train.seed = 7;
  run.train.optimizer.kind = optimizer;
  // Rates low enough that the loss is still well above zero after 50 steps, where a relative
  // comparison means something.
  run.train.optimizer.lr =
      optimizer == OptimizerKind::Adam || optimizer == OptimizerKind::AdamW ? 2e-4f : 0.01f;
  if (optimizer == OptimizerKind::AdamW) run.train.optimizer.weight_decay = 0.01f;
  if (optimizer == OptimizerKind::Momentum) run.train.optimizer.weight_decay = 1e-4f;
  run.train.eval_at_epoch_end = false;
  return run;
}

TEST_F(CudaBackendTest, FiftyStepsMatchTheCpuInFp32) {
  for (const auto& [model, optimizer] :
       {std::pair{"pytorch-example", OptimizerKind::Adam},
        std::pair{"lenet5", OptimizerKind::Momentum}, std::pair{"mlp", OptimizerKind::SGD},
        std::pair{"tf-tutorial", OptimizerKind::AdamW}}) {
    const Recipe run = fifty_steps(model, optimizer, 0.0f);
    const Losses cpu = train_on(run, "cpu", data), gpu = train_on(run, "cuda:0", data);
    expect_relative(gpu.loss, cpu.loss, 1e-3, std::string(model) + " GPU vs CPU");
  }
}

TEST_F(CudaBackendTest, EveryPresetsGradientsMatchTheCpuTensorByTensor) {
  for (const std::string& name : preset_names()) {
    const PresetGradients gpu = one_step_gradients(name, "cuda:0", data, false),
                          cpu = one_step_gradients(name, "cpu", data, true);
    for (size_t t = 0; t < gpu.tensors.size() && t < cpu.tensors.size(); ++t) {
      const std::string what = name + " " + gpu.names[t];
      EXPECT_TRUE(test::all_finite(gpu.tensors[t])) << what;
      EXPECT_LE(test::normalized_error(gpu.tensors[t], cpu.tensors[t]), kGradientBound) << what;
    }
  }
}

// --conv implicit (implicit-GEMM convolutions, each fused with the ReLU after it) against the
// im2col path, the reference, on every preset, tensor by tensor, both against the CPU too; and
// fifty steps of the presets with convolutions give im2col's losses, with CUDA graphs.
TEST_F(CudaBackendTest, ImplicitConvolutionsGiveEveryPresetsGradientsOfIm2col) {
  for (const std::string& name : preset_names()) {
    const PresetGradients implicit = one_step_gradients(name, "cuda:0", data, false,
                                                        ConvAlgorithm::Implicit),
                          im2col = one_step_gradients(name, "cuda:0", data, false),
                          cpu = one_step_gradients(name, "cpu", data, true);
    ASSERT_EQ(implicit.tensors.size(), im2col.tensors.size()) << name;
    ASSERT_FALSE(implicit.tensors.empty()) << name;
    for (size_t t = 0; t < implicit.tensors.size() && t < cpu.tensors.size(); ++t) {
      const std::string what = name + " " + implicit.names[t];
      EXPECT_TRUE(test::all_finite(implicit.tensors[t])) << what;
      EXPECT_LE(test::normalized_error(implicit.tensors[t], im2col.tensors[t]), kGradientBound)
          << what << " against im2col";
      EXPECT_LE(test::normalized_error(implicit.tensors[t], cpu.tensors[t]), kGradientBound)
          << what << " against the CPU";
    }
  }
}

TEST_F(CudaBackendTest, ImplicitConvolutionsTrainAsIm2colDoes) {
  for (const char* model : {"pytorch-example", "lenet5", "vgg-small"}) {
    Recipe run = fifty_steps(model, OptimizerKind::Adam, 0.0f);
    run.backend.cuda_graph = true;
    const Losses im2col = train_on(run, "cuda:0", data);
    run.backend.conv = ConvAlgorithm::Implicit;
    const Losses implicit = train_on(run, "cuda:0", data);
    expect_relative(implicit.loss, im2col.loss, 1e-3, std::string(model) + " implicit vs im2col");
  }
}

TEST_F(CudaBackendTest, DropoutDrawsTheCpuMasks) {
  // The same Philox bits on both sides: with dropout on, the losses still agree.
  const Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.5f);
  const Losses cpu = train_on(run, "cpu", data), gpu = train_on(run, "cuda:0", data);
  expect_relative(gpu.loss, cpu.loss, 1e-3, "pytorch-example with dropout, GPU vs CPU");
}

TEST_F(CudaBackendTest, SameSeedSameLossesBitForBit) {
  // Every kernel here is deterministic (no atomics; fixed-order reductions) and cuBLAS is
  // deterministic for a fixed handle, stream and GPU, so two runs give identical bits.
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.5f);
  run.train.shuffle = true;
  run.train.schedule.kind = ScheduleKind::OneCycle;
  const Losses a = train_on(run, "cuda:0", data), b = train_on(run, "cuda:0", data);
  EXPECT_EQ(a.loss, b.loss);
}

TEST_F(CudaBackendTest, GraphsOnAndOffGiveTheSameLosses) {
  // A schedule that changes lr every step and dropout that changes with the step: replayed
  // graphs must read both from device memory. 330 images in batches of 32 give two graph sizes.
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.5f);
  run.train.shuffle = true;
  run.train.schedule.kind = ScheduleKind::OneCycle;
  run.train.optimizer.lr = 1e-3f;
  run.backend.cuda_graph = true;
  CudaGraphCounts graphs_on, graphs_off;
  const Losses on = train_on(run, "cuda:0", data, nullptr, &graphs_on);
  run.backend.cuda_graph = false;
  const Losses off = train_on(run, "cuda:0", data, nullptr, &graphs_off);
  // Equal losses alone would also pass if no graph ever ran. 50 steps over 330 images are 46
  // batches of 32 and 4 of 10 (steps 11, 22, 33, 44). Each of the 4 phases runs eagerly the first
  // time at a batch size and is captured the second: 4 x 2 captures; every run from the second
  // on is a replay: 4 x (45 + 3) launches.
  EXPECT_EQ(graphs_on.captures, 8);
  EXPECT_EQ(graphs_on.launches, 192);
  EXPECT_EQ(graphs_off.captures, 0);
  EXPECT_EQ(graphs_off.launches, 0);
  expect_relative(on.loss, off.loss, 1e-6, "graphs on vs off");
  // Expected to be bit for bit the same (the same kernels with the same arguments); said, not
  // failed, when only the last bits differ.
  if (on.loss != off.loss) std::printf("note: graphs on and off differ in the last bits\n");
}

// A learning rate changed while the run trains reaches the GPU's update, replayed from a graph
// (captured at step 2) as well as eager: the losses follow the CPU's with the same change.
TEST_F(CudaBackendTest, ALearningRateChangedWhileItTrainsReachesTheReplayedGraphs) {
  Recipe run = fifty_steps("mlp", OptimizerKind::SGD, 0.0f);
  run.backend.cuda_graph = true;
  const Losses unchanged = train_on(run, "cuda:0", data);
  run.change_lr_after = 20;
  run.new_lr = 0.05;
  CudaGraphCounts graphs;
  const Losses gpu = train_on(run, "cuda:0", data, nullptr, &graphs),
               cpu = train_on(run, "cpu", data);
  EXPECT_GT(graphs.launches, 0) << "the steps after the change ran from graphs";
  expect_relative(gpu.loss, cpu.loss, 1e-3, "mlp with lr 0.05 from step 21, GPU vs CPU");
  ASSERT_EQ(gpu.loss.size(), unchanged.loss.size());
  EXPECT_EQ(std::vector<double>(gpu.loss.begin(), gpu.loss.begin() + 21),
            std::vector<double>(unchanged.loss.begin(), unchanged.loss.begin() + 21))
      << "the same up to the change";
  EXPECT_NE(gpu.loss.back(), unchanged.loss.back()) << "the change made a difference";
}

// A capture the driver really refuses: waiting for the stream is not allowed while it is being
// captured (cudaErrorStreamCaptureUnsupported). The phase runs eagerly from then on, writes what
// it should, and the stream goes on working.
TEST_F(CudaBackendTest, ARefusedCaptureRunsThePhaseEagerlyOnTheGpu) {
  namespace kc = kernels::cuda;
  const kc::Stream stream = kc::make_stream();
  kc::DeviceBuffer<int> value(1, "the phase's output");
  CudaGraphCache cache(true);
  int written = 0;
  const auto enqueue = [&] {
    GPULAB_CUDA_CHECK(cudaMemsetAsync(value.data(), written, sizeof(int), stream.get()));
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // refused while capturing
  };
  for (written = 1; written <= 4; ++written) {
    ASSERT_NO_THROW(cache.run(CudaGraphCache::Key{kForwardPhase, 1, 0, 1}, stream.get(), enqueue))
        << "run " << written;
    int host = -1;
    GPULAB_CUDA_CHECK(cudaMemcpy(&host, value.data(), sizeof host, cudaMemcpyDeviceToHost));
    EXPECT_EQ(host, written * 0x01010101) << "run " << written;  // memset fills every byte
  }
  const CudaGraphCounts counts = cache.counts();
  EXPECT_EQ(counts.captures, 0);
  EXPECT_EQ(counts.launches, 0);
  EXPECT_EQ(counts.refused.rfind("forward phase: ", 0), 0u) << counts.refused;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refusal was left behind";
}

// A replica whose shard is empty after full ones (a last batch smaller than the replicas, as an
// MPI rank with graphs gets) updates eagerly: before, it replayed the step before's update graph.
TEST_F(CudaBackendTest, AnEmptyShardsUpdateReplaysNoGraph) {
  const ModelPlan plan = plan_model(preset("mlp"));
  OptimizerConfig optimizer;
  optimizer.kind = OptimizerKind::SGD;
  optimizer.lr = 0.1f;
  GPULAB_CUDA_CHECK(cudaSetDevice(0));
  const auto uploaded = upload_data_sets(data, 784, 10);
  CudaReplicaOptions options;
  options.name = "cuda:0";
  options.max_batch = 8;
  CudaReplica replica(plan, optimizer, uploaded, options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 5);
  replica.set_parameters(params);
  const std::vector<int32_t> shard = {0, 1, 2, 3, 4, 5, 6, 7};
  StepTimes times;
  for (int64_t step = 1; step <= 3; ++step) {  // eager, captured, replayed
    replica.compute_gradients(shard, Shard{0, 8}, step, times);
    replica.apply_update(0.1f, step);
  }
  const CudaGraphCounts full = replica.graph_counts();
  EXPECT_EQ(full.captures, 4);
  EXPECT_EQ(full.launches, 8);
  std::vector<float> before(params.size()), after(params.size());
  replica.get_parameters(before);
  const BatchStats empty = replica.compute_gradients({}, Shard{8, 8}, 4, times);
  EXPECT_EQ(empty.count, 0);
  replica.apply_update(0.1f, 4);
  replica.synchronize();
  EXPECT_EQ(replica.graph_counts().launches, full.launches) << "the empty step replayed a graph";
  replica.get_parameters(after);
  EXPECT_EQ(after, before) << "plain SGD on zero gradients moves nothing";
}

TEST_F(CudaBackendTest, BatchesFromTheHostGiveTheSameLossesAsDataOnTheDevice) {
  // --data-on host gathers and normalizes each batch with data::gather_batch, which the GPU's
  // gather matches bit for bit, and copies it over: the network sees the same batches.
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.5f);
  run.train.shuffle = true;
  const Losses device = train_on(run, "cuda:0", data);
  run.backend.data_on = DataOn::Host;
  const Losses host = train_on(run, "cuda:0", data);
  ASSERT_EQ(host.loss.size(), 50u);
  expect_relative(host.loss, device.loss, 1e-6, "--data-on host vs device");
}

TEST_F(CudaBackendTest, ImagesAugmentedPerBatchOnTheHostTrainAsOnTheCpu) {
  // --preprocess per-batch: the host augments each batch (data::augment_batch, on the CPU and
  // for the GPU alike) and a GPU's batches come from the host whatever --data-on leaves open;
  // the images differ from the plain ones, so the losses do too.
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.0f);
  run.train.shuffle = true;
  const Losses plain = train_on(run, "cuda:0", data);
  run.backend.preprocess = Preprocess::PerBatch;
  const Losses cpu = train_on(run, "cpu", data), gpu = train_on(run, "cuda:0", data);
  ASSERT_EQ(gpu.loss.size(), 50u);
  expect_relative(gpu.loss, cpu.loss, 1e-3, "augmented per batch, GPU vs CPU");
  EXPECT_NE(gpu.loss, plain.loss);
  run.backend.data_on = DataOn::Host;
  EXPECT_EQ(train_on(run, "cuda:0", data).loss, gpu.loss) << "--data-on host changed nothing";
  run.backend.data_on = DataOn::Device;
  EXPECT_THROW(train_on(run, "cuda:0", data), ConfigError);
}

TEST_F(CudaBackendTest, ReducedPrecisionTrainsCloseToFp32) {
  // tf32 and bf16 round the GEMM inputs (10 and 7 mantissa bits): over 50 steps the losses stay
  // within 5% (tf32) and 10% (bf16) of fp32's, and training still lowers the loss.
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.0f);
  const Losses fp32 = train_on(run, "cuda:0", data);
  std::vector<std::vector<double>> losses;
  for (const auto& [precision, bound] :
       {std::pair{Precision::Tf32, 0.05}, std::pair{Precision::Bf16, 0.10}}) {
    run.backend.precision = precision;
    const Losses reduced = train_on(run, "cuda:0", data);
    expect_relative(reduced.loss, fp32.loss, bound, precision_name(precision));
    EXPECT_LT(reduced.loss.back(), reduced.loss.front()) << precision_name(precision);
    // The bounds alone also pass when the precision never reaches cuBLAS; rounded GEMM inputs
    // over 50 steps change at least some bits of the losses.
    EXPECT_NE(reduced.loss, fp32.loss) << precision_name(precision) << " ran as fp32";
    losses.push_back(reduced.loss);
  }
  // bf16 once reached cuBLAS as an allowance that cuBLAS met with TF32 kernels: the same losses.
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_NE(losses[1], losses[0]) << "bf16 ran as tf32";
}

TEST_F(CudaBackendTest, StepTimesCoverEveryPhase) {
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.25f);
  run.train.max_steps = 12;
  const Losses losses = train_on(run, "cuda:0", data);
  ASSERT_EQ(losses.times.size(), 12u);
  // Each phase is the time between two events recorded one after the other on one stream: never
  // negative, but a 144-byte copy or a small gather may read 0 at the events' resolution (about
  // half a microsecond), so only the phases that run a network's kernels must be positive. Row
  // N holds step N-1's phases (row 1 only its own copy, gather and forward), which ran between
  // the start of step N-1 and the end of step N as the host timed them: they cannot add up to
  // more than that (plus a margin for the two clocks).
  constexpr double kClockMarginMs = 0.5;
  for (size_t i = 0; i < losses.times.size(); ++i) {
    const StepTimes& t = losses.times[i];
    for (const double ms :
         {t.copy_ms, t.data_ms, t.forward_ms, t.backward_ms, t.allreduce_ms, t.optimizer_ms}) {
      EXPECT_TRUE(std::isfinite(ms)) << "row " << i + 1;
      EXPECT_GE(ms, 0) << "row " << i + 1;
    }
    EXPECT_GT(t.forward_ms, 0) << "row " << i + 1;
    const double started_s =
        (i > 0 ? losses.time_s[i - 1] - losses.step_ms[i - 1] / 1000 : 0) - kClockMarginMs / 1000;
    EXPECT_LE(t.total_ms(), (losses.time_s[i] - started_s) * 1000) << "row " << i + 1;
    if (i == 0) continue;
    EXPECT_GT(t.backward_ms, 0) << "row " << i + 1;
    EXPECT_GT(t.optimizer_ms, 0) << "row " << i + 1;
  }
}

TEST_F(CudaBackendTest, EvaluationAndParametersMatchTheCpu) {
  const ModelPlan plan = plan_model(preset("lenet5"));
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 3);
  BackendOptions options;
  options.batch = 64;
  options.device = "cuda:0";
  auto gpu = make_backend(plan, OptimizerConfig{}, data, options);
  options.device = "cpu";
  auto cpu = make_backend(plan, OptimizerConfig{}, data, options);
  gpu->set_parameters(params);
  cpu->set_parameters(params);
  std::vector<float> back(params.size());
  gpu->get_parameters(back);
  EXPECT_EQ(back, params);
  std::vector<int32_t> indices(test_set.count);
  for (int i = 0; i < test_set.count; ++i) indices[i] = i;
  const BatchStats g = gpu->evaluate(Split::Test, indices), c = cpu->evaluate(Split::Test, indices);
  EXPECT_EQ(g.count, c.count);
  EXPECT_NEAR(g.loss_sum, c.loss_sum, 1e-5 * std::abs(c.loss_sum));
  EXPECT_EQ(g.correct, c.correct);
  // Ordinary errors pass through unchanged and leave the backend working: no GPU failed.
  EXPECT_THROW(gpu->evaluate(Split::Validation, indices), ConfigError);
  const std::vector<int32_t> bad = {0, test_set.count};
  EXPECT_THROW(gpu->evaluate(Split::Test, bad), std::out_of_range);
  std::vector<float> short_params(params.size() - 1);
  EXPECT_THROW(gpu->get_parameters(short_params), std::invalid_argument);
  const BatchStats again = gpu->evaluate(Split::Test, indices);
  EXPECT_EQ(again.count, g.count);
  EXPECT_EQ(again.loss_sum, g.loss_sum);
  EXPECT_EQ(again.correct, g.correct);
  gpu->get_parameters(back);
  EXPECT_EQ(back, params);
}

TEST_F(CudaBackendTest, TwoRunsOnOneGpuDoNotDisturbEachOther) {
  // A race in the window runs two backends on one GPU in one process. One run's ordinary errors,
  // and its end (its backend waits for its own streams, not the device), leave the other's
  // losses what they are when it runs alone, bit for bit.
  const Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.0f);
  const ModelPlan plan = plan_model(run.model);
  BackendOptions options;
  options.device = "cuda:0";
  options.batch = run.train.batch;
  options.seed = run.train.seed;
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, run.train.seed);
  const auto make = [&] {
    auto backend = make_backend(plan, run.train.optimizer, data, options);
    backend->set_parameters(params);
    return backend;
  };
  const float lr = run.train.optimizer.lr;
  // Ten steps on `backend`; after the third, `at_step_3` runs.
  const auto ten_steps = [&](Backend& backend, const std::function<void()>& at_step_3) {
    std::vector<double> losses;
    std::vector<int32_t> batch(size_t(run.train.batch));
    for (int64_t step = 1; step <= 10; ++step) {
      for (int i = 0; i < run.train.batch; ++i)
        batch[size_t(i)] = int32_t(((step - 1) * run.train.batch + i) % train_set.count);
      StepTimes times;
      losses.push_back(backend.train_step(batch, lr, step, times).mean_loss());
      if (step == 3 && at_step_3) at_step_3();
    }
    backend.synchronize();
    return losses;
  };
  const std::vector<double> alone = ten_steps(*make(), nullptr);

  auto other = make();
  auto mine = make();
  const std::vector<double> beside = ten_steps(*mine, [&] {
    StepTimes times;
    const std::vector<int32_t> first = {0, 1, 2, 3};
    other->train_step(first, lr, 1, times);
    EXPECT_THROW(other->evaluate(Split::Validation, first), ConfigError);
    const std::vector<int32_t> bad = {train_set.count};
    EXPECT_THROW(other->train_step(bad, lr, 2, times), std::out_of_range);
    other.reset();  // while this run's last step may still be running
  });
  EXPECT_EQ(beside, alone);
}

TEST_F(CudaBackendTest, AStepTimingThatHasNotCompletedIsSkipped) {
  // A host function holds the stream until the test lets it go, so the marks after it have not
  // completed when the timings are read: they read 0 instead of failing with cudaErrorNotReady.
  namespace kc = kernels::cuda;
  kc::Stream stream = kc::make_stream();
  CudaStepTimer timer;
  std::atomic<bool> go{false};
  const auto hold = [](void* flag) {
    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::yield();
  };
  timer.begin_step();
  timer.record(CudaStepTimer::kStart, stream.get());
  timer.record(CudaStepTimer::kCopied, stream.get());
  const cudaError_t held = cudaLaunchHostFunc(stream.get(), hold, &go);
  timer.record(CudaStepTimer::kGathered, stream.get());
  timer.record(CudaStepTimer::kForward, stream.get());
  StepTimes early;
  EXPECT_NO_THROW(early = timer.read());
  go = true;
  ASSERT_EQ(held, cudaSuccess) << cudaGetErrorName(held);
  EXPECT_EQ(early.data_ms, 0);
  EXPECT_EQ(early.forward_ms, 0);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  const StepTimes done = timer.read();
  EXPECT_GT(done.data_ms, 0);  // it spans the host function
  EXPECT_GE(done.forward_ms, 0);
  // A step that failed before its update recorded no reduction or optimizer mark: the next
  // step skips those phases rather than reading events that were never recorded.
  timer.begin_step();
  for (const auto mark : {CudaStepTimer::kStart, CudaStepTimer::kCopied, CudaStepTimer::kGathered,
                          CudaStepTimer::kForward})
    timer.record(mark, stream.get());
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  StepTimes next;
  EXPECT_NO_THROW(next = timer.read());
  EXPECT_EQ(next.backward_ms, 0);
  EXPECT_EQ(next.allreduce_ms, 0);
  EXPECT_EQ(next.optimizer_ms, 0);
  // With batches from the host, the stream waits between the start and prepared marks while the
  // host makes the batch: that wait is data, and the copy is what follows it. The step is read
  // during the step after it.
  go = false;
  for (int step = 0; step < 2; ++step) {
    timer.begin_step();
    timer.record(CudaStepTimer::kStart, stream.get());
    if (step == 0) {
      ASSERT_EQ(cudaLaunchHostFunc(stream.get(), hold, &go), cudaSuccess);
    }
    for (const auto mark : {CudaStepTimer::kPrepared, CudaStepTimer::kCopied,
                            CudaStepTimer::kGathered, CudaStepTimer::kForward})
      timer.record(mark, stream.get());
    go = true;
  }
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  const StepTimes prepared = timer.read();
  EXPECT_GT(prepared.data_ms, 0);  // it spans the host function
  EXPECT_GE(prepared.copy_ms, 0);
}

TEST_F(CudaBackendTest, OutOfMemoryNamesTheAllocationAndTheNextRunWorks) {
  const ModelPlan plan = plan_model(preset("pytorch-example"));
  BackendOptions options;
  options.device = "cuda:0";
  options.batch = 4'000'000;  // ~86 KB of conv1 activations per image: far beyond any GPU
  try {
    make_backend(plan, OptimizerConfig{}, data, options);
    FAIL() << "a batch of 4 million images fitted";
  } catch (const kernels::cuda::CudaError& e) {
    const std::string text = e.what();
    EXPECT_EQ(e.kind(), kernels::cuda::ErrorKind::OutOfMemory) << text;
    EXPECT_NE(text.find("out of GPU memory allocating the"), std::string::npos) << text;
    EXPECT_NE(text.find(" free of "), std::string::npos) << text;
    EXPECT_NE(text.find("smaller --batch"), std::string::npos) << text;
  }
  Recipe run = fifty_steps("pytorch-example", OptimizerKind::Adam, 0.0f);
  run.train.max_steps = 5;
  const Losses after = train_on(run, "cuda:0", data);
  ASSERT_EQ(after.loss.size(), 5u);
  for (double loss : after.loss) EXPECT_TRUE(std::isfinite(loss));
}

// Records the losses of a run and, at step fault_step, makes the device fault.
struct FaultAtStep : RunObserver {
  int64_t fault_step = 0;
  cudaError_t injected = cudaSuccess;
  std::vector<double> losses;
  void on_step(const StepMetrics& m) override {
    losses.push_back(m.loss);
    if (m.step == fault_step) injected = test::trap_on_device();
  }
};

TEST_F(CudaBackendTest, AFaultAfterTheLastStepFailsTheRunAndTheNextProcessWorks) {
  // The fault is a kernel that executes __trap(), launched once the last step has returned, when
  // that step's backward and update may still be running: nothing but the wait at the end of
  // train() can see it then (there is no evaluation to notice it). A trap rather than an
  // out-of-range write: it faults every time and writes nothing, where a stray write may land in
  // another allocation and never fault. Both are sticky errors: the process's CUDA context is
  // unusable from then on, for every stream in it, so the trap may run on a stream of the
  // test's own and the backend's next call still fails. The backend frees its state and resets
  // the GPU (cudaDeviceReset); NVIDIA documents these errors as needing a new process, so the
  // message says whether the reset worked, and the next run is checked in a fresh process, as
  // a learner would start it after "GPU runs need a restart of gpulab".
  test::TempDir dir;
  RunRequest request;
  request.model = preset("pytorch-example");
  request.train.batch = 32;
  request.train.epochs = 0;
  request.train.max_steps = 6;
  request.train.seed = 5;
  request.train.eval_at_epoch_end = false;
  request.backend.device = "cuda:0";
  const data::MnistData mnist{train_set, test_set, dir.path()};
  RunControl control;

  FaultAtStep before;
  request.out_dir = dir.path() / "before";
  const RunSummary clean = execute_run(request, before, control, &mnist);
  ASSERT_EQ(clean.status, RunStatus::Finished) << clean.message;
  ASSERT_EQ(before.losses.size(), 6u);

  FaultAtStep faulted;
  faulted.fault_step = 6;
  request.out_dir = dir.path() / "faulted";
  const RunSummary failed = execute_run(request, faulted, control, &mnist);
  ASSERT_NE(faulted.injected, cudaSuccess) << "the trap did not fault";
  EXPECT_EQ(kernels::cuda::error_kind(faulted.injected), kernels::cuda::ErrorKind::DeviceFault)
      << cudaGetErrorName(faulted.injected);
  EXPECT_EQ(failed.status, RunStatus::Failed) << "a fault after the last step went unseen";
  EXPECT_NE(failed.message.find("cuda:0: the GPU failed; the run ends here: "), std::string::npos)
      << failed.message;
  EXPECT_NE(failed.message.find(cudaGetErrorName(faulted.injected)), std::string::npos)
      << failed.message;
  // Exactly one of the two outcomes of the reset, said after it was tried.
  const bool reset =
      failed.message.find("; cuda:0 was reset and takes work again") != std::string::npos;
  const bool restart = failed.message.find(
                           "; GPU runs need a restart of gpulab: cuda:0 still "
                           "fails after a reset") != std::string::npos;
  EXPECT_NE(reset, restart) << failed.message;
  std::ifstream in(dir.path() / "faulted" / "run.json");
  const auto info = nlohmann::json::parse(in);
  EXPECT_EQ(info["status"], "failed");
  std::printf("note: after a trap, %s\n",
              reset ? "the reset gave a working context" : "the context needs a new process");

  // The next process trains as the first run did.
  test::write_mnist(dir.path() / "data", train_set, test_set);
  const std::string command = std::string(GPULAB_CLI_PATH) +
                              " train --model pytorch-example --batch 32 --steps 6 --seed 5 "
                              "--quiet --device cuda:0 --data-dir " +
                              (dir.path() / "data").string() + " --out " +
                              (dir.path() / "next").string();
  const test::CliResult next = test::run_command(command);
  EXPECT_EQ(next.exit_code, 0) << command << "\n" << next.output;
  std::ifstream next_in(dir.path() / "next" / "run.json");
  ASSERT_TRUE(next_in) << next.output;
  EXPECT_EQ(nlohmann::json::parse(next_in)["status"], "finished") << next.output;

  // Where the reset said the GPU takes work again, a run in this process does too.
  if (reset) {
    FaultAtStep after;
    request.out_dir = dir.path() / "after";
    const RunSummary again = execute_run(request, after, control, &mnist);
    ASSERT_EQ(again.status, RunStatus::Finished) << again.message;
    EXPECT_EQ(after.losses, before.losses);
  }
}

TEST_F(CudaBackendTest, AWholeRunRecordsTheGpuAndItsTelemetry) {
  test::TempDir dir;
  RunRequest request;
  request.model = preset("pytorch-example");
  request.train.batch = 64;
  request.train.epochs = 2;
  request.backend.device = "cuda:0";
  request.backend.precision = Precision::Tf32;
  request.out_dir = dir.path() / "run";
  const data::MnistData mnist{train_set, test_set, dir.path()};
  RunObserver observer;
  RunControl control;
  const RunSummary summary = execute_run(request, observer, control, &mnist);
  ASSERT_EQ(summary.status, RunStatus::Finished) << summary.message;
  std::ifstream in(dir.path() / "run" / "run.json");
  const auto info = nlohmann::json::parse(in);
  EXPECT_EQ(info["config"]["precision"], "tf32");
  EXPECT_EQ(info["config"]["device"], "cuda:0");
  EXPECT_FALSE(info["devices"][0]["name"].get<std::string>().empty());
  EXPECT_FALSE(info["devices"][0]["compute_capability"].get<std::string>().empty());
  EXPECT_EQ(info["cuda_graphs"], "on");
  std::ifstream telemetry(dir.path() / "run" / "telemetry.csv");
  const std::string text((std::istreambuf_iterator<char>(telemetry)),
                         std::istreambuf_iterator<char>());
  // On a machine with a GPU, telemetry that NVML could not give is a failure, not a skip.
  EXPECT_FALSE(info.contains("telemetry_note")) << info["telemetry_note"];
  EXPECT_NE(text.find("cuda:0"), std::string::npos) << text.substr(0, 400);
}

}  // namespace
}  // namespace gpulab
