// Device discovery. GPUs are listed by the CUDA backend when it is built; this build reports why
// there are none, so every feature but GPU training keeps working.
#include "engine/devices.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>

#include "gpulab/build_config.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {

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
  info.simd = __builtin_cpu_supports("avx512f") ? "avx512f"
              : __builtin_cpu_supports("avx2")  ? "avx2"
              : __builtin_cpu_supports("sse4.2") ? "sse4.2"
                                                 : "baseline x86-64";
  info.blas = kernels::cpu::blas_info();
  // The kernel set decides the convolution speed, so it is named even where the config string
  // holds it already.
  const std::string kernel_set = kernels::cpu::blas_kernels();
  if (!kernel_set.empty()) info.blas += "; kernels " + kernel_set;
  return info;
}

DeviceList list_devices() {
  DeviceList list;
  list.cpu = cpu_info();
  // NVML is loaded at run time, never linked, so a machine without a driver still starts.
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) {
    list.no_gpu_reason = "no NVIDIA driver found (libnvidia-ml.so.1 is not installed)";
  } else {
    dlclose(nvml);
    list.no_gpu_reason = GPULAB_CUDA_ENABLED
                             ? "the CUDA backend is not available in this version yet"
                             : "this build has no CUDA backend (nvcc was not found at configure time)";
  }
  return list;
}

}  // namespace gpulab
