// Other programs' share of this machine's CPU over a span of time: for figures measured without a
// run record (a benchmark's timings), and for saying before a lab starts that the machine is busy.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/telemetry/telemetry.hpp"

namespace gpulab {

// Measures from its construction on, as a run's sampler does (CpuTelemetry's "cpu-others": the
// machine's busy time less this process's own).
class OutsideLoadMeter {
 public:
  OutsideLoadMeter();
  // Over the span since construction (or the last call), run.json's "outside_load" shape
  // (outside_load_json, one sample); null where /proc/stat cannot be read. The processor's busy
  // time is counted in clock ticks (10 ms): a span of a few would read as no load (or as all)
  // whatever ran, so a shorter span is waited out to half a second first.
  nlohmann::json measure();

 private:
  CpuTelemetry cpu_;
  std::chrono::steady_clock::time_point start_;
};

// The machine's outside load over the next `seconds`, this thread sleeping meanwhile.
nlohmann::json outside_load_now(double seconds = 0.5);

// Where `load` is under load, one line to say before a lab starts: what is busy, that what it
// measures will be marked, and that the learner may wait. "the machine is busy: other programs
// keep 1.5 of 2 cores busy, so figures measured now will be marked ⚠ measured under outside
// load; wait for them to finish for clean figures". Empty otherwise.
std::string busy_machine_notice(const nlohmann::json& load);

}  // namespace gpulab
