// The path to the GPU in words (engine/devices/gpu_path): each machine a learner may have (no
// driver; a driver and no toolkit; a build without CUDA on purpose; a driver too old for the
// runtime) given as facts, and the lines gpulab-cli devices and scripts/setup show for it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "engine/devices/devices.hpp"
#include "engine/devices/gpu_path.hpp"
#include "gpulab/build_config.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

const std::string kNvccMissing = "nvcc was not found when gpulab was built";
const std::string kOffOnPurpose = "built without CUDA (GPULAB_CUDA=OFF)";

GpuPathFacts without_cuda(const std::string& why, bool driver, int driver_cuda) {
  GpuPathFacts facts;
  facts.no_cuda_why = why;
  facts.driver_found = driver;
  facts.driver_cuda = driver_cuda;
  return facts;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(GpuPath, NoDriverIsToldSoInOneLineAsBefore) {
  for (const std::string& why : {kNvccMissing, kOffOnPurpose}) {
    const std::vector<std::string> lines = no_cuda_build_lines(without_cuda(why, false, 0));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "no NVIDIA driver found (libcuda.so.1 is not installed)");
  }
}

TEST(GpuPath, ADriverWithoutTheToolkitSaysWhatToInstallForItsCuda) {
  const std::vector<std::string> lines =
      no_cuda_build_lines(without_cuda(kNvccMissing, true, 12020));
  ASSERT_EQ(lines.size(), 5u) << joined(lines);
  EXPECT_EQ(lines[0],
            "the NVIDIA driver (CUDA 12.2) is installed, but this build has no CUDA backend: "
            "nvcc was not found when gpulab was built");
  EXPECT_EQ(lines[1],
            "missing for GPU training: the CUDA toolkit (nvcc and cuBLAS) of CUDA 12, the driver's "
            "major release (a toolkit runs on any driver of its major release); Debian 12's own "
            "nvidia-cuda-toolkit is CUDA 11.8, too old");
  EXPECT_EQ(lines[2],
            "install it from NVIDIA's CUDA repository for Debian 12 (install its cuda-keyring "
            "package, then apt-get install cuda-toolkit-12-3)");
  EXPECT_NE(lines[3].find("scripts/setup again"), std::string::npos) << lines[3];
  EXPECT_EQ(
      lines[4],
      "meanwhile everything else works: training on the CPU, MPI ranks, labs, charts, Inside");
  // NVIDIA's repository for Debian 12 begins at 12.3; later drivers get their own release.
  for (auto [driver, package] :
       {std::pair{12000, "cuda-toolkit-12-3"}, std::pair{12080, "cuda-toolkit-12-8"},
        std::pair{13000, "cuda-toolkit-13-0"}})
    EXPECT_NE(joined(no_cuda_build_lines(without_cuda(kNvccMissing, true, driver)))
                  .find(std::string("apt-get install ") + package + ")"),
              std::string::npos)
        << driver;
}

TEST(GpuPath, ADriverOlderThanCuda12NeedsADriverFirst) {
  const std::vector<std::string> lines =
      no_cuda_build_lines(without_cuda(kNvccMissing, true, 11040));
  ASSERT_EQ(lines.size(), 5u) << joined(lines);
  EXPECT_EQ(lines[1],
            "missing for GPU training: a driver for CUDA 12 or newer (this one supports CUDA "
            "11.4) and the CUDA toolkit 12 or newer (nvcc and cuBLAS)");
  EXPECT_NE(lines[2].find("apt-get install cuda-drivers cuda-toolkit)"), std::string::npos);
}

TEST(GpuPath, ADriverOfUnknownCudaIsPointedAtNvidiaSmi) {
  const std::string text = joined(no_cuda_build_lines(without_cuda(kNvccMissing, true, 0)));
  EXPECT_NE(text.find("the NVIDIA driver is installed, but"), std::string::npos) << text;
  EXPECT_NE(text.find("no newer a major release than nvidia-smi's \"CUDA Version\""),
            std::string::npos)
      << text;
}

TEST(GpuPath, ABuildWithoutCudaOnPurposeSaysSoAndNotNvcc) {
  const std::vector<std::string> lines =
      no_cuda_build_lines(without_cuda(kOffOnPurpose, true, 12080));
  ASSERT_EQ(lines.size(), 5u) << joined(lines);
  EXPECT_EQ(lines[0],
            "the NVIDIA driver (CUDA 12.8) is installed, but this build has no CUDA backend: "
            "built without CUDA (GPULAB_CUDA=OFF)");
  EXPECT_EQ(joined(lines).find("nvcc was not found"), std::string::npos) << joined(lines);
  EXPECT_NE(lines[3].find("build gpulab from its source"), std::string::npos) << lines[3];
}

