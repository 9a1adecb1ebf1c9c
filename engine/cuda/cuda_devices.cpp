// GPUs as the CUDA runtime sees them. cudaGetDeviceCount's error tells no driver, a driver too
// old, or no device apart; NVML adds the driver's own version.
#include <cuda_runtime_api.h>

#include "engine/devices/devices.hpp"
#include "engine/devices/gpu_path.hpp"
#include "engine/telemetry/nvml.hpp"

namespace gpulab::detail {

void list_cuda_gpus(DeviceList& list) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const std::string runtime_version = cuda_version_text(runtime);
  const std::shared_ptr<Nvml> nvml = Nvml::load();
  std::string driver_version = nvml ? nvml->driver_version() : "";
  if (driver_version.empty() && list.driver_cuda > 0)
    driver_version = "supporting CUDA " + cuda_version_text(list.driver_cuda);

  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();  // not an error of anything that runs later
    list.no_gpu_reason = no_gpu_reason(
        error, std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error),
        list.driver_found, nvml ? nvml->driver_version() : "", runtime_version, list.driver_cuda);
    return;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    GpuInfo gpu;
    gpu.index = i;
    gpu.name = prop.name;
    gpu.memory_bytes = double(prop.totalGlobalMem);
    gpu.compute_major = prop.major;
    gpu.compute_minor = prop.minor;
    gpu.sm_count = prop.multiProcessorCount;
    gpu.memory_bus_bits = prop.memoryBusWidth;
    // CUDA 13 dropped the clocks from cudaDeviceProp; the attributes still give them, in kHz.
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, i) == cudaSuccess)
      gpu.clock_mhz = khz / 1000.0;
    else
      cudaGetLastError();
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess)
      gpu.memory_clock_mhz = khz / 1000.0;
    else
      cudaGetLastError();
    gpu.driver_version = driver_version;
    gpu.runtime_version = runtime_version;
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, i) == cudaSuccess)
      gpu.pci_bus_id = bus_id;
    else
      cudaGetLastError();
    list.gpus.push_back(gpu);
  }
  if (list.gpus.empty()) list.no_gpu_reason = "no CUDA device could be queried";
}

}  // namespace gpulab::detail
