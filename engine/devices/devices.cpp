// Device discovery: the CPU, and the GPUs or why there are none. GPUs are listed through the
// CUDA runtime (engine/cuda/cuda_devices.cpp) when the CUDA backend is built.
#include "engine/devices/devices.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/devices/gpu_path.hpp"
#include "gpulab/build_config.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {

#if GPULAB_CUDA_ENABLED
namespace detail {
void list_cuda_gpus(DeviceList& list);  // engine/cuda/cuda_devices.cpp
}
#endif

CpuInfo cpu_info() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      info.model = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (info.model.empty()) info.model = "unknown CPU";
  info.logical_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  __builtin_cpu_init();
  info.simd = __builtin_cpu_supports("avx512f")  ? "avx512f"
              : __builtin_cpu_supports("avx2")   ? "avx2"
              : __builtin_cpu_supports("sse4.2") ? "sse4.2"
                                                 : "baseline x86-64";
  info.blas = kernels::cpu::blas_info();
  // The kernel set decides the convolution speed, so it is named even where the config string
  // holds it already.
  const std::string kernel_set = kernels::cpu::blas_kernels();
  if (!kernel_set.empty()) info.blas += "; kernels " + kernel_set;
  return info;
}

std::string no_gpu_reason(int cuda_error, const std::string& cuda_error_text, bool driver_found,
                          const std::string& driver_version, const std::string& runtime_version,
                          int driver_cuda) {
  const std::string driver = driver_version.empty() ? "" : " " + driver_version;
  constexpr int kInsufficientDriver = 35, kNoDevice = 100, kDriverMismatch = 803;
  if (!driver_found) return "no NVIDIA driver found (libcuda.so.1 is not installed)";
  if (cuda_error == 0 || cuda_error == kNoDevice)
    return "the NVIDIA driver" + driver + " is installed but sees no CUDA device";
  if (cuda_error == kInsufficientDriver) {
    const size_t dot = runtime_version.find('.');
    const int runtime = dot == std::string::npos
                            ? 0
                            : std::atoi(runtime_version.c_str()) * 1000 +
                                  std::atoi(runtime_version.c_str() + dot + 1) * 10;
    return driver_too_old_reason(driver_version, driver_cuda, runtime);
  }
  if (cuda_error == kDriverMismatch)
    return "the NVIDIA kernel module and driver library versions differ; reboot or reinstall "
           "the driver";
  return "CUDA could not start: " + cuda_error_text;
}

namespace {

// The driver is looked for at run time, never linked, so a machine without one still starts; its
// CUDA version needs no cuInit and no toolkit (a build without CUDA asks it too).
void probe_driver(DeviceList& list) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  list.driver_found = driver != nullptr;
  if (!driver) return;
  using GetVersion = int (*)(int*);  // CUresult cuDriverGetVersion(int*)
  if (auto get = reinterpret_cast<GetVersion>(dlsym(driver, "cuDriverGetVersion"))) {
    int version = 0;
    if (get(&version) == 0) list.driver_cuda = version;
  }
  dlclose(driver);
}

}  // namespace

DeviceList list_devices() {
  DeviceList list;
  list.cpu = cpu_info();
  probe_driver(list);
#if GPULAB_CUDA_ENABLED
  detail::list_cuda_gpus(list);
#else
  std::vector<std::string> lines =
      no_cuda_build_lines(gpu_path_facts(list.driver_found, list.driver_cuda));
  list.no_gpu_reason = lines.front();
  list.no_gpu_help.assign(lines.begin() + 1, lines.end());
#endif
  return list;
}

std::vector<GpuInfo> require_gpus(const std::string& device) {
  const int first = cuda_device_index(device);
  if (first < 0) throw ConfigError("--device " + device + " is not a GPU");
  const CudaDevices wanted = parse_cuda_devices(device);
  const DeviceList list = list_devices();
  if (list.gpus.empty())
    throw ConfigError("--device " + device + ": no GPU: " + list.no_gpu_reason);
  if (wanted.all) return list.gpus;
  std::vector<GpuInfo> gpus;
  for (const int index : wanted.replicas) {
    const auto found = std::find_if(list.gpus.begin(), list.gpus.end(),
                                    [&](const GpuInfo& gpu) { return gpu.index == index; });
    if (found == list.gpus.end()) {
      std::string names;
      for (const GpuInfo& gpu : list.gpus)
        names += (names.empty() ? "cuda:" : ", cuda:") + std::to_string(gpu.index);
      const bool single = wanted.replicas.size() == 1;
      throw ConfigError("--device " + device + ": no such GPU" +
                        (single ? std::string() : " cuda:" + std::to_string(index)) +
                        "; this machine has " + names);
    }
    gpus.push_back(*found);
  }
  return gpus;
}

GpuInfo require_gpu(const std::string& device) { return require_gpus(device).front(); }

nlohmann::json gpu_info_json(const GpuInfo& g) {
  return {{"name", g.name},
          {"memory_bytes", g.memory_bytes},
          {"compute_capability",
           std::to_string(g.compute_major) + "." + std::to_string(g.compute_minor)},
          {"driver", g.driver_version},
          {"cuda_runtime", g.runtime_version},
          {"pci_bus_id", g.pci_bus_id}};
}

}  // namespace gpulab