TEST(GpuPath, TheVersionsLineNamesTheBuildsCudaAndTheDrivers) {
  GpuPathFacts built;
  built.cuda_built = true;
  built.toolkit_version = "13.0.88";
  EXPECT_EQ(cuda_versions_line(built),
            "cuda: built with CUDA 13.0 (nvcc 13.0.88); NVIDIA driver: not found");
  built.driver_found = true;
  built.driver_cuda = 13000;
  EXPECT_EQ(cuda_versions_line(built),
            "cuda: built with CUDA 13.0 (nvcc 13.0.88); NVIDIA driver: supports CUDA 13.0");
  built.driver_cuda = 0;
  EXPECT_EQ(cuda_versions_line(built),
            "cuda: built with CUDA 13.0 (nvcc 13.0.88); NVIDIA driver: found, its CUDA version "
            "unknown");
  EXPECT_EQ(cuda_versions_line(without_cuda(kOffOnPurpose, true, 12020)),
            "cuda: not built in (built without CUDA (GPULAB_CUDA=OFF)); NVIDIA driver: supports "
            "CUDA 12.2");
}

TEST(GpuPath, ADriverTooOldForTheRuntimeNamesBothAndWhatToDo) {
  EXPECT_EQ(driver_too_old_reason("535.104.05", 12020, 13000),
            "the NVIDIA driver 535.104.05 is too old for CUDA 13.0, which gpulab was built with "
            "(it supports CUDA up to 12.2): update the driver (580 or newer; NVIDIA's CUDA "
            "repository for Debian 12: apt-get install cuda-drivers), or build gpulab with CUDA "
            "12 (cuda-toolkit-12-3)");
  // A driver older than CUDA 12 can only be updated; an unknown version is left out.
  EXPECT_EQ(driver_too_old_reason("", 11040, 12080),
            "the NVIDIA driver is too old for CUDA 12.8, which gpulab was built with (it supports "
            "CUDA up to 11.4): update the driver (525 or newer; NVIDIA's CUDA repository for "
            "Debian 12: apt-get install cuda-drivers)");
  // cudaGetDeviceCount's cudaErrorInsufficientDriver (35) says the same through no_gpu_reason.
  EXPECT_EQ(no_gpu_reason(35, "", true, "535.104.05", "13.0", 12020),
            driver_too_old_reason("535.104.05", 12020, 13000));
}

TEST(GpuPath, VersionsAreWrittenAsCudaWritesThem) {
  EXPECT_EQ(cuda_version_text(12020), "12.2");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
  EXPECT_EQ(cuda_version_text(0), "");
}

// This build's own reason, as every refusal of a GPU in it says.
TEST(GpuPath, ThisBuildsReasonIsTheConfiguredOne) {
  if (GPULAB_CUDA_ENABLED) {
    EXPECT_FALSE(gpu_path_facts(false, 0).toolkit_version.empty());
  } else {
    const std::string reason = no_cuda_backend_reason();
    EXPECT_TRUE(reason == "this build has no CUDA backend: " + kNvccMissing ||
                reason == "this build has no CUDA backend: " + kOffOnPurpose)
        << reason;
  }
}

// gpulab-cli devices names both versions, on this machine (no driver here: "not found").
TEST(GpuPath, DevicesNamesTheCudaVersionsAndTheDriver) {
  const test::CliResult r = test::run_command(std::string(GPULAB_CLI_PATH) + " devices");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const DeviceList devices = list_devices();
  const std::string line =
      cuda_versions_line(gpu_path_facts(devices.driver_found, devices.driver_cuda));
  EXPECT_NE(r.output.find("\n" + line + "\n"), std::string::npos) << r.output;
  if (GPULAB_CUDA_ENABLED) {
    EXPECT_EQ(line.rfind("cuda: built with CUDA ", 0), 0u) << line;
  }
}

