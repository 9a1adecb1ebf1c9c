// Device telemetry: sources that read a device's state, and a sampler thread that polls them at a
// fixed rate and hands each sample to a callback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/metrics.hpp"

namespace gpulab {

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  // Appends one sample per device it watches; time_s is filled in by the sampler.
  virtual void sample(std::vector<DeviceSample>& out) = 0;
};

// The device name of the samples that say how busy other programs keep the CPU.
inline constexpr const char* kOtherProgramsDevice = "cpu-others";

// This process on the CPU: utilization (% of all cores, from /proc/self/stat) and resident
// memory; and, as device kOtherProgramsDevice, the CPU time every other program took meanwhile
// (% of all cores, from /proc/stat less this process), since a run measured while something else
// loads the CPU is slower than the run alone.
class CpuTelemetry final : public TelemetrySource {
 public:
  CpuTelemetry();
  void sample(std::vector<DeviceSample>& out) override;

 private:
  double last_cpu_s_ = 0;
  // The machine's counters and this process's CPU seconds when the last "cpu-others" was taken.
  double last_machine_busy_s_ = 0, last_machine_total_s_ = 0, last_own_for_others_s_ = 0;
  std::chrono::steady_clock::time_point last_time_;
  int cores_;
  double mem_total_bytes_;
};

// Polls its sources on its own thread: the first sample at once, then every 1/hz seconds, and a
// last one when stopped.
class TelemetrySampler {
 public:
  using Callback = std::function<void(const DeviceSample&)>;
  TelemetrySampler(std::vector<std::unique_ptr<TelemetrySource>> sources, double hz,
                   std::chrono::steady_clock::time_point run_start, Callback callback);
  ~TelemetrySampler();  // stops and joins
  void stop();

 private:
  void loop();
  std::vector<std::unique_ptr<TelemetrySource>> sources_;
  std::chrono::duration<double> period_;
  std::chrono::steady_clock::time_point run_start_;
  Callback callback_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpulab
