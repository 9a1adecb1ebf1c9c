// Energy to solution: power samples integrated by hand, RAPL counters from a powercap tree made
// here, NVML's energy counter through the fake library, and run.json's "energy" built from them.
// An energy that cannot be measured is null with the reason, never 0 J.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "engine/telemetry/energy.hpp"
#include "engine/telemetry/nvml.hpp"
#include "temp_dir.hpp"

namespace gpulab {
namespace {
namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

TEST(Energy, PowerSamplesAreIntegratedByTheTrapezoidRule) {
  PowerIntegral power;
  power.add(0, 100);
  power.add(1, 200);       // (100 + 200) / 2 * 1 s = 150 J
  power.add(3, 200);       // 200 W for 2 s = 400 J
  power.add(4, kNoValue);  // no reading: passed over
  power.add(5, 100);       // (200 + 100) / 2 * 2 s = 300 J
  power.add(5, 900);       // no time passed: passed over
  EXPECT_DOUBLE_EQ(power.joules(), 850.0);
  EXPECT_DOUBLE_EQ(power.seconds(), 5.0);
  EXPECT_EQ(power.readings(), 4);
}

TEST(Energy, FewerThanTwoPowerReadingsAreUnknownNotZero) {
  PowerIntegral none;
  EXPECT_TRUE(std::isnan(none.joules()));
  PowerIntegral one;
  one.add(2, 300);
  EXPECT_TRUE(std::isnan(one.joules()));
}

TEST(Energy, RaplPackagesAreSummedAndAWrapIsUndone) {
  test::TempDir dir;
  write(dir.path() / "intel-rapl:0/energy_uj", "1000000\n");
  write(dir.path() / "intel-rapl:0/max_energy_range_uj", "2000000\n");
  write(dir.path() / "intel-rapl:0:0/energy_uj", "999999999\n");  // a sub-zone: part of package 0
  write(dir.path() / "intel-rapl:1/energy_uj", "500000\n");
  std::string why;
  const auto counter = rapl_counter(dir.path(), &why);
  ASSERT_NE(counter, nullptr) << why;
  EXPECT_EQ(*counter->joules(), 0.0);
  write(dir.path() / "intel-rapl:0/energy_uj", "500000\n");   // wrapped: 1.5 J since
  write(dir.path() / "intel-rapl:1/energy_uj", "1500000\n");  // 1 J since
  EXPECT_DOUBLE_EQ(*counter->joules(), 2.5);
  EXPECT_NE(std::string(counter->source()).find("RAPL"), std::string::npos);
}

TEST(Energy, NoRaplSaysWhy) {
  test::TempDir dir;
  std::string why;
  EXPECT_EQ(rapl_counter(dir.path() / "absent", &why), nullptr);
  EXPECT_NE(why.find("no RAPL counters"), std::string::npos) << why;
  write(dir.path() / "intel-rapl-mmio:0/energy_uj", "5\n");  // not a package
  EXPECT_EQ(rapl_counter(dir.path(), &why), nullptr);
  EXPECT_NE(why.find("no intel-rapl package"), std::string::npos) << why;
}

TEST(Energy, ACpuRunWithRaplGetsJoulesAndImagesPerJoule) {
  test::TempDir dir;
  write(dir.path() / "intel-rapl:0/energy_uj", "1000000\n");
  std::map<std::string, std::unique_ptr<EnergyCounter>> counters;
  counters["cpu"] = rapl_counter(dir.path());
  EnergyMeter meter({"cpu"}, std::move(counters), {});
  write(dir.path() / "intel-rapl:0/energy_uj", "5000000\n");  // 4 J
  const nlohmann::json energy = meter.finish(1000);
  EXPECT_DOUBLE_EQ(energy["joules"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(energy["images_per_joule"].get<double>(), 250.0);
  ASSERT_EQ(energy["devices"].size(), 1u);
  EXPECT_EQ(energy["devices"][0]["device"], "cpu");
  EXPECT_NE(energy["devices"][0]["source"].get<std::string>().find("RAPL"), std::string::npos);
}

TEST(Energy, ACpuRunWithoutRaplIsUnavailableNeverZero) {
  EnergyMeter meter({"cpu"}, {}, {{"cpu", "no RAPL counters on this machine"}});
  DeviceSample cpu;  // CPU samples carry no power
  cpu.device = "cpu";
  cpu.time_s = 1;
  meter.add_sample(cpu);
  const nlohmann::json energy = meter.finish(1000);
  EXPECT_TRUE(energy["joules"].is_null()) << energy.dump();
  EXPECT_TRUE(energy["images_per_joule"].is_null()) << energy.dump();
  EXPECT_EQ(energy["devices"][0]["source"], "unavailable");
  EXPECT_EQ(energy["devices"][0]["why"], "no RAPL counters on this machine");
}

TEST(Energy, GpusUseNvmlsCounterElseTheirPowerSamples) {
  std::string why;
  const auto nvml = Nvml::load(&why, GPULAB_FAKE_NVML_PATH);
  ASSERT_NE(nvml, nullptr) << why;
  std::map<std::string, std::unique_ptr<EnergyCounter>> counters;
  std::map<std::string, std::string> missing;
  counters["cuda:0"] = nvml_energy_counter(nvml, nvml->device("0000:65:00.0", -1), &why);
  ASSERT_NE(counters["cuda:0"], nullptr) << why;
  // The fake's second GPU has no counter.
  EXPECT_EQ(nvml_energy_counter(nvml, nvml->device("0000:66:00.0", -1), &why), nullptr);
  EXPECT_NE(why.find("no NVML energy counter"), std::string::npos) << why;
  missing["cuda:1"] = why;
  missing["cpu"] = "no RAPL counters on this machine";  // the host: listed, not in the total
  EnergyMeter meter({"cuda:0", "cuda:1"}, std::move(counters), std::move(missing));
  for (double t : {0.0, 2.0, 4.0}) {
    DeviceSample s;
    s.device = "cuda:1";
    s.time_s = t;
    s.power_w = t == 2.0 ? 200 : 100;  // 300 J + 300 J
    meter.add_sample(s);
  }
  const nlohmann::json energy = meter.finish(9000);
  // The fake's counter grows 125 J a reading: the meter read it at start and at finish.
  EXPECT_DOUBLE_EQ(energy["devices"][0]["joules"].get<double>(), 125.0) << energy.dump();
  EXPECT_EQ(energy["devices"][0]["source"], "NVML energy counter");
  EXPECT_DOUBLE_EQ(energy["devices"][1]["joules"].get<double>(), 600.0) << energy.dump();
  EXPECT_EQ(energy["devices"][1]["source"], "power samples");
  EXPECT_EQ(energy["devices"][2]["device"], "cpu");
  EXPECT_TRUE(energy["devices"][2]["joules"].is_null());
  EXPECT_DOUBLE_EQ(energy["joules"].get<double>(), 725.0);
  EXPECT_DOUBLE_EQ(energy["images_per_joule"].get<double>(), 9000.0 / 725.0);
}

TEST(Energy, AGpuWithoutCounterOrPowerMakesTheTotalUnknown) {
  EnergyMeter meter({"cuda:0"}, {}, {{"cuda:0", "no GPU telemetry: no NVIDIA driver found"}});
  const nlohmann::json energy = meter.finish(100);
  EXPECT_TRUE(energy["joules"].is_null());
  EXPECT_EQ(energy["devices"][0]["why"], "no GPU telemetry: no NVIDIA driver found");
}

}  // namespace
}  // namespace gpulab