// gpulab-cli devices where a driver (the stand-in libcuda.so.1, supporting CUDA 12.2) is found: the
// versions line names it. A build without CUDA says what is missing, what to install and that the
// rest works, in the lines no_cuda_build_lines gives, under "no GPU: ". A build with CUDA 13 finds
// that driver too old (cudaErrorInsufficientDriver), says both versions and what to do, and
// refuses a GPU run with it before any data is read.
TEST(GpuPath, DevicesOnAMachineWithADriverSaysWhatIsMissing) {
  const std::string with_driver = "env LD_LIBRARY_PATH=" GPULAB_FAKE_DRIVER_DIR
                                  " FAKE_CUDA_DRIVER_VERSION=12020 " GPULAB_CLI_PATH;
  const test::CliResult r = test::run_command(with_driver + " devices");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("; NVIDIA driver: supports CUDA 12.2\n"), std::string::npos) << r.output;
  const GpuPathFacts facts = gpu_path_facts(true, 12020);
  if (GPULAB_CUDA_ENABLED) {
    const int major = std::atoi(facts.toolkit_version.c_str());
    if (major < 13)
      GTEST_SKIP() << "built with CUDA " << facts.toolkit_version << ", which 12.2 runs";
    const int minor =
        std::atoi(facts.toolkit_version.c_str() + facts.toolkit_version.find('.') + 1);
    const std::string reason = driver_too_old_reason("", 12020, major * 1000 + minor * 10);
    EXPECT_NE(r.output.find("\nno GPU: " + reason + "\n"), std::string::npos) << r.output;
    const test::CliResult train =
        test::run_command(with_driver + " train --device cuda:0 --data-dir /nonexistent");
    EXPECT_EQ(train.exit_code, 1) << train.output;
    EXPECT_NE(train.output.find("--device cuda:0: no GPU: " + reason), std::string::npos)
        << train.output;
    return;
  }
  const std::vector<std::string> lines = no_cuda_build_lines(facts);
  std::string expected = "no GPU: " + lines[0] + "\n";
  for (size_t i = 1; i < lines.size(); ++i) expected += "  " + lines[i] + "\n";
  EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nvcc was not found at configure time"), std::string::npos) << r.output;
}

// scripts/setup says the same where a driver is found (after its build, from that build's
// gpulab-cli devices), and nothing of GPUs where none is.
TEST(GpuPath, SetupSaysTheSameWhereADriverIsFound) {
  const std::string driver =
      "env LD_LIBRARY_PATH=" GPULAB_FAKE_DRIVER_DIR " FAKE_CUDA_DRIVER_VERSION=12020 ";
  const std::string setup = "GPULAB_BUILD_DIR=" GPULAB_BINARY_DIR " bash " GPULAB_SOURCE_DIR
                            "/scripts/setup --no-packages --no-data --no-build";
  const test::CliResult devices = test::run_command(driver + GPULAB_CLI_PATH " devices");
  const test::CliResult said = test::run_command(driver + setup);
  ASSERT_EQ(said.exit_code, 0) << said.output;
  std::string expected;
  std::istringstream lines(devices.output);
  bool in_reason = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cuda: ", 0) == 0) expected += "setup: GPU: " + line.substr(6) + "\n";
    in_reason = line.rfind("no GPU: ", 0) == 0 || (in_reason && line.rfind("  ", 0) == 0);
    if (line.rfind("no GPU: ", 0) == 0)
      expected += "setup: GPU: none usable: " + line.substr(8) + "\n";
    else if (in_reason)
      expected += "setup:   " + line.substr(2) + "\n";
  }
  EXPECT_NE(said.output.find(expected), std::string::npos) << said.output << "\n---\n" << expected;
  EXPECT_NE(expected.find("NVIDIA driver: supports CUDA 12.2"), std::string::npos) << expected;
  const test::CliResult no_driver = test::run_command(setup);
  ASSERT_EQ(no_driver.exit_code, 0) << no_driver.output;
  EXPECT_EQ(no_driver.output.find("GPU"), std::string::npos) << no_driver.output;
}

// What the hardware is (issue 41, item 11): the CPU's clock and cores read from the system's
// own text, a GPU's lanes and memory bandwidth worked out by hand from what CUDA reports.
const char* const kTwoPackagesOfTwoCoresWithTwoThreads =
    "processor\t: 0\nphysical id\t: 0\ncore id\t\t: 0\ncpu MHz\t\t: 2100.000\n\n"
    "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\ncpu MHz\t\t: 2200.000\n\n"
    "processor\t: 2\nphysical id\t: 0\ncore id\t\t: 0\ncpu MHz\t\t: 2300.000\n\n"
    "processor\t: 3\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 4\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 5\nphysical id\t: 1\ncore id\t\t: 1\n";

