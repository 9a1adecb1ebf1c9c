// What a lab's experiments ask of a machine and of a run: whether one needs a GPU, which one is
// the baseline, the run it starts, and what hardware this machine lacks for it.
#include <algorithm>

#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/labs/lab.hpp"

namespace gpulab {

bool LabExperiment::needs_gpu() const {
  try {
    return cuda_device_index(experiment.backend.device) >= 0;
  } catch (const ConfigError&) {
    return false;
  }
}

const LabExperiment* Lab::experiment(const std::string& wanted) const {
  for (const auto& e : experiments)
    if (e.name == wanted) return &e;
  return nullptr;
}

const LabExperiment* Lab::baseline() const {
  for (const auto& e : experiments)
    if (e.baseline) return &e;
  return experiments.empty() ? nullptr : &experiments.front();
}

RunRequest lab_run_request(const LabExperiment& e) {
  RunRequest request;
  request.name = e.name;
  request.model = e.experiment.model;
  request.train = e.experiment.train;
  request.backend = e.experiment.backend;
  return request;
}

std::string missing_hardware(const LabExperiment& e, const DeviceList& devices) {
  if (!e.needs_gpu()) return {};
  const std::string& device = e.experiment.backend.device;
  if (devices.gpus.empty())
    return device + " needs a GPU, and this machine has none (" + devices.no_gpu_reason + ")";
  try {
    for (int gpu : parse_cuda_devices(device).replicas) {
      const bool present = std::any_of(devices.gpus.begin(), devices.gpus.end(),
                                       [gpu](const GpuInfo& g) { return g.index == gpu; });
      if (!present)
        return device + " needs GPU " + std::to_string(gpu) + ", and this machine has " +
               std::to_string(devices.gpus.size()) + (devices.gpus.size() == 1 ? " GPU" : " GPUs");
    }
  } catch (const ConfigError& error) {
    return error.what();
  }
  return {};
}

}  // namespace gpulab
