// NVIDIA's management library (NVML), loaded at run time with dlopen("libnvidia-ml.so.1") so that
// no binary links against it, and GPU telemetry read through it. Its few functions are declared
// by hand in nvml.cpp. Without a driver, load() says why and everything else keeps working.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/telemetry/telemetry.hpp"

namespace gpulab {

class Nvml {
 public:
  using Device = void*;  // an nvmlDevice_t

  // The library loaded and initialized, or nullptr with *why saying what failed. It needs
  // nvmlInit_v2, nvmlShutdown, nvmlDeviceGetHandleByIndex_v2 and nvmlDeviceGetMemoryInfo; the
  // other functions are used where the library has them.
  static std::shared_ptr<Nvml> load(std::string* why = nullptr,
                                    const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();  // nvmlShutdown, dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string driver_version() const;  // "580.65.06", or "" when NVML does not say
  // The GPU with this PCI bus id ("0000:65:00.0", as cudaDeviceGetPCIBusId writes it), else the
  // one at this NVML index; nullptr when neither is found.
  Device device(const std::string& pci_bus_id, int index) const;
  // Utilization, memory, power, temperature and SM clock into sample; what NVML cannot read, or
  // has no function for, stays kNoValue (an empty field in telemetry.csv), never zero.
  void read(Device device, DeviceSample& sample) const;
  // The joules the GPU has used since the driver loaded (nvmlDeviceGetTotalEnergyConsumption,
  // Volta and newer); nullopt where the GPU or the library has no such counter.
  std::optional<double> total_energy_j(Device device) const;

  struct Api;  // the function pointers

 private:
  Nvml() = default;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
};

// One sample per watched GPU, labelled as the backend names it ("cuda:0").
class GpuTelemetry final : public TelemetrySource {
 public:
  struct Watched {
    std::string label;  // "cuda:0"
    Nvml::Device device;
  };
  GpuTelemetry(std::shared_ptr<Nvml> nvml, std::vector<Watched> devices);
  void sample(std::vector<DeviceSample>& out) override;
  const std::vector<Watched>& watched() const { return devices_; }

 private:
  std::shared_ptr<Nvml> nvml_;
  std::vector<Watched> devices_;
};

// The GPU telemetry of a run on `gpus` (require_gpus's list: one entry per replica, so a GPU may
// come more than once): every GPU the run uses once, labelled "cuda:N", found by its PCI bus id,
// else its index. GPUs NVML does not know are left out and named in *problem; nullptr when it
// knows none of them.
std::unique_ptr<GpuTelemetry> gpu_telemetry(std::shared_ptr<Nvml> nvml,
                                            const std::vector<GpuInfo>& gpus,
                                            std::string* problem);

}  // namespace gpulab
