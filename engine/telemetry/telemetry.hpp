// engine/telemetry: what the hardware is doing while a run trains: CPU samplers, NVML for the
// GPUs, and the sampler thread. Over engine/devices.
//
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

#include "engine/backend/metrics.hpp"

namespace gpulab {

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  // Appends one sample per device it watches; time_s is filled in by the sampler.
  virtual void sample(std::vector<DeviceSample>& out) = 0;
};

// The device name of the samples that say how busy other programs keep the CPU.
inline constexpr const char* kOtherProgramsDevice = "cpu-others";

// This run on this machine's CPU: utilization (% of all cores, from /proc/PID/stat) and resident
// memory of this process and of `peers` (the other processes of the run on this machine: an MPI
// job's ranks beside this one); and, as device kOtherProgramsDevice, the CPU time every other
// program took meanwhile (% of all cores, from /proc/stat less the run's processes), since a run
// measured while something else loads the CPU is slower than the run alone. A peer that has ended
// keeps the CPU time it had when last read.
class CpuTelemetry final : public TelemetrySource {
 public:
  explicit CpuTelemetry(std::vector<int> peers = {});
  void sample(std::vector<DeviceSample>& out) override;

 private:
  // The counters a share of the CPU is measured between, read together: the run's CPU seconds
  // (this process and its peers), the machine's busy and total CPU seconds summed over its cores
  // (/proc/stat; 0 where unreadable), and the time.
  struct Counters {
    double run_cpu_s = 0, machine_busy_s = 0, machine_total_s = 0;
    std::chrono::steady_clock::time_point time;
  };
  Counters read_counters();
  double run_cpu_seconds();  // this process and its peers, each as last read when it has ended
  std::vector<int> peers_;
  std::vector<double> peer_cpu_s_;  // each peer's CPU seconds when last read
  Counters last_;                   // at the last sample, for the "cpu" line
  // At the last "cpu-others" line, taken once the machine's clock has ticked since the one before.
  Counters last_others_;
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
