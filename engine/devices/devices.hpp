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
  int physical_cores = 0;  // distinct (package, core) pairs in /proc/cpuinfo; 0 unknown
  // MHz; 0 unknown. cpufreq's cpuinfo_max_freq (the peak a core reaches) where the kernel has
  // it, else /proc/cpuinfo's "cpu MHz" (the clock of the moment; virtual machines often give only
  // this): clock_is_peak says which.
  double clock_mhz = 0;
  bool clock_is_peak = false;
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
  // What the hardware is, from cudaGetDeviceProperties and cudaDeviceGetAttribute; 0 unknown.
  int sm_count = 0;             // streaming multiprocessors
  double clock_mhz = 0;         // the SMs' peak clock
  double memory_clock_mhz = 0;  // the memory's peak clock
  int memory_bus_bits = 0;      // the memory bus width
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

// The CPU's clock from cpufreq's cpuinfo_max_freq text (kHz, "" where the file is missing) and
// /proc/cpuinfo's text: the peak where cpufreq gives it, else the first "cpu MHz" (the clock of the
// moment), else 0 (unknown).
struct CpuClock {
  double mhz = 0;
  bool peak = false;
};
CpuClock cpu_clock_from(const std::string& cpufreq_max_khz, const std::string& proc_cpuinfo);
// Physical cores in /proc/cpuinfo's text: distinct ("physical id", "core id") pairs; 0 where it
// names none (some virtual machines and ARM kernels).
int physical_cores_from(const std::string& proc_cpuinfo);

// The GPU memory's peak bandwidth in bytes per second: two transfers per memory clock (double data
// rate, which GDDR and HBM both report their clock for) over a bus of memory_bus_bits; 0 where
// either is unknown.
double memory_bandwidth_bytes_per_second(const GpuInfo& gpu);
// FP32 lanes ("CUDA cores") per SM for a compute capability, as NVIDIA's programming guide lists
// them; 0 for one this table does not know.
int fp32_lanes_per_sm(int compute_major, int compute_minor);

// What the hardware is, in words for gpulab-cli devices and the Setup panel:
//   "8 logical cores (4 physical), up to 3.70 GHz" (or "at 2.10 GHz now", or "clock unknown")
//   "132 SMs x 128 FP32 lanes = 16896 lanes at up to 1.98 GHz; 80.0 GiB at 3.35 TB/s (5120-bit
//    bus at 2.62 GHz)", with "unknown" for what the device did not tell.
std::string cpu_hardware_text(const CpuInfo& cpu);
std::string gpu_hardware_text(const GpuInfo& gpu);

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
