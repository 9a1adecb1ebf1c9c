// Run records: written as the run goes, readable back, and intact after a SIGKILL.
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "engine/errors.hpp"
#include "engine/run_record.hpp"
#include "engine/session.hpp"
#include "engine/telemetry.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

size_t count_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(RunRecord, ARunWritesAFolderThatReadsBack) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(256, 1), test::synthetic_set(64, 2), dir.path()};
  RunRequest request;
  request.model = preset("lenet5");
  request.train.batch = 32;
  request.train.epochs = 3;
  request.out_dir = dir.path() / "run";
  request.telemetry_hz = 20;
  RunObserver observer;
  RunControl control;
  const RunSummary summary = execute_run(request, observer, control, &mnist);
  ASSERT_EQ(summary.status, RunStatus::Finished) << summary.message;

  const RunData run = load_run(request.out_dir);
  EXPECT_EQ(run.status(), "finished");
  EXPECT_EQ(run.info["model"]["name"], "lenet5");
  EXPECT_EQ(run.info["config"]["batch"], 32);
  EXPECT_EQ(run.info["parameters"], 61706);
  EXPECT_EQ(run.info["devices"][0]["id"], "cpu");
  EXPECT_EQ(run.info["summary"]["epochs"].size(), 3u);
  EXPECT_EQ(run.steps.size(), 24u);
  EXPECT_EQ(run.steps.back().step, 24);
  EXPECT_EQ(run.evals.size(), 3u);
  ASSERT_FALSE(run.samples.empty());
  EXPECT_EQ(run.samples[0].device, "cpu");
  EXPECT_GT(run.samples[0].mem_used_bytes, 0);
  // At least two samples a second, the first one at once.
  EXPECT_LT(run.samples[0].time_s, 0.2);
  EXPECT_GE(double(run.samples.size()), 2.0 * summary.wall_seconds - 1);
}

TEST(Telemetry, ARunShorterThanThePeriodStillHasItsStartAndEnd) {
  std::vector<std::unique_ptr<TelemetrySource>> sources;
  sources.push_back(std::make_unique<CpuTelemetry>());
  std::vector<DeviceSample> seen;
  std::mutex mutex;
  {
    TelemetrySampler sampler(std::move(sources), 0.5, std::chrono::steady_clock::now(),
                             [&](const DeviceSample& s) {
                               std::lock_guard lock(mutex);
                               seen.push_back(s);
                             });
    sampler.stop();  // at once, before a period (2 s) has passed
  }
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].device, "cpu");
  EXPECT_LE(seen[0].time_s, seen[1].time_s);
  EXPECT_LT(seen[1].time_s, 1.0);
}

TEST(RunRecord, FailedRunIsRecordedAsFailed) {
  test::TempDir dir;
  RunRequest request;
  request.model = preset("lenet5");
  request.data_dir = dir.path() / "no-data-here";
  request.out_dir = dir.path() / "run";
  RunObserver observer;
  RunControl control;
  const RunSummary summary = execute_run(request, observer, control);
  EXPECT_EQ(summary.status, RunStatus::Failed);
  const RunData run = load_run(request.out_dir);
  EXPECT_EQ(run.status(), "failed");
  EXPECT_NE(run.info["message"].get<std::string>().find("scripts/setup"), std::string::npos)
      << run.info["message"];
}

TEST(RunRecord, RefusesToOverwriteARun) {
  test::TempDir dir;
  RunRecorder first(dir.path() / "run", {{"name", "a"}});
  EXPECT_THROW(RunRecorder(dir.path() / "run", {{"name", "b"}}), RecordError);
}

TEST(RunRecord, CorruptRecordsNameTheFile) {
  test::TempDir dir;
  EXPECT_THROW(load_run(dir.path()), RecordError);
  std::ofstream(dir.path() / "run.json") << "{ broken";
  try {
    load_run(dir.path());
    FAIL();
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json"), std::string::npos);
  }
  std::ofstream(dir.path() / "run.json") << R"({"format":"gpulab-run/1","status":"finished"})";
  std::ofstream(dir.path() / "metrics.csv") << "step,epoch\n1,2\n";
  EXPECT_THROW(load_run(dir.path()), RecordError);
}

TEST(RunRecord, SigkillKeepsEveryFlushedStep) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(640, 1), test::synthetic_set(64, 2));
  const auto run_dir = dir.path() / "run";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(GPULAB_CLI_PATH, GPULAB_CLI_PATH, "train", "--model", "lenet5", "--epochs", "1000",
          "--batch", "32", "--threads", "1", "--data-dir", (dir.path() / "data").c_str(), "--out",
          run_dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_lines(run_dir / "metrics.csv") < 12 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  const RunData run = load_run(run_dir);
  EXPECT_EQ(run.status(), "running");  // it never got to say otherwise
  ASSERT_GE(run.steps.size(), 11u);
  for (size_t i = 0; i < run.steps.size(); ++i) EXPECT_EQ(run.steps[i].step, int64_t(i + 1));
  EXPECT_FALSE(run.samples.empty());
}

}  // namespace
}  // namespace gpulab
