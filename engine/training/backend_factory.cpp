// Checking backend options against this machine and building the backend they ask for.
#include "engine/training/backend_factory.hpp"

#include <cmath>
#include <string>

#include "engine/base/errors.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/devices/gpu_path.hpp"
#include "engine/parallel/gpu_ranks.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"
#include "gpulab/build_config.hpp"

#if GPULAB_CUDA_ENABLED
#include "engine/cuda/cuda_backend.hpp"
#endif

namespace gpulab {

void validate(const BackendOptions& options) {
  const int gpu = cuda_device_index(options.device);
  const int most_threads = max_cpu_threads();
  const std::string per_core = " per core of this machine's " +
                               std::to_string(most_threads / kThreadsPerCore) + " cores (at most " +
                               std::to_string(most_threads) + ")";
  if (options.threads < 0) throw ConfigError("--threads must not be negative (0: every core)");
  if (options.threads > most_threads)
    throw ConfigError("--threads " + std::to_string(options.threads) + ": more than " +
                      std::to_string(kThreadsPerCore) + per_core + "; 0 uses every core");
  if (gpu < 0 && options.precision != Precision::Fp32)
    throw ConfigError(std::string("--precision ") + precision_name(options.precision) +
                      ": the CPU computes in fp32 only (its matrix products are fp32 sgemm; "
                      "gpulab has no tf32 or bf16 CPU kernels, AVX-512 BF16 or not); use "
                      "--precision fp32, or a GPU (--device cuda:0)");
  if (gpu < 0 && options.conv != ConvAlgorithm::Im2col)
    throw ConfigError(std::string("--conv ") + conv_name(options.conv) +
                      ": chooses how a GPU computes its convolutions; the CPU has its own kernels "
                      "(im2col and Winograd, chosen per layer), so use it with --device cuda:0, or "
                      "leave it out on the CPU");
  if (gpu < 0 && options.data_on == DataOn::Device)
    throw ConfigError(
        "--data-on device: the CPU trains from host memory, its only path, so there is no device "
        "memory to keep the data in; --data-on chooses how a GPU is fed (use it with --device "
        "cuda:0, or leave it out on the CPU)");
  if (options.preprocess == Preprocess::PerBatch && options.data_on == DataOn::Device)
    throw ConfigError(
        "--preprocess per-batch: each batch is augmented on the host and copied to the GPU, so "
        "it cannot be made from data kept on the device; leave --data-on out or use --data-on "
        "host, or use --preprocess once (the images augmented once, before training)");
  if (gpu >= 0 && !GPULAB_CUDA_ENABLED)
    throw ConfigError("--device " + options.device + ": no GPU: " + no_cuda_backend_reason() +
                      "; use --device cpu");
  if (options.replicas < 1) throw ConfigError("--replicas must be at least 1");
  if (options.replicas > options.batch)
    throw ConfigError("--replicas " + std::to_string(options.replicas) +
                      ": more replicas than images in a batch (--batch " +
                      std::to_string(options.batch) + ")");
  if (gpu < 0 && options.replicas > most_threads)
    throw ConfigError("--replicas " + std::to_string(options.replicas) +
                      ": each CPU replica is a thread; more than " +
                      std::to_string(kThreadsPerCore) + per_core);
  if (gpu >= 0 && options.replicas > 1)
    throw ConfigError(
        "--replicas " + std::to_string(options.replicas) +
        ": GPU replicas are named in --device: cuda:0x" + std::to_string(options.replicas) +
        " puts " + std::to_string(options.replicas) + " on one GPU, cuda:0,1 one on each of two");
  if (gpu >= 0 && options.dist == Distribution::Mpi)
    if (const std::string why = mpi_device_problem(options.device); !why.empty())
      throw ConfigError(why);
  // Before MPI's own checks: whether or not mpirun started it, this pair cannot run.
  if (options.dist == Distribution::Mpi && options.sync == SyncMode::ParameterServer)
    throw ConfigError(
        "--sync parameter-server: runs within one process (its replicas meet in this process's "
        "memory); with --dist mpi use --sync allreduce");
  if (!(options.bucket_mb > 0)) throw ConfigError("--bucket-mb must be a positive number");
  if (!std::isfinite(options.bucket_mb))
    throw ConfigError("--bucket-mb " + seconds_text(options.bucket_mb) +
                      ": not a finite size; give the bucket size in MiB (25 by default)");
  if (!(options.collective_timeout_s > 0))
    throw ConfigError("--collective-timeout must be a positive number of seconds");
  if (!(options.collective_timeout_s <= kMaxCollectiveTimeoutS))
    throw ConfigError(
        "--collective-timeout " + seconds_text(options.collective_timeout_s) + ": at most " +
        std::to_string(static_cast<long long>(kMaxCollectiveTimeoutS)) + " s (30 days)");
  if (options.dist == Distribution::Mpi) {
    if (const std::string why = mpi_unavailable_reason(); !why.empty()) throw ConfigError(why);
    if (options.replicas > 1)
      throw ConfigError("--replicas " + std::to_string(options.replicas) +
                        ": with --dist mpi each process is one replica; start more processes "
                        "(mpirun -np N) instead");
  }
}

std::unique_ptr<Backend> make_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                      const DataSets& data, const BackendOptions& options) {
  validate(options);
  if (options.device == "cpu") return std::make_unique<CpuBackend>(plan, optimizer, data, options);
#if GPULAB_CUDA_ENABLED
  return make_cuda_backend(plan, optimizer, data, options);
#else
  throw ConfigError("--device " + options.device + ": no GPU: this build has no CUDA backend");
#endif
}

}  // namespace gpulab
