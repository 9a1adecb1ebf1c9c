// NVML loaded at run time: a fake libnvidia-ml (tests/fake_nvml.c) stands in for the driver, so
// the loader, every reading and the telemetry timing are tested on machines without a GPU; the
// real library is read where there is one.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/records/run_record.hpp"
#include "engine/telemetry/nvml.hpp"
#include "engine/telemetry/telemetry.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

TEST(Nvml, AbsentLibrarySaysThereIsNoDriver) {
  std::string why;
  EXPECT_EQ(Nvml::load(&why, "libnvidia-ml-does-not-exist.so.1"), nullptr);
  EXPECT_NE(why.find("no NVIDIA driver"), std::string::npos) << why;
  EXPECT_NE(why.find("libnvidia-ml-does-not-exist.so.1"), std::string::npos) << why;
}

TEST(Nvml, LibraryWithoutTheFunctionsIsRefused) {
  std::string why;
  EXPECT_EQ(Nvml::load(&why, "libm.so.6"), nullptr);
  EXPECT_NE(why.find("lacks nvmlInit_v2"), std::string::npos) << why;
}

TEST(Nvml, FailedInitIsReported) {
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  std::string why;
  EXPECT_EQ(Nvml::load(&why, GPULAB_FAKE_NVML_PATH), nullptr);
  unsetenv("FAKE_NVML_INIT_ERROR");
  EXPECT_NE(why.find("Driver Not Loaded"), std::string::npos) << why;
}

TEST(Nvml, ReadsEveryFieldOfADevice) {
  std::string why;
  const auto nvml = Nvml::load(&why, GPULAB_FAKE_NVML_PATH);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_EQ(nvml->driver_version(), "999.12.34");
  EXPECT_EQ(nvml->device("0000:17:00.0", -1), nullptr);
  const Nvml::Device by_bus = nvml->device("0000:65:00.0", -1);
  ASSERT_NE(by_bus, nullptr);
  EXPECT_EQ(nvml->device("", 0), by_bus);
  EXPECT_EQ(nvml->device("0000:17:00.0", 0), by_bus) << "falls back to the index";
  DeviceSample s;
  nvml->read(by_bus, s);
  EXPECT_EQ(s.util_percent, 87);
  EXPECT_EQ(s.mem_util_percent, 41);
  EXPECT_EQ(s.mem_total_bytes, double(80ull << 30));
  EXPECT_EQ(s.mem_used_bytes, double(3ull << 30));
  EXPECT_DOUBLE_EQ(s.power_w, 312.5);
  EXPECT_EQ(s.temperature_c, 61);
  EXPECT_EQ(s.sm_clock_mhz, 1980);
}

TEST(Nvml, ALibraryWithOnlyTheRequiredFunctionsRecordsTheRestAsMissing) {
  std::string why;
  const auto nvml = Nvml::load(&why, GPULAB_FAKE_NVML_MINIMAL_PATH);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_EQ(nvml->driver_version(), "");
  // No lookup by PCI bus id: the index serves.
  EXPECT_EQ(nvml->device("0000:65:00.0", -1), nullptr);
  const Nvml::Device device = nvml->device("0000:65:00.0", 0);
  ASSERT_NE(device, nullptr);
  DeviceSample s;
  s.device = "cuda:0";
  nvml->read(device, s);
  EXPECT_EQ(s.mem_total_bytes, double(80ull << 30));
  EXPECT_EQ(s.mem_used_bytes, double(3ull << 30));
  // Missing, not zero: a chart must not draw a GPU at 0 W and 0 C.
  EXPECT_TRUE(std::isnan(s.util_percent));
  EXPECT_TRUE(std::isnan(s.mem_util_percent));
  EXPECT_TRUE(std::isnan(s.power_w));
  EXPECT_TRUE(std::isnan(s.temperature_c));
  EXPECT_TRUE(std::isnan(s.sm_clock_mhz));

  // ... and empty fields in telemetry.csv.
  test::TempDir dir;
  {
    RunRecorder recorder(dir.path() / "run", nlohmann::json::object());
    recorder.on_sample(s);
  }
  std::ifstream in(dir.path() / "run" / "telemetry.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  ASSERT_EQ(header,
            "time_s,device,util_percent,mem_util_percent,mem_used_bytes,mem_total_bytes,power_w,"
            "temperature_c,sm_clock_mhz");
  std::vector<std::string> fields(1);
  for (const char c : row) {
    if (c == ',')
      fields.emplace_back();
    else
      fields.back().push_back(c);
  }
  ASSERT_EQ(fields.size(), 9u) << row;
  EXPECT_EQ(fields[1], "cuda:0");
  for (const int empty : {2, 3, 6, 7, 8}) EXPECT_EQ(fields[empty], "") << row;
  for (const int full : {4, 5}) EXPECT_NE(fields[full], "") << row;
}

TEST(Nvml, FailedInitWithoutAnErrorStringStillSaysWhy) {
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  std::string why;
  EXPECT_EQ(Nvml::load(&why, GPULAB_FAKE_NVML_MINIMAL_PATH), nullptr);
  unsetenv("FAKE_NVML_INIT_ERROR");
  EXPECT_NE(why.find("NVML did not start: NVML error 9"), std::string::npos) << why;
}

