// Energy counters (RAPL, NVML) and the integration of power samples into joules.
#include "engine/telemetry/energy.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

void PowerIntegral::add(double time_s, double watts) {
  if (!std::isfinite(time_s) || !std::isfinite(watts)) return;
  if (readings_ == 0) {
    first_time_s_ = time_s;
  } else if (time_s > last_time_s_) {
    joules_ += 0.5 * (watts + last_watts_) * (time_s - last_time_s_);
  } else {
    return;  // out of order or repeated: no time passed
  }
  last_time_s_ = time_s;
  last_watts_ = watts;
  ++readings_;
}

namespace {

// One number from a sysfs file; nullopt with *error set when it cannot be read.
std::optional<double> read_number(const fs::path& file, std::string* error) {
  std::ifstream in(file);
  double value = 0;
  if (in >> value) return value;
  if (error)
    *error = file.string() + ": " + (errno == EACCES ? "readable only by root" : "cannot be read");
  return std::nullopt;
}

class RaplCounter final : public EnergyCounter {
 public:
  struct Package {
    fs::path energy_file;
    double range_uj = 0;  // where the counter wraps; 0 when not known
    double last_uj = 0;
    double total_uj = 0;  // since the first reading, wraps undone
  };
  explicit RaplCounter(std::vector<Package> packages) : packages_(std::move(packages)) {}

  std::optional<double> joules() override {
    double sum_uj = 0;
    for (Package& p : packages_) {
      const std::optional<double> now = read_number(p.energy_file, nullptr);
      if (!now) return std::nullopt;
      double step = *now - p.last_uj;
      if (step < 0 && p.range_uj > 0) step += p.range_uj;  // the counter wrapped
      if (step > 0) p.total_uj += step;
      p.last_uj = *now;
      sum_uj += p.total_uj;
    }
    return sum_uj / 1e6;
  }
  const char* source() const override { return "RAPL counter (the whole CPU package)"; }

 private:
  std::vector<Package> packages_;
};

class NvmlEnergyCounter final : public EnergyCounter {
 public:
  NvmlEnergyCounter(std::shared_ptr<Nvml> nvml, Nvml::Device device)
      : nvml_(std::move(nvml)), device_(device) {}
  std::optional<double> joules() override { return nvml_->total_energy_j(device_); }
  const char* source() const override { return "NVML energy counter"; }

 private:
  std::shared_ptr<Nvml> nvml_;
  Nvml::Device device_;
};

}  // namespace

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

std::unique_ptr<EnergyCounter> rapl_counter(const fs::path& powercap, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return std::unique_ptr<EnergyCounter>();
  };
  std::error_code error;
  if (!fs::is_directory(powercap, error))
    return fail("no RAPL counters on this machine (" + powercap.string() + " is absent)");
  static const std::regex package(R"(intel-rapl:\d+)");  // packages, not their sub-zones
  std::vector<fs::path> zones;
  for (const auto& entry : fs::directory_iterator(powercap, error))
    if (std::regex_match(entry.path().filename().string(), package)) zones.push_back(entry.path());
  if (zones.empty())
    return fail("no RAPL counters on this machine (no intel-rapl package in " + powercap.string() +
                ")");
  std::sort(zones.begin(), zones.end());
  std::vector<RaplCounter::Package> packages;
  for (const fs::path& zone : zones) {
    RaplCounter::Package p;
    p.energy_file = zone / "energy_uj";
    std::string problem;
    const std::optional<double> now = read_number(p.energy_file, &problem);
    if (!now) return fail("the CPU's RAPL counter cannot be read: " + problem);
    p.last_uj = *now;
    p.range_uj = read_number(zone / "max_energy_range_uj", nullptr).value_or(0);
    packages.push_back(p);
  }
  return std::make_unique<RaplCounter>(std::move(packages));
}

