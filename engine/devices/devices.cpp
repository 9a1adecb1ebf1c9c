// Device discovery: the CPU, and the GPUs or why there are none. GPUs are listed through the
// CUDA runtime (engine/cuda/cuda_devices.cpp) when the CUDA backend is built.
#include "engine/devices/devices.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

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

namespace {

std::string file_text(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of a "key<tabs>: value" line of /proc/cpuinfo, or "" when `line` is not that key's.
std::string cpuinfo_value(const std::string& line, const std::string& key) {
  if (line.rfind(key, 0) != 0) return "";
  const size_t colon = line.find(':');
  if (colon == std::string::npos || line.find_first_not_of(" \t", key.size()) != colon) return "";
  const size_t value = line.find_first_not_of(' ', colon + 1);
  return value == std::string::npos ? "" : line.substr(value);
}

std::string ghz_text(double mhz) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GHz", mhz / 1000);
  return text;
}

}  // namespace

CpuClock cpu_clock_from(const std::string& cpufreq_max_khz, const std::string& proc_cpuinfo) {
  const double khz = std::atof(cpufreq_max_khz.c_str());
  if (khz > 0) return {khz / 1000, true};
  std::istringstream lines(proc_cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    const std::string mhz = cpuinfo_value(line, "cpu MHz");
    if (!mhz.empty() && std::atof(mhz.c_str()) > 0) return {std::atof(mhz.c_str()), false};
  }
  return {};
}

int physical_cores_from(const std::string& proc_cpuinfo) {
  std::set<std::pair<std::string, std::string>> cores;
  std::string package, core;
  std::istringstream lines(proc_cpuinfo + "\n");
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) {  // the end of one logical CPU's block
      if (!core.empty()) cores.emplace(package, core);
      package.clear();
      core.clear();
    }
    if (const std::string value = cpuinfo_value(line, "physical id"); !value.empty())
      package = value;
    if (const std::string value = cpuinfo_value(line, "core id"); !value.empty()) core = value;
  }
  return int(cores.size());
}

double memory_bandwidth_bytes_per_second(const GpuInfo& gpu) {
  if (gpu.memory_clock_mhz <= 0 || gpu.memory_bus_bits <= 0) return 0;
  return 2 * gpu.memory_clock_mhz * 1e6 * (gpu.memory_bus_bits / 8.0);
}

int fp32_lanes_per_sm(int major, int minor) {
  // Volta, Turing and the A100 have 64; every later consumer and data-centre chip 128.
  if (major == 7 || (major == 8 && minor == 0)) return 64;
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major >= 8 && major <= 12) return 128;
  return 0;
}

std::string cpu_hardware_text(const CpuInfo& cpu) {
  std::string text = std::to_string(cpu.logical_cores) + " logical cores";
  if (cpu.physical_cores > 0) text += " (" + std::to_string(cpu.physical_cores) + " physical)";
  if (cpu.clock_mhz <= 0) return text + ", clock unknown";
  return text + (cpu.clock_is_peak ? ", up to " + ghz_text(cpu.clock_mhz)
                                   : ", at " + ghz_text(cpu.clock_mhz) + " now");
}

std::string gpu_hardware_text(const GpuInfo& gpu) {
  std::string text;
  if (gpu.sm_count > 0) {
    text = std::to_string(gpu.sm_count) + " SMs";
    if (const int lanes = fp32_lanes_per_sm(gpu.compute_major, gpu.compute_minor); lanes > 0)
      text += " x " + std::to_string(lanes) +
              " FP32 lanes = " + std::to_string(gpu.sm_count * lanes) + " lanes";
  } else {
    text = "SM count unknown";
  }
  text += gpu.clock_mhz > 0 ? " at up to " + ghz_text(gpu.clock_mhz) : ", clock unknown";
  char memory[64];
  std::snprintf(memory, sizeof memory, "; %.1f GiB", gpu.memory_bytes / double(1 << 30));
  text += memory;
  const double bandwidth = memory_bandwidth_bytes_per_second(gpu);
  if (bandwidth <= 0) return text + ", bandwidth unknown";
  char rate[96];
  std::snprintf(rate, sizeof rate, " at %.0f GB/s (%d-bit bus at ", bandwidth / 1e9,
                gpu.memory_bus_bits);
  return text + rate + ghz_text(gpu.memory_clock_mhz) + ")";
}

CpuInfo cpu_info() {
  CpuInfo info;
  const std::string proc_cpuinfo = file_text("/proc/cpuinfo");
  std::istringstream in(proc_cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      info.model = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (info.model.empty()) info.model = "unknown CPU";
  info.logical_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  info.physical_cores = physical_cores_from(proc_cpuinfo);
  const CpuClock clock = cpu_clock_from(
      file_text("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"), proc_cpuinfo);
  info.clock_mhz = clock.mhz;
  info.clock_is_peak = clock.peak;
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
