// scripts/gpu_check_report.py, the verdicts scripts/gpu-check writes into its summary, run on
// GoogleTest output written here, and the single stage's dry run over this build: no GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

// Why the report script cannot run here (no python3), empty when it can.
std::string why_no_python() {
  return std::system("python3 -c '' >/dev/null 2>&1") == 0
             ? ""
             : "python3 is not installed: scripts/gpu_check_report.py needs it (scripts/setup "
               "installs it)";
}

// gpu_check_report.py gtest NAME LOG STATUS over `log`'s text.
test::CliResult report_on(const std::string& log, int status) {
  const test::TempDir dir;
  const auto path = dir.path() / "suite.log";
  std::ofstream(path) << log;
  return test::run_command("python3 " GPULAB_SOURCE_DIR
                           "/scripts/gpu_check_report.py gtest suite " +
                           path.string() + " " + std::to_string(status));
}

TEST(GpuCheckReport, AFailedParameterizedTestIsCountedAndNamed) {
  if (const std::string why = why_no_python(); !why.empty()) GTEST_SKIP() << why;
  // GoogleTest ends a failed value-parameterized test's line with ", where GetParam() = ...".
  const std::string log =
      "[ RUN      ] Sizes/ShapeTest.Works/0\n"
      "/x/test.cpp:10: Failure\n"
      "Expected equality of these values:\n"
      "[  FAILED  ] Sizes/ShapeTest.Works/0, where GetParam() = 4 (3 ms)\n"
      "[ RUN      ] Sizes/ShapeTest.Works/1\n"
      "[       OK ] Sizes/ShapeTest.Works/1 (0 ms)\n"
      "[ RUN      ] Plain.Test\n"
      "[       OK ] Plain.Test (1 ms)\n";
  const test::CliResult report = report_on(log, 1);
  EXPECT_EQ(report.exit_code, 1) << report.output;
  EXPECT_NE(report.output.find("suite: FAILED: 2 passed, 1 failed, 0 skipped"), std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("failed: Sizes/ShapeTest.Works/0: Expected equality"),
            std::string::npos)
      << report.output;
}

TEST(GpuCheckReport, PassingTestsPass) {
  if (const std::string why = why_no_python(); !why.empty()) GTEST_SKIP() << why;
  const std::string log =
      "[ RUN      ] Plain.Test\n"
      "[       OK ] Plain.Test (1 ms)\n"
      "[ RUN      ] Typed/0.Works\n"
      "[       OK ] Typed/0.Works (2 ms)\n";
  const test::CliResult report = report_on(log, 0);
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("suite: pass: 2 passed, 0 failed, 0 skipped"), std::string::npos)
      << report.output;
}

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The single stage walked without a GPU against this build (as the GPU machine would run it, less
// what needs a GPU): every step has its line, in the order of value per second, each GPU step
// says it did not run, and the results folder keeps to the device's file limit. ctest's TIMEOUT
// for this test (120 s) is the dry run's promise.
TEST(GpuCheckSingle, ADryRunWalksEveryStepInOrderWithinTheFileLimit) {
  const test::TempDir dir;
  const auto out = dir.path() / "out";
  const test::CliResult run = test::run_command(
      "GPULAB_BUILD_DIR=" GPULAB_BINARY_DIR " bash " GPULAB_SOURCE_DIR
      "/scripts/gpu-check --stage single --dry-run --out " +
      out.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;

  std::ifstream in(out / "summary.txt");
  const std::string summary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::string> lines = lines_of(summary);
  // Each step's line, in order; the GPU steps are marked as not run.
  const std::vector<std::pair<std::string, bool>> steps = {
      {"machine: ", false},        {"configure: ", false},     {"build: ", false},
      {"devices: ", false},        {"kernels: ", true},        {"epoch: ", true},
      {"telemetry: ", true},       {"gpu_vs_pytorch: ", true}, {"backend: ", true},
      {"backend-fault: ", true},   {"nvml: ", true},           {"labs-gpu: ", true},
      {"inside-gpu: ", true},      {"data-parallel: ", true},  {"mpi-ranks: ", true},
      {"racecheck: ", true},       {"memcheck: ", true},       {"dry run: every step walked", false},
      {"stage single: pass", false}};
  size_t at = 0;
  for (const auto& [step, needs_gpu] : steps) {
    const std::string prefix = "gpu-check: " + step;
    while (at < lines.size() && lines[at].rfind(prefix, 0) != 0) ++at;
    ASSERT_LT(at, lines.size()) << "no line for \"" << step << "\" after the one before it:\n"
                                << summary;
    if (needs_gpu) {
      EXPECT_NE(lines[at].find("not run: no GPU"), std::string::npos) << lines[at];
    }
    ++at;
  }
  EXPECT_EQ(summary.find("WOULD FAIL"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("TOO MANY FILES"), std::string::npos) << summary;

  // At most 7 files and no folder: the device brings back 8 files, two folders down.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    EXPECT_TRUE(entry.is_regular_file()) << entry.path();
    ++files;
  }
  EXPECT_LE(files, 7);
  EXPECT_TRUE(std::filesystem::is_regular_file(out / "machine.txt"));
  const test::CliResult logs =
      test::run_command("tar tzf " + (out / "logs.tar.gz").string());
  EXPECT_EQ(logs.exit_code, 0) << logs.output;
  EXPECT_NE(logs.output.find("logs/devices.log"), std::string::npos) << logs.output;
}

TEST(GpuCheckSingle, ADryRunIsOnlyForTheSingleStage) {
  const test::TempDir dir;
  const test::CliResult run = test::run_command("bash " GPULAB_SOURCE_DIR
                                                "/scripts/gpu-check --stage test --dry-run --out " +
                                                (dir.path() / "out").string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--dry-run is for --stage single"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace gpulab