TEST(Nvml, TelemetryLabelsSamplesAndTheFirstComesAtOnce) {
  const auto nvml = Nvml::load(nullptr, GPULAB_FAKE_NVML_PATH);
  ASSERT_NE(nvml, nullptr);
  std::vector<std::unique_ptr<TelemetrySource>> sources;
  sources.push_back(std::make_unique<GpuTelemetry>(
      nvml, std::vector<GpuTelemetry::Watched>{{"cuda:0", nvml->device("0000:65:00.0", 0)}}));
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<DeviceSample> samples;
  const auto start = std::chrono::steady_clock::now();
  TelemetrySampler sampler(std::move(sources), 10, start, [&](const DeviceSample& s) {
    std::lock_guard lock(mutex);
    samples.push_back(s);
    arrived.notify_all();
  });
  {
    std::unique_lock lock(mutex);
    arrived.wait_for(lock, std::chrono::seconds(5), [&] { return samples.size() >= 3; });
  }
  sampler.stop();
  ASSERT_GE(samples.size(), 3u);
  EXPECT_EQ(samples[0].device, "cuda:0");
  EXPECT_LT(samples[0].time_s, 0.2) << "the first sample must come within 200 ms of the start";
  EXPECT_EQ(samples[0].power_w, 312.5);
  // 10 Hz: the third sample about 0.2 s in.
  EXPECT_GT(samples[2].time_s, 0.15);
  EXPECT_LT(samples[2].time_s, 1.0);
}

TEST(Nvml, ARunOnSeveralGpusSamplesEachOnce) {
  const auto nvml = Nvml::load(nullptr, GPULAB_FAKE_NVML_PATH);
  ASSERT_NE(nvml, nullptr);
  auto gpu = [](int index, const std::string& bus) {
    GpuInfo info;
    info.index = index;
    info.pci_bus_id = bus;
    return info;
  };
  // cuda:0x2,1: require_gpus lists a GPU once per replica; each GPU is sampled once.
  std::string problem;
  const auto telemetry = gpu_telemetry(
      nvml, {gpu(0, "0000:65:00.0"), gpu(0, "0000:65:00.0"), gpu(1, "0000:66:00.0")}, &problem);
  ASSERT_NE(telemetry, nullptr);
  EXPECT_EQ(problem, "");
  std::vector<DeviceSample> samples;
  telemetry->sample(samples);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].device, "cuda:0");
  EXPECT_EQ(samples[0].util_percent, 87);
  EXPECT_EQ(samples[0].power_w, 312.5);
  EXPECT_EQ(samples[1].device, "cuda:1");
  EXPECT_EQ(samples[1].util_percent, 43);
  EXPECT_EQ(samples[1].power_w, 156.25);

  // A GPU NVML does not know is named, and the others are still sampled.
  problem.clear();
  const auto partial =
      gpu_telemetry(nvml, {gpu(1, "0000:66:00.0"), gpu(5, "0000:99:00.0")}, &problem);
  ASSERT_NE(partial, nullptr);
  EXPECT_NE(problem.find("cuda:5"), std::string::npos) << problem;
  samples.clear();
  partial->sample(samples);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].device, "cuda:1");
  EXPECT_EQ(gpu_telemetry(nvml, {gpu(5, "0000:99:00.0")}, nullptr), nullptr);
}

TEST(Nvml, RealLibraryWhereThereIsADriver) {
  // Where CUDA sees a GPU, the driver's NVML must load: a failure there is a failure, not a skip.
  const DeviceList devices = list_devices();
  std::string why;
  const auto nvml = Nvml::load(&why);
  if (devices.gpus.empty()) {
    if (!nvml) GTEST_SKIP() << "no GPU (" << devices.no_gpu_reason << ") and no NVML: " << why;
    // NVML seeing a GPU that CUDA does not is a machine with a GPU and a problem, not one
    // without a GPU.
    if (nvml->device("", 0) != nullptr)
      FAIL() << "NVML (driver " << nvml->driver_version()
             << ") sees a GPU but CUDA does not: " << devices.no_gpu_reason;
    GTEST_SKIP() << "NVML loads (driver " << nvml->driver_version()
                 << ") but sees no GPU, nor does CUDA: " << devices.no_gpu_reason;
  }
  ASSERT_NE(nvml, nullptr) << "CUDA sees " << devices.gpus[0].name << " but NVML failed: " << why;
  EXPECT_FALSE(nvml->driver_version().empty());
  // A run's telemetry of every GPU there is: a GPU NVML does not find, or a field it leaves
  // unread (an empty column in telemetry.csv), is a problem on a machine with a GPU.
  std::string problem;
  const auto telemetry = gpu_telemetry(nvml, devices.gpus, &problem);
  ASSERT_NE(telemetry, nullptr) << "NVML finds none of the GPUs CUDA sees: " << problem;
  EXPECT_EQ(problem, "") << "NVML misses a GPU CUDA sees";
  std::vector<DeviceSample> samples;
  telemetry->sample(samples);
  ASSERT_EQ(samples.size(), telemetry->watched().size());
  for (const DeviceSample& s : samples) {
    const std::string gpu = s.device + " (driver " + nvml->driver_version() + ")";
    EXPECT_GT(s.mem_total_bytes, 0) << gpu;
    EXPECT_GE(s.mem_used_bytes, 0) << gpu;
    EXPECT_LE(s.mem_used_bytes, s.mem_total_bytes) << gpu;
    for (const auto& [name, value] :
         {std::pair{"GPU utilization", s.util_percent},
          std::pair{"memory utilization", s.mem_util_percent}, std::pair{"power", s.power_w},
          std::pair{"temperature", s.temperature_c}, std::pair{"SM clock", s.sm_clock_mhz}})
      EXPECT_TRUE(std::isfinite(value)) << gpu << ": NVML did not read its " << name;
    EXPECT_GT(s.power_w, 0) << gpu;
    EXPECT_GT(s.sm_clock_mhz, 0) << gpu;
  }
}

}  // namespace
}  // namespace gpulab
