// Energy to solution: the joules a run's devices used while it trained. A GPU's comes from NVML's
// total-energy counter where the GPU has one, else from its power samples integrated over time; the
// CPU's from the RAPL counters the Linux powercap interface exposes, else it is unavailable. An
// energy that cannot be measured is null with the reason, never 0 J.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/metrics.hpp"
#include "engine/telemetry/nvml.hpp"

namespace gpulab {

// The energy under a series of power samples (watts at seconds, in time order), by the trapezoid
// rule between neighbouring samples; samples without a power reading are passed over. kNoValue
// with fewer than two readings: an energy it cannot know is not zero.
class PowerIntegral {
 public:
  void add(double time_s, double watts);
  double joules() const { return readings_ >= 2 ? joules_ : kNoValue; }
  int readings() const { return readings_; }
  double seconds() const { return readings_ >= 2 ? last_time_s_ - first_time_s_ : 0; }

 private:
  double joules_ = 0, first_time_s_ = 0, last_time_s_ = 0, last_watts_ = 0;
  int readings_ = 0;
};

// A counter of joules that only grows (but for wrapping, which the counter itself undoes).
class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  virtual std::optional<double> joules() = 0;  // nullopt when the counter cannot be read now
  virtual const char* source() const = 0;      // how run.json names where the figure came from
};

// The CPU packages' RAPL counters under `powercap` (intel-rapl:N/energy_uj, every package summed,
// each one's wrap at max_energy_range_uj undone), or nullptr with *why saying what is missing.
std::unique_ptr<EnergyCounter> rapl_counter(
    const std::filesystem::path& powercap = "/sys/class/powercap", std::string* why = nullptr);

// A GPU's total-energy counter through NVML (Volta and newer), or nullptr with *why.
std::unique_ptr<EnergyCounter> nvml_energy_counter(std::shared_ptr<Nvml> nvml, Nvml::Device device,
                                                   std::string* why = nullptr);

// The energy of one run: counters read when it is made and again at finish(), power samples
// integrated for the devices without a counter.
class EnergyMeter {
 public:
  // `compute`: the devices whose energy is the run's ("cpu", or its GPUs "cuda:N"); `counters`:
  // the counters there are, by device; `missing`: why a device has none.
  EnergyMeter(std::vector<std::string> compute,
              std::map<std::string, std::unique_ptr<EnergyCounter>> counters,
              std::map<std::string, std::string> missing);
  void add_sample(const DeviceSample& sample);  // from the sampler's thread only
  // run.json's "energy": joules and images per joule over the compute devices (null when any of
  // them is unknown), and each device's figure with its source or why it is unavailable.
  nlohmann::json finish(int64_t images);

 private:
  std::vector<std::string> compute_;
  std::map<std::string, std::unique_ptr<EnergyCounter>> counters_;
  std::map<std::string, double> start_joules_;
  std::map<std::string, std::string> missing_;
  std::map<std::string, PowerIntegral> power_;
};

// One line on run.json's "energy" for people: "725 J on cuda:0, cuda:1 (12.4 images/J)", or
// "unavailable: cpu: no RAPL counters on this machine".
std::string energy_text(const nlohmann::json& energy);

// A figure as run.json writes it: null where there is none (NaN), as JSON has no NaN.
nlohmann::json number_or_null(double value);

}  // namespace gpulab
