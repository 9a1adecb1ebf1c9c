// What hardware this machine offers: the CPU, and the GPUs or why there are none.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

struct CpuInfo {
  std::string model;       // "AMD EPYC 9454P"
  int logical_cores = 0;
  std::string simd;        // best of avx512f, avx2, sse4.2
  std::string blas;        // the BLAS library and its build configuration
};

struct GpuInfo {
  int index = 0;
  std::string name;
  double memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  std::string driver_version, runtime_version;
};

struct DeviceList {
  CpuInfo cpu;
  std::vector<GpuInfo> gpus;
  std::string no_gpu_reason;  // set when gpus is empty: "no NVIDIA driver found", ...
};

CpuInfo cpu_info();
DeviceList list_devices();

}  // namespace gpulab
