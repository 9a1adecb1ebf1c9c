// A backend's options: device names, precisions, sync modes and distributions.
#include "engine/backend/backend.hpp"

#include <unistd.h>

#include <algorithm>

#include "engine/base/errors.hpp"

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

DataOn parse_data_on(const std::string& name) {
  if (name == "auto") return DataOn::Auto;
  if (name == "device") return DataOn::Device;
  if (name == "host") return DataOn::Host;
  throw ConfigError("--data-on " + name + ": use host (batches copied every step) or device");
}

const char* data_on_name(DataOn data_on) {
  switch (data_on) {
    case DataOn::Auto:
      return "auto";
    case DataOn::Device:
      return "device";
    case DataOn::Host:
      return "host";
  }
  return "?";
}

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
  // (engine/parallel/gpu_ranks.hpp).
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

}  // namespace gpulab
