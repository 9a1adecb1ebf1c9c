// gpulab-cli: list devices, train, evaluate, without Qt Widgets or a display.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <thread>

#include "app/blas_select.hpp"
#include "app/cli_bench.hpp"
#include "app/cli_bounds.hpp"
#include "app/cli_data.hpp"
#include "app/cli_export.hpp"
#include "app/cli_inside.hpp"
#include "app/cli_lab.hpp"
#include "app/cli_progress.hpp"
#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/gpu_path.hpp"
#include "engine/inside/model_weights.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/session.hpp"
#include "engine/telemetry/energy.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/experiment.hpp"
#include "gpulab/build_config.hpp"

#if GPULAB_CUDA_ENABLED
#include "engine/cuda/cuda_reducer.hpp"
#endif

namespace {

using namespace gpulab;

RunControl* g_control = nullptr;
extern "C" void on_interrupt(int signal) {
  if (g_control) {
    g_control->cancelled_by.store(signal == SIGTERM ? "SIGTERM" : "SIGINT (Ctrl-C)");
    g_control->cancel.store(true);
  }
  interrupt_collectives();  // an MPI rank waiting for a dead peer stops waiting
}

// How long a cancelled run may take to stop by itself (its step ends, its record is written)
// before a signal ends the program anyway, the record ended as cancelled.
constexpr auto kCancelGrace = std::chrono::seconds(3);

// While it lives, a SIGINT or SIGTERM always ends the program: a run that has not stopped
// kCancelGrace after the cancel (a step that runs for minutes, a backend still allocating) has
// its record ended as cancelled, and the program exits with 130.
class CancelWatchdog {
 public:
  explicit CancelWatchdog(RunControl& control)
      : thread_([this, &control] {
          while (!control.cancel.load() && !done_.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          const auto deadline = std::chrono::steady_clock::now() + kCancelGrace;
          while (!done_.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          if (done_.load()) return;
          const char* by = control.cancelled_by.load();
          const std::string message =
              std::string("cancelled") + (by ? std::string(" by ") + by : std::string()) +
              " during a step that had not ended " + std::to_string(kCancelGrace.count()) +
              " s later; the steps before it are recorded";
          control.record_cancel_now(message);
          std::fprintf(stderr, "\ngpulab-cli: run %s\n", message.c_str());
          std::fflush(stdout);
          std::_Exit(130);
        }) {}
  ~CancelWatchdog() {
    done_.store(true);
    thread_.join();
  }
  CancelWatchdog(const CancelWatchdog&) = delete;
  CancelWatchdog& operator=(const CancelWatchdog&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Whether `mpirun -np N gpulab-cli train --dist mpi --device cuda` can run here, and how the
// ranks' gradients would meet.
std::string gpu_ranks_status(const DeviceList& devices) {
  if (!GPULAB_CUDA_ENABLED) return "no (this build has no CUDA backend)";
  if (!mpi_built()) return "no (this build has no MPI: install libopenmpi-dev and reconfigure)";
  if (devices.gpus.empty()) return "no (no GPU: " + devices.no_gpu_reason + ")";
  std::string nccl_problem;
#if GPULAB_CUDA_ENABLED
  nccl_problem = nccl_unavailable_reason();
#endif
  const std::string usage = "; mpirun -np N gpulab-cli train --dist mpi --device cuda";
  if (!nccl_problem.empty())
    return "yes, through host memory over MPI only (no NCCL: " + nccl_problem + ")" + usage;
  return "yes: NCCL between ranks on distinct GPUs, host memory over MPI for ranks that share "
         "one" +
         usage;
}

int print_devices() {
  const DeviceList devices = list_devices();
  const CpuInfo& cpu = devices.cpu;
  std::printf("cpu: %s, %d logical cores, %s, %s\n", cpu.model.c_str(), cpu.logical_cores,
              cpu.simd.c_str(), cpu.blas.c_str());
  std::printf("  hardware: %s\n", cpu_hardware_text(cpu).c_str());
  const GpuPathFacts facts = gpu_path_facts(devices.driver_found, devices.driver_cuda);
  std::printf("%s\n", cuda_versions_line(facts).c_str());
  if (devices.gpus.empty()) std::printf("no GPU: %s\n", devices.no_gpu_reason.c_str());
  for (const std::string& line : devices.no_gpu_help) std::printf("  %s\n", line.c_str());
  for (const auto& gpu : devices.gpus) {
    std::printf("cuda:%d: %s, %.1f GiB, compute %d.%d, driver %s, runtime %s\n", gpu.index,
                gpu.name.c_str(), gpu.memory_bytes / (1 << 30), gpu.compute_major,
                gpu.compute_minor, gpu.driver_version.c_str(), gpu.runtime_version.c_str());
    std::printf("  hardware: %s\n", gpu_hardware_text(gpu).c_str());
  }
  std::printf("data parallelism:\n");
  std::printf(
      "  cpu replicas: yes (--replicas R, up to the batch size; %d cores, threads / R "
      "each)\n",
      cpu.logical_cores);
  std::string nccl_problem = "not built: needs CUDA and NCCL";
#if GPULAB_CUDA_ENABLED
  nccl_problem = nccl_unavailable_reason();
#endif
  if (!GPULAB_CUDA_ENABLED)
    std::printf("  gpu replicas: no (this build has no CUDA backend)\n");
  else if (devices.gpus.empty())
    std::printf("  gpu replicas: no (no GPU)\n");
  else
    std::printf("  gpu replicas: yes (--device cuda:0x2 on one GPU, cuda:0,1 one per GPU)\n");
  std::printf("  nccl: %s\n", nccl_problem.empty() ? "yes" : ("no (" + nccl_problem + ")").c_str());
  if (mpi_built())
    std::printf("  mpi: built; %s\n", launched_by_mpi()
                                          ? "this process was started by mpirun"
                                          : "run mpirun -np N gpulab-cli train --dist mpi ...");
  else
    std::printf("  mpi: no (this build has no MPI: install libopenmpi-dev and reconfigure)\n");
  std::printf("  gpu ranks under mpi: %s\n", gpu_ranks_status(devices).c_str());
  return 0;
}

struct TrainFlags {
  std::string model = "lenet5", device = "cpu", optimizer = "adam", schedule = "constant";
  std::string shuffle = "on", data_dir, out, init_weights, save, name;
  std::string precision = "fp32", cuda_graph = "on", data_on = "auto", preprocess = "none";
  std::string conv = "im2col";
  double telemetry_hz = 10;
  int threads = 0, epochs = 1, batch = 64, validation = 0;
  int replicas = 1;
  std::string sync = "allreduce", dist = "none";
  double bucket_mb = 25, collective_timeout_s = 60;
  int64_t steps = 0, eval_every = 0;
  float lr = 1e-3f, momentum = 0.9f, weight_decay = 0.0f, gamma = 0.7f;
  float dropout = -1.0f;
  double target_accuracy = 0, stop_at_accuracy = 0;
  uint64_t seed = 1;
  bool quiet = false;
  bool force = false;  // --force: --save may replace a file that is not a checkpoint
  std::vector<std::string> lr_change;  // --lr-change STEP:LR, as typed
  std::vector<PlannedLr>
      setup_lr_changes;                 // --model's "train" "lr_changes", when no flag gives them
  std::vector<std::string> from_setup;  // the flags whose values came from --model's "train"
};

// A model file saved by the window carries its training settings in "train": they are the
// defaults, and the flags given on the command line win.
void apply_file_defaults(TrainFlags& f, const CLI::App& train) {
  // Without the error code a link loop threw a raw filesystem error; load_model names it.
  std::error_code error;
  if (is_preset(f.model) || !std::filesystem::is_regular_file(f.model, error)) return;
  nlohmann::json j;
  try {
    std::ifstream in(f.model);
    j = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return;  // load_model reports what is wrong with the file
  }
  if (!j.is_object() || !j.contains("train")) return;
  TrainOptions t;
  BackendOptions b;
  try {
    check_train_keys(j["train"]);
    train_config_from_json(j["train"], t, b);
  } catch (const ConfigError& e) {
    throw ConfigError("--model " + f.model + ": \"train\": " + e.what());
  }
  auto unset = [&](const char* flag) {
    if (train.count(flag) > 0) return false;
    f.from_setup.push_back(flag);
    return true;
  };
  if (unset("--epochs") && unset("--steps")) {
    f.epochs = t.epochs;
    f.steps = t.max_steps;
  }
  if (unset("--batch")) f.batch = t.batch;
  if (unset("--optimizer")) f.optimizer = optimizer_name(t.optimizer.kind);
  if (unset("--lr")) f.lr = t.optimizer.lr;
  if (unset("--momentum")) f.momentum = t.optimizer.momentum;
  if (unset("--weight-decay")) f.weight_decay = t.optimizer.weight_decay;
  if (unset("--schedule")) f.schedule = schedule_name(t.schedule.kind);
  if (unset("--gamma")) f.gamma = t.schedule.gamma;
  if (unset("--seed")) f.seed = t.seed;
  if (unset("--shuffle")) f.shuffle = t.shuffle ? "on" : "off";
  if (unset("--eval-every")) f.eval_every = t.eval_every;
  if (unset("--target-accuracy")) f.target_accuracy = t.target_accuracy;
  if (unset("--stop-at-accuracy")) f.stop_at_accuracy = t.stop_at_accuracy;
  if (unset("--device")) f.device = b.device;
  if (unset("--threads")) f.threads = b.threads;
  if (unset("--precision")) f.precision = precision_name(b.precision);
  if (unset("--cuda-graph")) f.cuda_graph = b.cuda_graph ? "on" : "off";
  if (unset("--conv")) f.conv = conv_name(b.conv);
  if (unset("--data-on")) f.data_on = data_on_name(b.data_on);
  if (unset("--preprocess")) f.preprocess = preprocess_name(b.preprocess);
  if (unset("--replicas")) f.replicas = b.replicas;
  if (unset("--sync")) f.sync = sync_name(b.sync);
  if (unset("--bucket-mb")) f.bucket_mb = b.bucket_mb;
  if (unset("--collective-timeout")) f.collective_timeout_s = b.collective_timeout_s;
  if (unset("--dist")) f.dist = dist_name(b.dist);
  if (!t.lr_changes.empty() && unset("--lr-change")) f.setup_lr_changes = t.lr_changes;
}

RunRequest make_request(const TrainFlags& f) {
  RunRequest r;
  r.name = f.name;
  r.model = load_model(f.model);
  if (f.dropout >= 0) override_dropout(r.model, f.dropout);
  r.train.epochs = f.epochs;
  r.train.max_steps = f.steps;
  r.train.batch = f.batch;
  r.train.optimizer.kind = parse_optimizer(f.optimizer);
  r.train.optimizer.lr = f.lr;
  r.train.optimizer.momentum = f.momentum;
  r.train.optimizer.weight_decay = f.weight_decay;
  r.train.schedule.kind = parse_schedule(f.schedule);
  r.train.schedule.gamma = f.gamma;
  r.train.seed = f.seed;
  r.train.shuffle = f.shuffle == "on";
  r.train.eval_every = f.eval_every;
  r.train.lr_changes = f.setup_lr_changes;  // empty when --lr-change is given
  for (const std::string& text : f.lr_change) r.train.lr_changes.push_back(parse_planned_lr(text));
  // 99 and 0.99 both mean 99 %.
  auto fraction = [](double accuracy) { return accuracy > 1.0 ? accuracy / 100.0 : accuracy; };
  r.train.target_accuracy = fraction(f.target_accuracy);
  r.train.stop_at_accuracy = fraction(f.stop_at_accuracy);
  // A run that stops at an accuracy reports its time to it.
  if (r.train.target_accuracy == 0) r.train.target_accuracy = r.train.stop_at_accuracy;
  r.backend.device = f.device;
  r.backend.threads = f.threads;
  r.backend.precision = parse_precision(f.precision);
  r.backend.cuda_graph = f.cuda_graph == "on";
  r.backend.conv = parse_conv(f.conv);
  r.backend.data_on = parse_data_on(f.data_on);
  r.backend.preprocess = parse_preprocess(f.preprocess);
  r.backend.batch = f.batch;
  r.backend.replicas = f.replicas;
  r.backend.sync = parse_sync(f.sync);
  r.backend.bucket_mb = f.bucket_mb;
  r.backend.collective_timeout_s = f.collective_timeout_s;
  r.backend.dist = parse_dist(f.dist);
  r.telemetry_hz = f.telemetry_hz;
  if (!f.data_dir.empty()) r.data_dir = f.data_dir;
  r.out_dir = f.out;
  if (!f.init_weights.empty()) r.init_weights = f.init_weights;
  if (!f.save.empty()) r.save_weights = f.save;
  r.validation = f.validation;
  r.force_outputs = f.force;
  try {
    validate(r.train);
    validate(r.backend);
  } catch (const ConfigError& e) {
    // A value the setup file gave is named as the file's, since no flag was typed.
    const std::string message = e.what();
    for (const std::string& flag : f.from_setup)
      if (message.starts_with(flag + " ") || message.starts_with(flag + ":"))
        throw ConfigError("--model " + f.model + ": \"train\": " + message);
    throw;
  }
  return r;
}

int run_train(const TrainFlags& flags) {
  RunRequest request = make_request(flags);
  // Outputs are refused before the data is read and before any rank meets another.
  std::vector<std::filesystem::path> inputs;
  if (!is_preset(flags.model)) inputs.push_back(flags.model);
  check_outputs(request, inputs);
  // A missing GPU and data problems are reported before a run folder is made for them.
  if (cuda_device_index(request.backend.device) >= 0) require_gpu(request.backend.device);
  const auto data_dir = data::default_data_dir(request.data_dir);
  const data::MnistData mnist = data::load_mnist(data_dir);
  // Settings that cannot run are refused before a run folder is made for them, too.
  validate(request.train, training_images_left(mnist.train.count, request.validation));
  // Every rank of an MPI job runs this same program; rank 0 records and prints.
  std::optional<MpiEnvironment> mpi;
  int rank = 0;
  if (request.backend.dist == Distribution::Mpi) {
    mpi.emplace();
    rank = mpi_world(request.backend.collective_timeout_s)->rank();
  }
  RunControl control;
  g_control = &control;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  cli::ProgressPrinter progress(stdout, flags.quiet || rank != 0);
  RunSummary summary;
  // An MPI job's ranks end through their collectives (interrupt_collectives) and mpirun.
  std::optional<CancelWatchdog> watchdog;
  if (!mpi) watchdog.emplace(control);
  try {
    summary = execute_run(request, progress, control, &mnist);
  } catch (const std::exception& e) {
    // Rank 0 could not make its record (the folder was taken after every rank checked it): the
    // other ranks wait for it in their first collective, so end them all with the reason.
    if (mpi) mpi_abort("gpulab-cli: " + std::string(e.what()));
    throw;
  }
  watchdog.reset();
  g_control = nullptr;
  progress.finish_line();
  // A signal that broke off a collective on a rank other than 0 cancelled that rank: the
  // collective is not why the job ends (rank 0's own record says where such a break came from).
  if (mpi && rank != 0 && summary.status == RunStatus::Failed && control.cancelled_by.load()) {
    summary.status = RunStatus::Cancelled;
    summary.message = control.cancel_message(summary.steps);
  }
  if (summary.status == RunStatus::Failed) {
    if (mpi && rank != 0) {
      // Rank 0 records why the job ends, then ends it: tell it (and the others) and wait.
      mpi_world(request.backend.collective_timeout_s)->tell_failure(summary.message);
      // Rank 0 may be a whole step (or an evaluation) away from its next collective.
      mpi_wait_for_abort(
          "gpulab-cli: rank " + std::to_string(rank) + ": run failed: " + summary.message,
          2 * request.backend.collective_timeout_s);
    }
    // Rank 0's record is written; the other ranks may be waiting for it: end them all.
    if (mpi) mpi_abort("gpulab-cli: run failed: " + summary.message);
    std::fprintf(stderr, "gpulab-cli: run failed: %s\n", summary.message.c_str());
    return 1;
  }
  if (mpi && summary.status == RunStatus::Cancelled) {
    // The other ranks wait in a collective for this one: a rank other than 0 tells them it was
    // cancelled (rank 0 records the run as cancelled and ends the job); rank 0, its record
    // written, ends the job itself.
    const std::string message = "run cancelled: " + summary.message;
    if (rank != 0) {
      mpi_world(request.backend.collective_timeout_s)->tell_cancel(summary.message);
      mpi_wait_for_abort("gpulab-cli: " + message, 2 * request.backend.collective_timeout_s, 130);
    }
    mpi_abort("gpulab-cli: " + message, 130);
  }
  if (rank != 0) return 0;
  std::printf("%s after %lld steps in %.1f s (%s)", run_status_name(summary.status),
              static_cast<long long>(summary.steps), summary.train_seconds,
              cli::pace_text(progress.run_dir(), summary).c_str());
  if (std::isfinite(summary.test_accuracy))
    std::printf("; test loss %.4f, accuracy %.2f%%", summary.test_loss, 100 * summary.test_accuracy);
  std::printf("\n");
  if (!progress.run_dir().empty()) try {
      const nlohmann::json info = load_run_info(progress.run_dir());
      if (info.contains("energy")) std::printf("energy: %s\n", energy_text(info["energy"]).c_str());
      // Training is mostly matrix products: measured on the CPU, said after every CPU run.
      const std::string matmul = matmul_share_text(matmul_share(load_run(progress.run_dir())));
      if (!matmul.empty()) std::printf("compute: %s\n", matmul.c_str());
    } catch (const std::exception&) {
      // The record was read back only for this line; its own problems are reported where read.
    }
  if (request.train.target_accuracy > 0) {
    if (summary.time_to_target_s)
      std::printf("reached %.2f%% test accuracy after %.2f s of training (step %lld)\n",
                  100 * request.train.target_accuracy, *summary.time_to_target_s,
                  static_cast<long long>(*summary.step_to_target));
    else
      std::printf("did not reach %.2f%% test accuracy\n", 100 * request.train.target_accuracy);
  }
  // A finished run says something only when it stopped early (--stop-at-accuracy).
  if (summary.status == RunStatus::Finished && !summary.message.empty())
    std::printf("%s\n", summary.message.c_str());
  if (request.save_weights) std::printf("weights saved to %s\n", request.save_weights->c_str());
  if (summary.diverged)
    std::fprintf(stderr, "gpulab-cli: warning: %s\n", summary.divergence.c_str());
  return summary.status == RunStatus::Cancelled ? 130 : 0;
}

int run_eval(const std::string& weights, const std::string& model_flag, const std::string& data_dir,
             int batch, int threads, const cli::InsideEvalFlags& inside) {
  const std::filesystem::path data_folder = data::default_data_dir(
      data_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(data_dir));
  // All four MNIST files, as docs/cli.md promises, not only the two it reads.
  std::vector<std::filesystem::path> inputs{weights};
  for (const data::MnistFile& file : data::mnist_files())
    for (const char* suffix : {"", ".gz"})
      inputs.push_back(data_folder / (file.name + std::string(suffix)));
  cli::check_inside_outputs(inside, inputs);
  const ModelWeights model = load_model_weights(weights, model_flag);
  const data::MnistData mnist = data::load_mnist(data_folder);
  const DataSets sets{nullptr, nullptr, &mnist.test};
  OptimizerConfig no_update;
  BackendOptions options;
  options.batch = batch;
  options.threads = threads;
  validate(options);
  CpuBackend backend(model.plan, no_update, sets, options);
  backend.set_parameters(model.params);
  std::vector<int32_t> indices(mnist.test.count);
  std::iota(indices.begin(), indices.end(), 0);
  const BatchStats stats = backend.evaluate(Split::Test, indices);
  std::printf("model %s, %d test images: loss %.4f, accuracy %.2f%%\n", model.config.name.c_str(),
              stats.count, stats.mean_loss(), 100 * stats.accuracy());
  if (inside.any()) cli::write_inside_outputs(inside, model, mnist.test, batch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gpulab::select_blas_kernels(argc, argv);
  CLI::App app{"gpulab-cli: train and measure CNNs on MNIST on the CPU and GPUs"};
  app.set_version_flag("--version", std::string("gpulab ") + GPULAB_VERSION);
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string(e.what()) + "\n";
  });

  app.add_subcommand("devices", "list the CPU and the GPUs");

  TrainFlags f;
  CLI::App* train = app.add_subcommand("train", "train a model and record the run");
  train
      ->add_option(
          "--model", f.model,
          "preset (mlp, lenet5, pytorch-example, tf-tutorial, vgg-small, fast-mnist) or FILE.json")
      ->capture_default_str();
  train->add_option("--device", f.device, "cpu, cuda:N, cuda:0,1 or cuda:all (one replica per GPU), cuda:0x4 (replicas on one GPU); with --dist mpi, cuda or cuda:auto (each rank a GPU of its host)")->capture_default_str();
  train
      ->add_option("--precision", f.precision,
                   "fp32|tf32|bf16: GEMM math on the GPU (bf16 and tf32 accumulate in fp32)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
  train
      ->add_option("--cuda-graph", f.cuda_graph,
                   "on|off: replay the GPU training step as CUDA graphs")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  train
      ->add_option("--conv", f.conv,
                   "im2col|implicit: GPU convolutions as im2col + cuBLAS GEMM, or as implicit GEMM "
                   "(no unfolded input; bias and ReLU fused)")
      ->check(CLI::IsMember({"im2col", "implicit"}))
      ->capture_default_str();
  train
      ->add_option("--data-on", f.data_on,
                   "host|device: a GPU's batches gathered on the host and copied every step, or "
                   "kept on the GPU (auto: device on a GPU; the CPU has only host memory)")
      ->check(CLI::IsMember({"auto", "host", "device"}))
      ->capture_default_str();
  train
      ->add_option("--preprocess", f.preprocess,
                   "none|once|per-batch: the training images rotated and shifted at random once "
                   "before training, or every batch afresh on one host thread (its time is data "
                   "ms; a GPU's batches then come from the host)")
      ->check(CLI::IsMember({"none", "once", "per-batch"}))
      ->capture_default_str();
  train->add_option("--telemetry-hz", f.telemetry_hz, "device samples per second")
      ->check(cli::between(0.1, 1000.0))
      ->capture_default_str();
  train
      ->add_option(
          "--threads", f.threads,
          "CPU threads (0: all cores); with --replicas R each replica gets threads / R, at least 1")
      ->check(cli::not_negative());
  train
      ->add_option("--replicas", f.replicas,
                   "data parallel replicas on the CPU, each on its own threads; the batch is split "
                   "among them")
      ->capture_default_str();
  train
      ->add_option("--sync", f.sync,
                   "allreduce|parameter-server: how the replicas agree on the update")
      ->capture_default_str();
  train->add_option("--bucket-mb", f.bucket_mb, "gradients are reduced in buckets of this many MiB")
      ->capture_default_str();
  train
      ->add_option("--collective-timeout", f.collective_timeout_s,
                   "seconds a reduction waits for a replica or rank before the run fails")
      ->capture_default_str();
  train
      ->add_option("--dist", f.dist,
                   "none|mpi: one process per CPU replica or per GPU, under mpirun -np N (with "
                   "--device cuda each rank takes a GPU of its host)")
      ->capture_default_str();
  train->add_option("--epochs", f.epochs, "epochs")
      ->check(cli::setting("epochs", 1))
      ->capture_default_str();
  train->add_option("--steps", f.steps, "stop after N optimizer steps")
      ->check(cli::setting("max_steps", 1));
  train->add_option("--batch", f.batch, "batch size")
      ->check(cli::setting("batch"))
      ->capture_default_str();
  train->add_option("--optimizer", f.optimizer, "sgd|momentum|adam|adamw")
      ->check(CLI::IsMember({"sgd", "momentum", "adam", "adamw"}))->capture_default_str();
  train->add_option("--lr", f.lr, "learning rate")->check(cli::positive())->capture_default_str();
  train
      ->add_option(
          "--lr-change", f.lr_change,
          "from step STEP on, learning rate LR (STEP:LR; repeat it, or 300:0.01,600:0.001)")
      ->delimiter(',');
  train->add_option("--momentum", f.momentum, "momentum (momentum optimizer)")
      ->check(cli::between(0.0, 0.9999));
  train->add_option("--weight-decay", f.weight_decay, "weight decay")
      ->check(cli::setting("weight_decay"));
  train->add_option("--schedule", f.schedule, "constant|step|onecycle")
      ->check(CLI::IsMember({"constant", "step", "onecycle"}))->capture_default_str();
  train->add_option("--gamma", f.gamma, "step schedule: lr factor per epoch")
      ->check(cli::setting("gamma"));
  train->add_option("--seed", f.seed, "seed for initialization, shuffling and dropout")
      ->check(cli::setting("seed"))
      ->capture_default_str();
  train->add_option("--shuffle", f.shuffle, "on|off")->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  train->add_option("--dropout", f.dropout, "override every dropout layer's p (0 disables)")
      ->check(cli::between(0.0, 0.999));
  train->add_option("--init-weights", f.init_weights, "start from FILE.safetensors")->check(CLI::ExistingFile);
  train->add_option("--save", f.save, "save the final weights to FILE.safetensors");
  train->add_option("--data-dir", f.data_dir, "folder with the MNIST files");
  train->add_option("--out", f.out, "run folder (default: a new folder under the runs folder)");
  train->add_option("--name", f.name, "name of the run in comparisons")->check(cli::name_text());
  train
      ->add_option("--target-accuracy", f.target_accuracy,
                   "report time to this test accuracy (0.99 or 99)")
      ->check(cli::between(0.0, 100.0));
  train
      ->add_option(
          "--stop-at-accuracy", f.stop_at_accuracy,
          "end the run at the first test evaluation at or above this accuracy (0.99 or 99)")
      ->check(cli::between(0.0, 100.0));
  train->add_option("--eval-every", f.eval_every, "also evaluate on the test set every N steps")
      ->check(cli::setting("eval_every"));
  train->add_option("--validation", f.validation, "hold out N training images as a validation set")
      ->check(cli::setting("validation"));
  train->add_flag("--quiet", f.quiet, "print only the result");
  train->add_flag("--force", f.force,
                  "let --save replace a file that is no checkpoint of gpulab's, and --out be a "
                  "folder holding other files");

  std::string weights, eval_model, eval_data;
  int eval_batch = 1000, eval_threads = 0;
  CLI::App* eval = app.add_subcommand("eval", "test loss and accuracy of saved weights");
  eval->add_option("--weights", weights, "FILE.safetensors")->required()->check(CLI::ExistingFile);
  eval->add_option("--model", eval_model, "preset or FILE.json (default: the config in the file)");
  eval->add_option("--data-dir", eval_data, "folder with the MNIST files");
  eval->add_option("--batch", eval_batch, "evaluation batch size")->check(cli::between(1, 65536));
  eval->add_option("--threads", eval_threads, "CPU threads (0: all cores)")
      ->check(cli::not_negative());
  cli::InsideEvalFlags eval_inside;
  cli::add_inside_eval_options(*eval, eval_inside);

  cli::PredictFlags predict;
  CLI::App* predict_command = cli::add_predict_command(app, predict);

  cli::ExportFlags x;
  CLI::App* exporter = app.add_subcommand("export", "charts of recorded runs as PNG, PDF, SVG or CSV");
  exporter->add_option("--runs", x.runs, "run folders, or folders of runs")->required()->expected(1, -1);
  exporter->add_option("--chart", x.chart, "loss|accuracy|step-time|throughput|gpu|speedup")
      ->required()
      ->check(CLI::IsMember({"loss", "accuracy", "step-time", "throughput", "gpu", "speedup"}));
  exporter->add_option("--format", x.format, "png|pdf|svg|csv (default: from --out)")
      ->check(CLI::IsMember({"png", "pdf", "svg", "csv"}));
  exporter->add_option("--out", x.out, "the file to write")->required();
  exporter->add_option("--x", x.x, "x axis: step|time|epoch")->check(CLI::IsMember({"step", "time", "epoch"}))
      ->capture_default_str();
  exporter->add_option("--smoothing", x.smoothing, "trailing mean over N points (1: raw)")
      ->check(cli::between(1, 100000))
      ->capture_default_str();
  exporter->add_option("--baseline", x.baseline, "the run the speedup is relative to: its name or position (default: the first)");
  exporter->add_option("--target-accuracy", x.target_accuracy, "for time to target (98 or 0.98)")
      ->check(cli::between(0.0, 100.0))
      ->capture_default_str();
  exporter->add_option("--width", x.width, "image width in pixels")
      ->check(cli::between(200, 10000))
      ->capture_default_str();
  exporter->add_option("--height", x.height, "image height in pixels")
      ->check(cli::between(150, 10000))
      ->capture_default_str();
  exporter->add_flag("--force", x.force, "let --out replace a file that is no chart of gpulab's");

  cli::BenchFlags bench;
  CLI::App* bench_allreduce = cli::add_bench_command(app, bench);
  cli::MatmulFlags matmul;
  CLI::App* bench_matmul = cli::add_bench_matmul_command(app, matmul);
  cli::InferenceFlags inference;
  CLI::App* bench_inference = cli::add_bench_inference_command(app, inference);

  cli::LabFlags lab;
  const cli::LabCommands lab_commands = cli::add_lab_command(app, lab);

  cli::DataFlags data_flags;
  CLI::App* data_fetch = cli::add_data_command(app, data_flags);

  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "devices" && first != "train" &&
      first != "eval" && first != "predict" && first != "export" && first != "bench" &&
      first != "lab" && first != "data") {
    std::fprintf(stderr,
                 "gpulab-cli: unknown command \"%s\"; the commands are devices, train, eval, "
                 "predict, export, bench, lab, data (see --help)\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "gpulab-cli: %s\n", e.what());
    return 2;
  }
  try {
    if (app.got_subcommand("train")) apply_file_defaults(f, *train);
    // A step budget without an epoch count runs as many epochs as the budget needs.
    if (train->count("--steps") > 0 && train->count("--epochs") == 0) f.epochs = 0;
    if (app.got_subcommand("devices")) return print_devices();
    if (app.got_subcommand("train")) return run_train(f);
    if (app.got_subcommand("eval"))
      return run_eval(weights, eval_model, eval_data, eval_batch, eval_threads, eval_inside);
    if (predict_command->parsed()) return cli::run_predict(predict);
    if (app.got_subcommand("export")) return cli::run_export(x, argc, argv);
    if (bench_allreduce->parsed()) return cli::run_bench_allreduce(bench);
    if (bench_matmul->parsed()) return cli::run_bench_matmul(matmul);
    if (bench_inference->parsed()) return cli::run_bench_inference(inference);
    if (data_fetch->parsed()) return cli::run_data_fetch(data_flags, argc, argv);
    if (lab_commands.list->parsed()) return cli::run_lab_list();
    if (lab_commands.check->parsed()) return cli::run_lab_check(lab);
    if (lab_commands.hand_in->parsed()) return cli::run_lab_hand_in(lab, argc, argv);
    if (lab_commands.grade->parsed()) {
      // A signal stops grading after the hand-in under way, and its work folder goes with it.
      RunControl control;
      g_control = &control;
      std::signal(SIGINT, on_interrupt);
      std::signal(SIGTERM, on_interrupt);
      const int status = cli::run_lab_grade(lab, control, argc, argv);
      g_control = nullptr;
      return status;
    }
    if (lab_commands.verify->parsed()) {
      RunControl control;
      g_control = &control;
      std::signal(SIGINT, on_interrupt);
      std::signal(SIGTERM, on_interrupt);
      const int status = cli::run_lab_verify(lab, control);
      g_control = nullptr;
      return status;
    }
    if (lab_commands.run->parsed()) {
      RunControl control;
      g_control = &control;
      std::signal(SIGINT, on_interrupt);
      std::signal(SIGTERM, on_interrupt);
      const CancelWatchdog watchdog(control);
      const int status = cli::run_lab(lab, control, argc, argv);
      g_control = nullptr;
      return status;
    }
  } catch (const OutputRefused& e) {
    // An output refused before anything was written: a usage error, as a bad flag is.
    std::fprintf(stderr, "gpulab-cli: %s\n", terminal_text(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    // Messages quote names from files (a lab's title, a run's): never the terminal's commands.
    std::fprintf(stderr, "gpulab-cli: %s\n", terminal_text(e.what()).c_str());
    return 1;
  }
  return 0;
}
