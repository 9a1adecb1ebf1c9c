// Choosing a backend from the options: device names, precisions, and the factory.
#include "engine/backend.hpp"

#include <unistd.h>

#include <algorithm>

#include "engine/cpu_backend.hpp"
#include "engine/devices.hpp"
#include "engine/errors.hpp"
#include "engine/gpu_ranks.hpp"
#include "engine/gradient_reducer.hpp"
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

namespace {

// "12" -> 12; -1 unless 1 to 4 digits.
int parse_small_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(digits);
}

}  // namespace

CudaDevices parse_cuda_devices(const std::string& device) {
  const auto bad = [&](const std::string& why) {
    return ConfigError("--device " + device + ": " + why +
                       "; use cpu, cuda:N, cuda:0,1, cuda:all, cuda:0x4 or cuda:0x2,1x2");
  };
  // Without MPI "cuda:auto" is GPU 0; under --dist mpi each rank takes a GPU of its host
  // (engine/gpu_ranks.hpp).
  if (device == "cuda" || device == "cuda:auto") return {false, {0}};
  const std::string prefix = "cuda:";
  if (device.rfind(prefix, 0) != 0) throw bad("unknown device");
  const std::string list = device.substr(prefix.size());
  if (list == "all") return {true, {}};
  CudaDevices devices;
  std::vector<int> seen;
  size_t begin = 0;
  for (;;) {
    const size_t comma = list.find(',', begin);
    const std::string entry =
        list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const size_t x = entry.find('x');
    const int gpu = parse_small_number(entry.substr(0, x));
    const int count = x == std::string::npos ? 1 : parse_small_number(entry.substr(x + 1));
    if (gpu < 0 || count < 1)
      throw bad(entry.empty()
                    ? std::string("an empty GPU entry")
                    : "\"" + entry + "\" is not a GPU (N, or NxK for K replicas on GPU N)");
    if (std::find(seen.begin(), seen.end(), gpu) != seen.end())
      throw bad("GPU " + std::to_string(gpu) + " is named twice (cuda:" + std::to_string(gpu) +
                "x2 puts two replicas on it)");
    if (count > 16) throw bad("at most 16 replicas on one GPU");
    seen.push_back(gpu);
    devices.replicas.insert(devices.replicas.end(), size_t(count), gpu);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return devices;
}

int cuda_device_index(const std::string& device) {
  if (device == "cpu") return -1;
  const CudaDevices devices = parse_cuda_devices(device);
  return devices.all ? 0 : devices.replicas.front();
}

int max_cpu_threads() {
  return kThreadsPerCore * std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
}

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
  if (gpu >= 0 && options.sync == SyncMode::ParameterServer)
    throw ConfigError(
        "--sync parameter-server: runs on the CPU for now; on GPUs use --sync "
        "allreduce");
  if (!(options.bucket_mb > 0)) throw ConfigError("--bucket-mb must be a positive number");
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
