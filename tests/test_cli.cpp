// gpulab-cli as a user meets it: bad flags and missing data give one clear line and a non-zero
// exit code; a small training run and an evaluation work end to end.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "engine/run_record.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;
};

// env: an `env` command line prefix, e.g. "env -u OPENBLAS_CORETYPE".
Result cli(const std::string& args, const std::string& env = "") {
  const std::string command = env + " " + GPULAB_CLI_PATH + " " + args + " 2>&1";
  Result result;
  std::FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

void expect_rejected(const std::string& args, const std::string& mention) {
  const Result r = cli(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_NE(r.output.find(mention), std::string::npos) << args << "\n" << r.output;
  // One line, so scripts can show it as it is.
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
}

TEST(Cli, RejectsBadFlagsNamingThem) {
  expect_rejected("train --optimizer rmsprop", "--optimizer");
  expect_rejected("train --lr -1", "--lr");
  expect_rejected("train --batch 0", "--batch");
  expect_rejected("train --shuffle maybe", "--shuffle");
  expect_rejected("train --bogus", "--bogus");
  expect_rejected("train --model no-such-model --data-dir /nonexistent", "no-such-model");
  expect_rejected("train --init-weights /nonexistent.safetensors", "--init-weights");
  expect_rejected("frobnicate", "frobnicate");
}

TEST(Cli, MissingDataSaysHowToGetIt) {
  const Result r = cli("train --data-dir /nonexistent/mnist");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("/nonexistent/mnist"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scripts/setup"), std::string::npos) << r.output;
}

TEST(Cli, DevicesListsTheCpuAndSaysWhyThereIsNoGpu) {
  const Result r = cli("devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("cpu: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("OpenBLAS"), std::string::npos) << r.output;
  EXPECT_TRUE(r.output.find("no GPU: ") != std::string::npos || r.output.find("cuda:0") != std::string::npos);
}

// The OpenBLAS kernel set is named, and an AVX-512 CPU gets AVX-512 kernels unless the user
// chose others (app/blas_select.hpp).
TEST(Cli, DevicesNamesTheBlasKernels) {
  const Result forced = cli("devices", "env OPENBLAS_CORETYPE=Haswell");
  EXPECT_EQ(forced.exit_code, 0);
  EXPECT_NE(forced.output.find("kernels Haswell (AVX2), from OPENBLAS_CORETYPE=Haswell"),
            std::string::npos)
      << forced.output;
  const Result automatic = cli("devices", "env -u OPENBLAS_CORETYPE -u GPULAB_BLAS_AUTO");
  EXPECT_EQ(automatic.exit_code, 0);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    EXPECT_NE(automatic.output.find("(AVX-512)"), std::string::npos) << automatic.output;
  }
}

TEST(Cli, TrainsSavesAndEvaluates) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto weights = dir.path() / "w.safetensors";
  const Result train = cli("train --model lenet5 --epochs 3 --batch 32 --target-accuracy 80" + data +
                           " --out " + (dir.path() / "run").string() + " --save " + weights.string());
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("finished after 24 steps"), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("reached 80.00% test accuracy"), std::string::npos) << train.output;
  EXPECT_EQ(load_run(dir.path() / "run").status(), "finished");

  const Result eval = cli("eval --weights " + weights.string() + data);
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_NE(eval.output.find("64 test images"), std::string::npos) << eval.output;

  const Result wrong = cli("eval --weights " + weights.string() + " --model mlp" + data);
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.output.find("does not fit the model"), std::string::npos) << wrong.output;

  const Result steps = cli("train --model mlp --steps 5 --batch 64" + data + " --out " +
                           (dir.path() / "run2").string());
  ASSERT_EQ(steps.exit_code, 0) << steps.output;
  EXPECT_NE(steps.output.find("after 5 steps"), std::string::npos) << steps.output;
}

}  // namespace
}  // namespace gpulab
