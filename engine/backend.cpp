// Choosing a backend from the options: device names, precisions, and the factory.
#include "engine/backend.hpp"

#include "engine/cpu_backend.hpp"
#include "engine/devices.hpp"
#include "engine/errors.hpp"
#include "engine/process_group.hpp"
#include "gpulab/build_config.hpp"

#if GPULAB_CUDA_ENABLED
#include "engine/cuda_backend.hpp"
#endif

namespace gpulab {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "tf32") return Precision::Tf32;
  if (name == "bf16") return Precision::Bf16;
  throw ConfigError("unknown precision \"" + name + "\"; use fp32, tf32 or bf16");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::Fp32:
      return "fp32";
    case Precision::Tf32:
      return "tf32";
    case Precision::Bf16:
      return "bf16";
  }
  return "?";
}

SyncMode parse_sync(const std::string& name) {
  if (name == "allreduce") return SyncMode::AllReduce;
  if (name == "parameter-server") return SyncMode::ParameterServer;
  throw ConfigError("--sync " + name + ": unknown; use allreduce or parameter-server");
}

const char* sync_name(SyncMode sync) {
  return sync == SyncMode::ParameterServer ? "parameter-server" : "allreduce";
}

Distribution parse_dist(const std::string& name) {
  if (name == "none") return Distribution::None;
  if (name == "mpi") return Distribution::Mpi;
  throw ConfigError("--dist " + name + ": unknown; use mpi (under mpirun)");
}

const char* dist_name(Distribution dist) { return dist == Distribution::Mpi ? "mpi" : "none"; }

int cuda_device_index(const std::string& device) {
  if (device == "cpu") return -1;
  if (device == "cuda") return 0;
  const std::string prefix = "cuda:";
  const std::string digits = device.rfind(prefix, 0) == 0 ? device.substr(prefix.size()) : "";
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw ConfigError("--device " + device + ": unknown device; use cpu or cuda:N");
  return std::stoi(digits);
}

void validate(const BackendOptions& options) {
  const int gpu = cuda_device_index(options.device);
  if (gpu < 0 && options.precision != Precision::Fp32)
    throw ConfigError(std::string("--precision ") + precision_name(options.precision) +
                      ": the CPU computes in fp32 only; use --precision fp32, or a GPU "
                      "(--device cuda:0)");
  if (gpu >= 0 && !GPULAB_CUDA_ENABLED)
    throw ConfigError("--device " + options.device +
                      ": no GPU: this build has no CUDA backend (nvcc was not found when it was "
                      "configured); use --device cpu");
  if (options.replicas < 1) throw ConfigError("--replicas must be at least 1");
  if (options.replicas > options.batch)
    throw ConfigError("--replicas " + std::to_string(options.replicas) +
                      ": more replicas than images in a batch (--batch " +
                      std::to_string(options.batch) + ")");
  if (gpu >= 0 && (options.replicas > 1 || options.dist != Distribution::None))
    throw ConfigError("--replicas: data parallelism runs on the CPU for now; use --device cpu");
  if (!(options.bucket_mb > 0)) throw ConfigError("--bucket-mb must be a positive number");
  if (!(options.collective_timeout_s > 0))
    throw ConfigError("--collective-timeout must be a positive number of seconds");
  if (options.dist == Distribution::Mpi) {
    if (const std::string why = mpi_unavailable_reason(); !why.empty()) throw ConfigError(why);
    if (options.replicas > 1)
      throw ConfigError("--replicas " + std::to_string(options.replicas) +
                        ": with --dist mpi each process is one replica; start more processes "
                        "(mpirun -np N) instead");
    if (options.sync == SyncMode::ParameterServer)
      throw ConfigError(
          "--sync parameter-server: runs within one process; with --dist mpi use "
          "--sync allreduce");
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