TEST(Hardware, TheCpuClockIsCpufreqsPeakElseTheClockOfTheMomentElseUnknown) {
  const CpuClock peak = cpu_clock_from("3700000\n", kTwoPackagesOfTwoCoresWithTwoThreads);
  EXPECT_DOUBLE_EQ(peak.mhz, 3700);  // 3,700,000 kHz
  EXPECT_TRUE(peak.peak);
  const CpuClock now = cpu_clock_from("", kTwoPackagesOfTwoCoresWithTwoThreads);
  EXPECT_DOUBLE_EQ(now.mhz, 2100);  // the first "cpu MHz"
  EXPECT_FALSE(now.peak);
  const CpuClock unknown = cpu_clock_from("", "processor\t: 0\nmodel name\t: Some ARM\n");
  EXPECT_EQ(unknown.mhz, 0);
  // A key that only begins like "cpu MHz" is not it.
  EXPECT_EQ(cpu_clock_from("", "cpu MHz dynamic\t: 900\n").mhz, 0);
}

TEST(Hardware, PhysicalCoresAreDistinctPackageAndCorePairs) {
  // Packages 0 and 1, cores 0 and 1 in each: four, whatever the six logical CPUs.
  EXPECT_EQ(physical_cores_from(kTwoPackagesOfTwoCoresWithTwoThreads), 4);
  EXPECT_EQ(physical_cores_from("processor\t: 0\nmodel name\t: Some ARM\n"), 0);
}

TEST(Hardware, TheCpuIsDescribedInCoresAndClockAndSaysUnknownClearly) {
  CpuInfo cpu;
  cpu.logical_cores = 6;
  cpu.physical_cores = 4;
  cpu.clock_mhz = 3700;
  cpu.clock_is_peak = true;
  EXPECT_EQ(cpu_hardware_text(cpu), "6 logical cores (4 physical), up to 3.70 GHz");
  cpu.clock_is_peak = false;
  cpu.clock_mhz = 2100;
  EXPECT_EQ(cpu_hardware_text(cpu), "6 logical cores (4 physical), at 2.10 GHz now");
  cpu.physical_cores = 0;
  cpu.clock_mhz = 0;
  EXPECT_EQ(cpu_hardware_text(cpu), "6 logical cores, clock unknown");
}

TEST(Hardware, AGpusLanesAndBandwidthAreWorkedOutFromWhatCudaReports) {
  GpuInfo gpu;  // an H100 SXM as cudaGetDeviceProperties describes it
  gpu.memory_bytes = 80.0 * (1 << 30);
  gpu.compute_major = 9;
  gpu.compute_minor = 0;
  gpu.sm_count = 132;
  gpu.clock_mhz = 1980;
  gpu.memory_clock_mhz = 2619;
  gpu.memory_bus_bits = 5120;
  // Two transfers per clock over 5120 bits (640 bytes): 2 x 2619e6 x 640 = 3352.32e9 bytes/s.
  EXPECT_DOUBLE_EQ(memory_bandwidth_bytes_per_second(gpu), 2 * 2619e6 * 640);
  EXPECT_EQ(fp32_lanes_per_sm(9, 0), 128);
  EXPECT_EQ(fp32_lanes_per_sm(8, 0), 64);   // the A100
  EXPECT_EQ(fp32_lanes_per_sm(8, 9), 128);  // a consumer Ada card
  EXPECT_EQ(fp32_lanes_per_sm(3, 5), 0);    // not in the table: no lanes are claimed
  // 132 x 128 = 16896 lanes.
  EXPECT_EQ(gpu_hardware_text(gpu),
            "132 SMs x 128 FP32 lanes = 16896 lanes at up to 1.98 GHz; 80.0 GiB at 3352 GB/s "
            "(5120-bit bus at 2.62 GHz)");
  GpuInfo unknown;
  unknown.memory_bytes = 8.0 * (1 << 30);
  EXPECT_EQ(memory_bandwidth_bytes_per_second(unknown), 0);
  EXPECT_EQ(gpu_hardware_text(unknown),
            "SM count unknown, clock unknown; 8.0 GiB, bandwidth unknown");
}

// gpulab-cli devices says it under the cpu line, in the same words.
TEST(Hardware, DevicesShowsTheCpusCoresAndClock) {
  const test::CliResult r = test::run_command(std::string(GPULAB_CLI_PATH) + " devices");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string hardware = "\n  hardware: " + cpu_hardware_text(cpu_info()) + "\n";
  const size_t at = r.output.find(hardware);
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\n'), at) << "right under the cpu line:\n" << r.output;
  EXPECT_NE(hardware.find(std::to_string(cpu_info().logical_cores) + " logical cores"),
            std::string::npos);
}

}  // namespace
}  // namespace gpulab
