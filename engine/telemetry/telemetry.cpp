// CPU telemetry from /proc and the sampler thread.
#include "engine/telemetry/telemetry.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/base/clock.hpp"
#include "engine/base/threads.hpp"

namespace gpulab {
namespace {

// The /proc folder of a process: "self" for 0.
std::string proc_dir(int pid) {
  return pid == 0 ? std::string("/proc/self") : "/proc/" + std::to_string(pid);
}

// User plus system CPU seconds of a process (fields 14 and 15 of /proc/PID/stat; 0 for this
// one); -1 where it cannot be read (the process has ended).
double process_cpu_seconds(int pid = 0) {
  std::ifstream in(proc_dir(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// Busy and total CPU seconds of the whole machine, summed over its cores (the "cpu" line of
// /proc/stat); both 0 where it cannot be read.
struct MachineCpu {
  double busy_s = 0, total_s = 0;
};
MachineCpu machine_cpu_seconds() {
  std::ifstream in("/proc/stat");
  std::string label;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  if (!(in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu")
    return {};
  const double tick = double(sysconf(_SC_CLK_TCK));
  const double busy = double(user + nice + system + irq + softirq + steal);
  return {busy / tick, (busy + double(idle + iowait)) / tick};
}

double resident_bytes(int pid = 0) {
  std::ifstream in(proc_dir(pid) + "/statm");
  unsigned long long size = 0, resident = 0;
  in >> size >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE));
}

}  // namespace

CpuTelemetry::CpuTelemetry(std::vector<int> peers)
    : peers_(std::move(peers)),
      peer_cpu_s_(peers_.size(), 0.0),
      last_(read_counters()),
      last_others_(last_),
      cores_(static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))),
      mem_total_bytes_(double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE))) {}

double CpuTelemetry::run_cpu_seconds() {
  double total = std::max(0.0, process_cpu_seconds());
  for (size_t i = 0; i < peers_.size(); ++i) {
    const double seconds = process_cpu_seconds(peers_[i]);
    if (seconds >= 0) peer_cpu_s_[i] = seconds;
    total += peer_cpu_s_[i];
  }
  return total;
}

CpuTelemetry::Counters CpuTelemetry::read_counters() {
  Counters now;
  now.time = Clock::now();
  now.run_cpu_s = run_cpu_seconds();
  const MachineCpu machine = machine_cpu_seconds();
  now.machine_busy_s = machine.busy_s;
  now.machine_total_s = machine.total_s;
  return now;
}

void CpuTelemetry::sample(std::vector<DeviceSample>& out) {
  const Counters now = read_counters();
  const double wall_s = seconds_between(last_.time, now.time);
  DeviceSample s;
  s.device = "cpu";
  if (wall_s > 1e-3)
    s.util_percent = std::min(100.0, 100.0 * (now.run_cpu_s - last_.run_cpu_s) / (wall_s * cores_));
  s.mem_used_bytes = resident_bytes();
  for (int peer : peers_) s.mem_used_bytes += resident_bytes(peer);
  s.mem_total_bytes = mem_total_bytes_;
  s.mem_util_percent = 100.0 * s.mem_used_bytes / mem_total_bytes_;
  out.push_back(s);

  const double total_s = now.machine_total_s - last_others_.machine_total_s;
  if (total_s > 1e-3) {  // at least a tick of the machine's clock since the last sample
    DeviceSample others;
    others.device = kOtherProgramsDevice;
    const double other_s =
        now.machine_busy_s - last_others_.machine_busy_s - (now.run_cpu_s - last_others_.run_cpu_s);
    others.util_percent = std::clamp(100.0 * other_s / total_s, 0.0, 100.0);
    out.push_back(others);
    last_others_ = now;
  }
  last_ = now;
}

TelemetrySampler::TelemetrySampler(std::vector<std::unique_ptr<TelemetrySource>> sources,
                                   double hz, std::chrono::steady_clock::time_point run_start,
                                   Callback callback)
    : sources_(std::move(sources)),
      period_(1.0 / (hz > 0 ? hz : 4.0)),
      run_start_(run_start),
      callback_(std::move(callback)),
      thread_(start_thread("the telemetry sampler's thread", [this] { loop(); })) {}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TelemetrySampler::loop() {
  // The first sample at once and a last one when stopped, so that even a run shorter than the
  // period has its start and end on record.
  std::vector<DeviceSample> samples;
  auto next = std::chrono::steady_clock::now();
  for (bool last = false;;) {
    samples.clear();
    for (auto& source : sources_) {
      try {
        source->sample(samples);
      } catch (...) {
        // An exception must not leave the sampler's thread (that ends the program): a source
        // that fails only loses its rows of telemetry.csv.
      }
    }
    const double time_s = seconds_since(run_start_);
    for (auto& s : samples) {
      s.time_s = time_s;
      try {
        callback_(s);
      } catch (...) {
        // A failing consumer (a full disk) must not take the sampler down; the recorder's own
        // writes on the training thread report the problem.
      }
    }
    if (last) return;
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period_);
    std::unique_lock lock(mutex_);
    last = wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

}  // namespace gpulab
