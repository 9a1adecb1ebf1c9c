// engine/devices: the machine's CPU and GPUs (or why there are none) and the matrix-multiply
// benchmark. The CUDA room implements the GPU halves it declares (detail::list_cuda_gpus,
// matmul_cuda), compiled only in CUDA builds. Over engine/backend.
//
// What hardware this machine offers: the CPU, and the GPUs or why there are none.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/input_file.hpp"  // available_memory_bytes

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
  std::string pci_bus_id;  // "0000:65:00.0": how NVML finds the same device
};

struct DeviceList {
  CpuInfo cpu;
  std::vector<GpuInfo> gpus;
  std::string no_gpu_reason;  // set when gpus is empty: "no NVIDIA driver found", ...
  // Where a driver is here but this build has no CUDA: what to install, and that the rest works
  // (engine/devices/gpu_path.hpp).
  std::vector<std::string> no_gpu_help;
  bool driver_found = false;  // libcuda.so.1 loads
  int driver_cuda = 0;        // the CUDA version the driver supports (12020); 0 unknown
};

CpuInfo cpu_info();
DeviceList list_devices();

// Why there is no usable GPU, in words for the learner, from what cudaGetDeviceCount returned
// (its cudaError_t and text; 0 when it succeeded but counted no device), whether the driver
// library (libcuda.so.1) loads, NVML's driver version ("" when unknown) and the runtime's
// version ("13.0"); a driver too old says both versions, the driver's CUDA (12020) where known.
std::string no_gpu_reason(int cuda_error, const std::string& cuda_error_text, bool driver_found,
                          const std::string& driver_version, const std::string& runtime_version,
                          int driver_cuda = 0);

// The GPU that a device name ("cuda:1") means; throws ConfigError "--device cuda:1: no GPU:
// <reason>", or naming the GPUs there are, when it cannot be used.
GpuInfo require_gpu(const std::string& device);
// A GPU as run.json's "devices" and a hand-in's machine.json describe it: name, memory, compute
// capability, driver, CUDA runtime, PCI bus id.
nlohmann::json gpu_info_json(const GpuInfo& gpu);
// Every GPU a device name asks for, one entry per replica ("cuda:0x2,1" gives cuda:0, cuda:0,
// cuda:1; "cuda:all" every GPU once); throws ConfigError in one line naming --device and the GPU
// that is missing, before anything is loaded.
std::vector<GpuInfo> require_gpus(const std::string& device);

}  // namespace gpulab
