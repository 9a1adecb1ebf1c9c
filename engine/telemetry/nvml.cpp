// The NVML functions gpulab uses, declared by hand (the ABI of nvml.h's v2 entry points and
// plain structs, stable across drivers), looked up with dlsym. Only starting, stopping, finding a
// device by index and its memory are required; every other function may be missing (a stripped
// or partial library, a virtual GPU), and what it would have read is then recorded as missing.
#include "engine/telemetry/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>

#include <string>
#include <type_traits>

namespace gpulab {
namespace {

using nvmlReturn_t = int;  // NVML_SUCCESS is 0
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu, memory;  // percent of the last sample period
};
struct nvmlMemory_t {
  unsigned long long total, free, used;  // bytes
};
constexpr int kNvmlTemperatureGpu = 0;  // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr int kNvmlClockSm = 1;         // nvmlClockType_t NVML_CLOCK_SM

}  // namespace

// Null where the library lacks the function; init, shutdown, handle_by_index and memory never are.
struct Nvml::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*driver_version)(char*, unsigned int);
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*power_mw)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*clock_mhz)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*total_energy_mj)(nvmlDevice_t, unsigned long long*);
};

std::shared_ptr<Nvml> Nvml::load(std::string* why, const std::string& library) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return std::shared_ptr<Nvml>();
  };
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return fail("no NVIDIA driver found (" + library + " is not installed)");
  std::shared_ptr<Nvml> nvml(new Nvml());
  nvml->library_ = handle;  // closed by the destructor from here on
  nvml->api_ = std::make_unique<Api>();
  Api& api = *nvml->api_;
  std::string missing;
  auto bind = [&](auto& slot, const char* name, bool required) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
    if (!slot && required) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  bind(api.init, "nvmlInit_v2", true);
  bind(api.shutdown, "nvmlShutdown", true);
  bind(api.handle_by_index, "nvmlDeviceGetHandleByIndex_v2", true);
  bind(api.memory, "nvmlDeviceGetMemoryInfo", true);
  bind(api.error_string, "nvmlErrorString", false);
  bind(api.driver_version, "nvmlSystemGetDriverVersion", false);
  bind(api.handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", false);
  bind(api.utilization, "nvmlDeviceGetUtilizationRates", false);
  bind(api.power_mw, "nvmlDeviceGetPowerUsage", false);
  bind(api.temperature, "nvmlDeviceGetTemperature", false);
  bind(api.clock_mhz, "nvmlDeviceGetClockInfo", false);
  bind(api.total_energy_mj, "nvmlDeviceGetTotalEnergyConsumption", false);
  if (!missing.empty()) {
    nvml->api_.reset();  // nothing to shut down
    return fail(library + " lacks " + missing);
  }
  const nvmlReturn_t status = api.init();
  if (status != 0) {
    const std::string text =
        api.error_string ? api.error_string(status) : "NVML error " + std::to_string(status);
    nvml->api_.reset();
    return fail("NVML did not start: " + text);
  }
  return nvml;
}

Nvml::~Nvml() {
  if (api_) api_->shutdown();
  if (library_) dlclose(library_);
}

std::string Nvml::driver_version() const {
  char text[96] = {};
  if (!api_->driver_version) return {};
  return api_->driver_version(text, sizeof text) == 0 ? std::string(text) : std::string();
}

Nvml::Device Nvml::device(const std::string& pci_bus_id, int index) const {
  nvmlDevice_t device = nullptr;
  if (!pci_bus_id.empty() && api_->handle_by_pci_bus_id &&
      api_->handle_by_pci_bus_id(pci_bus_id.c_str(), &device) == 0)
    return device;
  if (index >= 0 && api_->handle_by_index(static_cast<unsigned int>(index), &device) == 0)
    return device;
  return nullptr;
}

void Nvml::read(Device handle, DeviceSample& s) const {
  const auto device = static_cast<nvmlDevice_t>(handle);
  nvmlUtilization_t utilization{};
  if (api_->utilization && api_->utilization(device, &utilization) == 0) {
    s.util_percent = utilization.gpu;
    s.mem_util_percent = utilization.memory;
  }
  nvmlMemory_t memory{};
  if (api_->memory(device, &memory) == 0) {
    s.mem_used_bytes = double(memory.used);
    s.mem_total_bytes = double(memory.total);
  }
  unsigned int value = 0;
  if (api_->power_mw && api_->power_mw(device, &value) == 0) s.power_w = value / 1000.0;
  if (api_->temperature && api_->temperature(device, kNvmlTemperatureGpu, &value) == 0)
    s.temperature_c = value;
  if (api_->clock_mhz && api_->clock_mhz(device, kNvmlClockSm, &value) == 0) s.sm_clock_mhz = value;
}

std::optional<double> Nvml::total_energy_j(Device handle) const {
  unsigned long long millijoules = 0;
  if (!api_->total_energy_mj ||
      api_->total_energy_mj(static_cast<nvmlDevice_t>(handle), &millijoules) != 0)
    return std::nullopt;
  return double(millijoules) / 1000.0;
}

GpuTelemetry::GpuTelemetry(std::shared_ptr<Nvml> nvml, std::vector<Watched> devices)
    : nvml_(std::move(nvml)), devices_(std::move(devices)) {}

void GpuTelemetry::sample(std::vector<DeviceSample>& out) {
  for (const Watched& watched : devices_) {
    DeviceSample s;
    s.device = watched.label;
    nvml_->read(watched.device, s);
    out.push_back(s);
  }
}

std::unique_ptr<GpuTelemetry> gpu_telemetry(std::shared_ptr<Nvml> nvml,
                                            const std::vector<GpuInfo>& gpus,
                                            std::string* problem) {
  std::vector<GpuTelemetry::Watched> watched;
  std::vector<int> seen;
  for (const GpuInfo& gpu : gpus) {
    if (std::find(seen.begin(), seen.end(), gpu.index) != seen.end()) continue;
    seen.push_back(gpu.index);
    if (Nvml::Device handle = nvml->device(gpu.pci_bus_id, gpu.index))
      watched.push_back({"cuda:" + std::to_string(gpu.index), handle});
    else if (problem)
      *problem += std::string(problem->empty() ? "" : "; ") + "NVML does not know cuda:" +
                  std::to_string(gpu.index) + " at PCI bus " + gpu.pci_bus_id;
  }
  if (watched.empty()) return nullptr;
  return std::make_unique<GpuTelemetry>(std::move(nvml), std::move(watched));
}

}  // namespace gpulab