std::unique_ptr<EnergyCounter> nvml_energy_counter(std::shared_ptr<Nvml> nvml, Nvml::Device device,
                                                   std::string* why) {
  if (!nvml || !device || !nvml->total_energy_j(device)) {
    if (why) *why = "this GPU has no NVML energy counter (Volta and newer have one)";
    return nullptr;
  }
  return std::make_unique<NvmlEnergyCounter>(std::move(nvml), device);
}

EnergyMeter::EnergyMeter(std::vector<std::string> compute,
                         std::map<std::string, std::unique_ptr<EnergyCounter>> counters,
                         std::map<std::string, std::string> missing)
    : compute_(std::move(compute)), counters_(std::move(counters)), missing_(std::move(missing)) {
  for (auto& [device, counter] : counters_)
    if (const std::optional<double> now = counter->joules()) start_joules_[device] = *now;
}

void EnergyMeter::add_sample(const DeviceSample& sample) {
  if (std::isfinite(sample.power_w)) power_[sample.device].add(sample.time_s, sample.power_w);
}

json EnergyMeter::finish(int64_t images) {
  std::vector<std::string> devices = compute_;
  auto add_device = [&](const std::string& device) {
    if (std::find(devices.begin(), devices.end(), device) == devices.end())
      devices.push_back(device);
  };
  for (const auto& entry : counters_) add_device(entry.first);
  for (const auto& entry : missing_) add_device(entry.first);

  json listed = json::array();
  double total = 0;
  bool known = !compute_.empty();
  for (const std::string& device : devices) {
    json entry = {{"device", device}};
    double joules = kNoValue;
    const auto counter = counters_.find(device);
    const auto start = start_joules_.find(device);
    if (counter != counters_.end() && start != start_joules_.end()) {
      if (const std::optional<double> end = counter->second->joules()) {
        joules = *end - start->second;
        entry["source"] = counter->second->source();
      }
    }
    const auto power = power_.find(device);
    if (!std::isfinite(joules) && power != power_.end() && power->second.readings() >= 2) {
      joules = power->second.joules();
      entry["source"] = "power samples";
      entry["seconds"] = power->second.seconds();
    }
    entry["joules"] = number_or_null(joules);
    if (!std::isfinite(joules)) {
      entry["source"] = "unavailable";
      const auto why = missing_.find(device);
      entry["why"] = why != missing_.end() ? why->second : "no energy counter and no power samples";
    }
    listed.push_back(entry);
    if (std::find(compute_.begin(), compute_.end(), device) == compute_.end()) continue;
    if (std::isfinite(joules))
      total += joules;
    else
      known = false;
  }
  const double joules = known ? total : kNoValue;
  return {
      {"joules", number_or_null(joules)},
      {"images_per_joule", number_or_null(known && total > 0 ? double(images) / total : kNoValue)},
      {"of", compute_},
      {"devices", listed}};
}

std::string energy_text(const json& energy) {
  if (!energy.is_object()) return "not recorded";
  const json& joules = energy.value("joules", json());
  const json& of = energy.value("of", json::array());
  std::string devices;
  for (const json& device : of)
    if (device.is_string()) devices += (devices.empty() ? "" : ", ") + device.get<std::string>();
  char text[96];
  if (joules.is_number()) {
    std::snprintf(text, sizeof text, "%.4g J on %s", joules.get<double>(), devices.c_str());
    std::string line = text;
    if (const json& per = energy.value("images_per_joule", json()); per.is_number()) {
      std::snprintf(text, sizeof text, " (%.3g images/J)", per.get<double>());
      line += text;
    }
    return line;
  }
  std::string why;
  for (const json& device : energy.value("devices", json::array()))
    if (device.is_object() && device.value("joules", json()).is_null() &&
        std::find(of.begin(), of.end(), device.value("device", json())) != of.end())
      why += (why.empty() ? "" : "; ") + device.value("device", std::string("?")) + ": " +
             device.value("why", std::string("not measured"));
  return "unavailable: " + (why.empty() ? std::string("not measured") : why);
}

}  // namespace gpulab
