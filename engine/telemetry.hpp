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

// This process on the CPU: utilization (% of all cores, from /proc/self/stat) and resident memory.
class CpuTelemetry final : public TelemetrySource {
 public:
  CpuTelemetry();
  void sample(std::vector<DeviceSample>& out) override;

 private:
  double last_cpu_s_ = 0;
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
