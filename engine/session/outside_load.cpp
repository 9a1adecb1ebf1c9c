// Other programs' load on the CPU over a span, and the notice that the machine is busy.
#include "engine/session/outside_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "engine/records/outside_load.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

OutsideLoadMeter::OutsideLoadMeter() : start_(std::chrono::steady_clock::now()) {
  std::vector<DeviceSample> first;
  cpu_.sample(first);  // the span starts at this reading
}

nlohmann::json OutsideLoadMeter::measure() {
  const std::chrono::duration<double> shortest(0.5);
  const auto spent = std::chrono::steady_clock::now() - start_;
  if (spent < shortest) std::this_thread::sleep_for(shortest - spent);
  start_ = std::chrono::steady_clock::now();
  std::vector<DeviceSample> samples;
  cpu_.sample(samples);
  for (const DeviceSample& s : samples)
    if (s.device == kOtherProgramsDevice)
      return outside_load_json(s.util_percent, s.util_percent, 1,
                               static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
  return nullptr;
}

nlohmann::json outside_load_now(double seconds) {
  OutsideLoadMeter meter;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return meter.measure();
}

std::string busy_machine_notice(const nlohmann::json& load) {
  if (outside_load_caveat(load).empty()) return "";
  char text[240];
  std::snprintf(text, sizeof text,
                "the machine is busy: other programs keep %.1f of %d cores busy, so figures "
                "measured now will be marked ⚠ measured under outside load; wait for them to "
                "finish for clean figures",
                load.value("mean_cores", 0.0), load.value("cores", 0));
  return text;
}

}  // namespace gpulab
