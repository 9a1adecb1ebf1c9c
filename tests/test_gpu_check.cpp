// scripts/gpu_check_report.py, the verdicts scripts/gpu-check writes into its summary, run on
// GoogleTest output written here: no GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace gpulab
