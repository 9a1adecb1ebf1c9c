// Run records: written as the run goes, readable back, and intact after a SIGKILL.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <mutex>
#include <thread>

#include "damaged_runs.hpp"
#include "engine/analysis/chart_builder.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/records/record_csv.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/hardware_share.hpp"
#include "engine/session/session.hpp"
#include "engine/telemetry/telemetry.hpp"
#include "engine/training/setting_bounds.hpp"
#include "output_checks.hpp"
#include "recorded_runs.hpp"
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

// How much of a step is matrix products (issue 41, item 12): every CPU step records its time in
// the convolution and fully connected kernels, within its forward and backward time, and the
// run's share is those summed over the steps' forward and backward, recomputed here by hand.
TEST(RunRecord, ACpuRunRecordsItsMatrixProductsWithinForwardAndBackward) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(256, 1), test::synthetic_set(64, 2), dir.path()};
  RunRequest request;
  request.model = preset("lenet5");
  request.train.batch = 32;
  request.out_dir = dir.path() / "run";
  RunObserver observer;
  RunControl control;
  ASSERT_EQ(execute_run(request, observer, control, &mnist).status, RunStatus::Finished);

  std::ifstream metrics(request.out_dir / "metrics.csv");
  std::string header;
  std::getline(metrics, header);
  EXPECT_TRUE(header.ends_with(",allreduce_hidden_ms,matmul_ms")) << header;
  const RunData run = load_run(request.out_dir);
  ASSERT_EQ(run.steps.size(), 8u);
  double matmul = 0, compute = 0;
  for (const StepMetrics& s : run.steps) {
    ASSERT_TRUE(std::isfinite(s.times.matmul_ms)) << "step " << s.step;
    EXPECT_GE(s.times.matmul_ms, 0) << "step " << s.step;
    // Timed inside the forward and backward timers: a part of them, never more.
    EXPECT_LE(s.times.matmul_ms, s.times.forward_ms + s.times.backward_ms) << "step " << s.step;
    matmul += s.times.matmul_ms;
    compute += s.times.forward_ms + s.times.backward_ms;
  }
  const MatmulShare share = matmul_share(run);
  EXPECT_EQ(share.steps, 8);
  EXPECT_DOUBLE_EQ(share.matmul_ms, matmul);
  EXPECT_DOUBLE_EQ(share.compute_ms, compute);
  EXPECT_DOUBLE_EQ(share.percent, 100 * matmul / compute);
  EXPECT_LE(share.percent, 100);

  // Two replicas: the step's forward, backward and matrix products are one replica's (the step's
  // critical path), so the part stays within its whole.
  request.backend.replicas = 2;
  request.out_dir = dir.path() / "two";
  ASSERT_EQ(execute_run(request, observer, control, &mnist).status, RunStatus::Finished);
  for (const StepMetrics& s : load_run(request.out_dir).steps) {
    ASSERT_TRUE(std::isfinite(s.times.matmul_ms)) << "step " << s.step;
    EXPECT_LE(s.times.matmul_ms, s.times.forward_ms + s.times.backward_ms) << "step " << s.step;
  }
}

TEST(RunRecord, TheMatrixProductsShareIsWorkedOutFromTheStepsThatMeasuredIt) {
  test::TempDir dir;
  // Two CPU steps: forward 4 + backward 6 with 7 in matrix products, 2 + 3 with 3; a third step
  // without the column's value (as a GPU step) does not count.
  std::ofstream(dir.path() / "metrics.csv") << metrics_csv_header() << "\n"
                                            << "1,1,0.1,2.3,0.1,640,0.05,12,1,0,4,6,0,1,0,7\n"
                                            << "2,1,0.2,2.1,0.2,640,0.05,7,1,0,2,3,0,1,0,3\n"
                                            << "3,1,0.3,2.0,0.2,640,0.05,7,1,0,2,3,0,1,0,\n";
  RunData run;
  run.steps = read_metrics_csv(dir.path() / "metrics.csv");
  ASSERT_EQ(run.steps.size(), 3u);
  EXPECT_TRUE(std::isnan(run.steps[2].times.matmul_ms));
  const MatmulShare share = matmul_share(run);
  EXPECT_EQ(share.steps, 2);
  EXPECT_DOUBLE_EQ(share.matmul_ms, 10);   // 7 + 3
  EXPECT_DOUBLE_EQ(share.compute_ms, 15);  // 4 + 6 + 2 + 3
  EXPECT_DOUBLE_EQ(share.percent, 100.0 * 10 / 15);
  EXPECT_EQ(matmul_share_text(share),
            "67 % of forward and backward in matrix products (convolutions and GEMMs): 5.00 of "
            "7.50 ms a step");
  // The row written for a step reads back the same.
  EXPECT_EQ(metrics_csv_row(run.steps[0]), "1,1,0.1,2.3,0.1,640,0.0500000007,12,1,0,4,6,0,1,0,7\n");

  // A record from before the column (and one before allreduce_hidden_ms) still loads, and says
  // nothing of matrix products rather than 0 %.
  std::ofstream(dir.path() / "metrics.csv", std::ios::trunc) << test::kGoodMetrics;
  run.steps = read_metrics_csv(dir.path() / "metrics.csv");
  ASSERT_EQ(run.steps.size(), 2u);
  const MatmulShare old = matmul_share(run);
  EXPECT_EQ(old.steps, 0);
  EXPECT_TRUE(std::isnan(old.percent));
  EXPECT_EQ(matmul_share_text(old), "");
  const std::string good = test::kGoodMetrics;
  std::ofstream(dir.path() / "metrics.csv", std::ios::trunc)
      << good.substr(0, good.find(",allreduce_hidden_ms")) << "\n"
      << "1,1,0.1,2.3,0.1,640,0.05,10,1,0,4,4,0,1\n";
  run.steps = read_metrics_csv(dir.path() / "metrics.csv");
  ASSERT_EQ(run.steps.size(), 1u);
  EXPECT_TRUE(std::isnan(matmul_share(run).percent));
}

// A cancel that cannot wait for its step (the CLI's SIGTERM after its grace) ends the record as
// cancelled from another thread; the run's later writes, its end included, leave it so. Before,
// a run stuck in a step and then killed kept "running" forever.
TEST(RunRecord, ARecordEndedAsCancelledFromAnotherThreadStaysCancelled) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(64, 1), test::synthetic_set(16, 2), dir.path()};
  RunRequest request;
  request.model = preset("mlp");
  request.train.batch = 16;
  request.train.max_steps = 6;
  request.out_dir = dir.path() / "run";
  struct EndAtStepThree : RunObserver {
    RunControl* control = nullptr;
    bool ended = false;
    void on_step(const StepMetrics& m) override {
      if (m.step == 3) ended = control->record_cancel_now("cancelled by SIGTERM during a step");
    }
  } observer;
  RunControl control;
  observer.control = &control;
  EXPECT_FALSE(control.record_cancel_now("before the run"));  // no record open yet
  const RunSummary summary = execute_run(request, observer, control, &mnist);
  EXPECT_TRUE(observer.ended);
  EXPECT_EQ(summary.status, RunStatus::Finished);  // the run went on: its record did not
  const RunData run = load_run(request.out_dir);
  EXPECT_EQ(run.status(), "cancelled");
  EXPECT_EQ(run.info["message"], "cancelled by SIGTERM during a step");
  EXPECT_FALSE(control.record_cancel_now("after the run"));  // the record is closed
}

// A learning rate changed while a run trains is in its record: metrics.csv's lr column from the
// step it took effect, run.json's "lr_changes", and the marks of a chart drawn from the record
// read back.
TEST(RunRecord, ALearningRateChangedWhileItTrainsIsRecordedAndMarked) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(256, 1), test::synthetic_set(64, 2), dir.path()};
  RunRequest request;
  request.model = preset("mlp");
  request.train.batch = 32;  // 8 steps an epoch
  request.train.epochs = 2;
  request.train.optimizer.lr = 0.001f;
  request.out_dir = dir.path() / "run";
  RunControl control;
  struct ChangesAtStep3 : RunObserver {
    RunControl* control = nullptr;
    std::vector<LrChange> heard;
    void on_step(const StepMetrics& m) override {
      if (m.step == 3) control->request_lr(0.25);
    }
    void on_lr_change(const LrChange& c) override { heard.push_back(c); }
  } observer;
  observer.control = &control;
  const RunSummary summary = execute_run(request, observer, control, &mnist);
  ASSERT_EQ(summary.status, RunStatus::Finished) << summary.message;
  ASSERT_EQ(observer.heard.size(), 1u);
  EXPECT_EQ(observer.heard[0].step, 4);

  const RunData run = load_run(request.out_dir);
  ASSERT_EQ(run.steps.size(), 16u);
  for (const StepMetrics& step : run.steps)
    EXPECT_EQ(step.lr, step.step < 4 ? 0.001f : 0.25f) << "metrics.csv, step " << step.step;
  ASSERT_TRUE(run.info["lr_changes"].is_array());
  ASSERT_EQ(run.info["lr_changes"].size(), 1u);
  EXPECT_EQ(run.info["lr_changes"][0]["step"], 4);
  EXPECT_EQ(run.info["lr_changes"][0]["epoch"], 1);
  EXPECT_EQ(run.info["lr_changes"][0]["lr"], 0.25);
  EXPECT_EQ(run.info["config"]["lr"].get<float>(), 0.001f) << "the run's own setting is kept";
  ASSERT_EQ(run.lr_changes.size(), 1u);
  EXPECT_EQ(run.lr_changes[0].step, 4);
  EXPECT_EQ(run.lr_changes[0].time_s, run.info["lr_changes"][0]["time_s"].get<double>());

  for (ChartKind kind : {ChartKind::Loss, ChartKind::Accuracy, ChartKind::StepTime,
                         ChartKind::Throughput, ChartKind::Gpu}) {
    ChartOptions options;
    options.x = XAxis::Step;
    const Chart chart = build_chart(kind, {&run}, options);
    ASSERT_EQ(chart.marks.size(), 1u) << chart_kind_name(kind);
    EXPECT_EQ(chart.marks[0].x, 4.0) << chart_kind_name(kind);
    EXPECT_EQ(chart.marks[0].label, "lr 0.25");
    EXPECT_EQ(chart.marks[0].run, 0);
  }
  EXPECT_TRUE(build_chart(ChartKind::Speedup, {&run}, ChartOptions{}).marks.empty())
      << "bars have no x axis to mark";
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
  std::vector<DeviceSample> cpu;
  for (const DeviceSample& s : seen)
    if (s.device == "cpu") cpu.push_back(s);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(seen[0].device, "cpu");
  EXPECT_LE(cpu[0].time_s, cpu[1].time_s);
  EXPECT_LT(cpu[1].time_s, 1.0);
}

// Spins on the calling thread until it has used `seconds` of CPU time (not wall time: a loaded
// machine may give it less than a core).
void burn_cpu_seconds(double seconds, clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  const double end = now.tv_sec + now.tv_nsec * 1e-9 + seconds;
  volatile unsigned long spin = 0;
  do {
    for (int i = 0; i < 100000; ++i) spin = spin + 1;
    clock_gettime(clock, &now);
  } while (now.tv_sec + now.tv_nsec * 1e-9 < end);
}

// Another program's CPU time shows as outside load; this process's own work shows as its own.
TEST(Telemetry, OtherProgramsLoadingTheCpuAreMeasuredApartFromThisProcess) {
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  CpuTelemetry telemetry;
  std::vector<DeviceSample> warmup;
  telemetry.sample(warmup);
  auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    burn_cpu_seconds(0.6, CLOCK_PROCESS_CPUTIME_ID);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::vector<DeviceSample> samples;
  telemetry.sample(samples);
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].device, kOtherProgramsDevice);
  // 0.6 CPU seconds over wall_s seconds of `cores` cores, less the clock ticks' rounding.
  EXPECT_GE(samples[1].util_percent, 0.8 * 100.0 * 0.6 / (wall_s * cores)) << wall_s << " s";

  start = std::chrono::steady_clock::now();
  std::thread([] { burn_cpu_seconds(0.5, CLOCK_THREAD_CPUTIME_ID); }).join();
  std::vector<DeviceSample> after;
  telemetry.sample(after);
  wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_GE(after[0].util_percent, 0.8 * 100.0 * 0.5 / (wall_s * cores)) << wall_s << " s";
}

// The other processes of the run on this machine (an MPI job's ranks) are the run's own CPU
// time, not outside load. Two samplers watch the same moments, one told of the peer and one not:
// whatever else loads the machine meanwhile shows in both alike.
TEST(Telemetry, TheRunsOtherProcessesAreItsOwnLoadNotOutsideLoad) {
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  int go[2], done[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t peer = fork();
  ASSERT_GE(peer, 0);
  if (peer == 0) {  // burns when told, then stays until told to end (so its counters stay readable)
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    burn_cpu_seconds(0.6, CLOCK_PROCESS_CPUTIME_ID);
    if (write(done[1], "x", 1) != 1) _exit(1);
    if (read(go[0], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  CpuTelemetry with_peer({int(peer)}), alone;
  std::vector<DeviceSample> warmup;
  with_peer.sample(warmup);
  alone.sample(warmup);
  const auto start = std::chrono::steady_clock::now();
  char c = 'x';
  ASSERT_EQ(write(go[1], &c, 1), 1);
  ASSERT_EQ(read(done[0], &c, 1), 1);
  std::vector<DeviceSample> seen_with, seen_alone;
  with_peer.sample(seen_with);
  alone.sample(seen_alone);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int status = 0;
  waitpid(peer, &status, 0);
  for (int fd : {go[0], go[1], done[0], done[1]}) close(fd);
  ASSERT_EQ(seen_with.size(), 2u);
  ASSERT_EQ(seen_alone.size(), 2u);
  // 0.6 CPU seconds over wall_s seconds of `cores` cores, less the clock ticks' rounding: in the
  // run's own line when told of the peer, in the others' line when not.
  const double peer_share = 0.8 * 100.0 * 0.6 / (wall_s * cores);
  EXPECT_GE(seen_with[0].util_percent - seen_alone[0].util_percent, peer_share) << wall_s << " s";
  EXPECT_GE(seen_alone[1].util_percent - seen_with[1].util_percent, peer_share) << wall_s << " s";
  EXPECT_GT(seen_with[0].mem_used_bytes, seen_alone[0].mem_used_bytes);
}

TEST(RunRecord, OutsideLoadIsSummarisedAndFlaggedAtHalfACore) {
  test::TempDir dir;
  {
    RunRecorder recorder(dir.path() / "run", {{"name", "loaded"}});
    for (double percent : {40.0, 60.0}) {
      DeviceSample s;
      s.device = kOtherProgramsDevice;
      s.util_percent = percent;
      recorder.on_sample(s);
    }
    RunSummary finished;
    finished.status = RunStatus::Finished;
    recorder.finish(finished);
  }
  const RunData run = load_run(dir.path() / "run");
  const auto& load = run.info["outside_load"];
  EXPECT_DOUBLE_EQ(load["mean_percent"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(load["max_percent"].get<double>(), 60.0);
  const int cores = load["cores"].get<int>();
  EXPECT_DOUBLE_EQ(load["mean_cores"].get<double>(), 0.5 * cores);
  EXPECT_TRUE(load["under_load"].get<bool>());  // half of every core is at least half a core
  const auto caveats = run_caveats(run);
  ASSERT_EQ(caveats.size(), 1u);
  EXPECT_NE(caveats[0].find("measured under outside load"), std::string::npos) << caveats[0];

  EXPECT_FALSE(outside_load_json(10.0, 20.0, 5, 4)["under_load"].get<bool>());  // 0.4 cores
  EXPECT_TRUE(outside_load_json(12.5, 20.0, 5, 4)["under_load"].get<bool>());   // 0.5 cores
}

TEST(RunRecord, ARunStartedBesideOthersOnItsHardwareSaysSo) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(64, 1), test::synthetic_set(16, 2), dir.path()};
  RunRequest request;
  request.model = preset("mlp");
  request.train.batch = 32;
  request.train.max_steps = 2;
  request.train.epochs = 0;
  request.out_dir = dir.path() / "run";
  request.concurrent_with = {"lenet5 cpu, 2 threads"};
  RunObserver observer;
  RunControl control;
  ASSERT_EQ(execute_run(request, observer, control, &mnist).status, RunStatus::Finished);
  const RunData run = load_run(request.out_dir);
  EXPECT_EQ(run.info["shared_hardware"]["concurrent_with"][0], "lenet5 cpu, 2 threads");
  const auto caveats = run_caveats(run);
  ASSERT_GE(caveats.size(), 1u);
  EXPECT_EQ(caveats[0], "shared its hardware with lenet5 cpu, 2 threads while it ran");
}

TEST(HardwareShare, RunsShareTheCpuAGpuOrBoth) {
  EXPECT_TRUE(share_hardware("cpu", "cpu"));
  EXPECT_TRUE(share_hardware("cpu", "cuda:0"));  // the CPU feeds the GPU
  EXPECT_TRUE(share_hardware("cuda:0", "cuda:0"));
  EXPECT_TRUE(share_hardware("cuda:0,1", "cuda:1"));
  EXPECT_TRUE(share_hardware("cuda:0x2", "cuda:0"));
  EXPECT_TRUE(share_hardware("cuda:all", "cuda:3"));
  EXPECT_TRUE(share_hardware("cuda", "cuda:0"));
  EXPECT_FALSE(share_hardware("cuda:0", "cuda:1"));
  EXPECT_FALSE(share_hardware("cuda:0x2,1x2", "cuda:2"));
}

TEST(HardwareShare, AFairRaceRunsWhatSharesHardwareOneAfterAnotherInOrder) {
  using Waves = std::vector<std::vector<size_t>>;
  EXPECT_EQ(race_waves({"cpu", "cpu", "cpu"}, false), (Waves{{0}, {1}, {2}}));
  EXPECT_EQ(race_waves({"cpu", "cpu", "cpu"}, true), (Waves{{0, 1, 2}}));
  EXPECT_EQ(race_waves({"cuda:0", "cuda:1", "cpu", "cuda:0"}, false), (Waves{{0, 1}, {2}, {3}}));
  EXPECT_EQ(race_waves({"cuda:0", "cuda:0", "cuda:1"}, false), (Waves{{0, 2}, {1}}));
  EXPECT_TRUE(race_waves({}, false).empty());
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

// The claim on a full disk used to create run.json, fail to write it and leave it empty: a record
// no reader loads, and a folder every later run refuses. Now it is whole or absent.
TEST(RunRecord, AFullDiskAtTheStartLeavesNoEmptyRecord) {
  test::SmallDisk disk(64 * 1024);
  if (!disk.skip_reason().empty()) GTEST_SKIP() << disk.skip_reason();
  disk.fill();
  try {
    RunRecorder record(disk.path() / "run", {{"name", "a"}});
    ADD_FAILURE() << "a run claimed a folder on a full disk";
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: write failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(disk.path() / "run" / "run.json"));
  EXPECT_FALSE(std::filesystem::exists(disk.path() / "run"));  // the folder it made, emptied
  disk.free();
  RunRecorder again(disk.path() / "run", {{"name", "a"}});  // the folder is free for a run
  EXPECT_EQ(load_run(disk.path() / "run").status(), "running");
}

// A disk that fills while the run goes: each later write fails with the reason, and run.json
// stays the last whole state, loadable.
TEST(RunRecord, AFullDiskLaterKeepsTheLastWholeRecord) {
  test::SmallDisk disk(128 * 1024);
  if (!disk.skip_reason().empty()) GTEST_SKIP() << disk.skip_reason();
  const auto dir = disk.path() / "run";
  RunRecorder record(dir, {{"name", "a"}});
  StepMetrics step;
  step.step = 1;
  step.loss = 2;
  record.on_step(step);
  const std::string whole = test::read_text(dir / "run.json");
  disk.fill();
  EpochSummary epoch;
  epoch.epoch = 1;
  EXPECT_THROW(record.on_epoch(epoch), RecordError);
  RunSummary summary;
  summary.status = RunStatus::Finished;
  EXPECT_THROW(record.finish(summary), RecordError);
  EXPECT_EQ(test::read_text(dir / "run.json"), whole);
  const RunData run = load_run(dir);
  EXPECT_EQ(run.status(), "running");
  EXPECT_EQ(run.steps.size(), 1u);
  for (const auto& [name, bytes] : test::snapshot(dir))
    EXPECT_FALSE(name.ends_with(".tmp")) << name;
}

// A record whose summary was edited (images x100, a test accuracy of 99.9 %) is marked wherever
// its figures are shown, saying which figure disagrees with what the run's own files measured;
// the record as written agrees with itself.
TEST(RunRecord, FiguresThatDisagreeWithTheRunsOwnFilesAreFlagged) {
  test::TempDir dir;
  const auto folder = test::write_run(dir.path() / "run", 4, 64, 40, 1.19, "2026-01-01T00:00:00");
  RunData run = load_run(folder);
  EXPECT_TRUE(record_disagreements(run).empty()) << join_flags(record_disagreements(run));
  EXPECT_TRUE(run_flags(run).empty()) << join_flags(run_flags(run));
  const nlohmann::json honest = run.info;
  auto edited = [&](const char* field, double value) {
    RunData forged = run;
    forged.info = honest;
    forged.info["summary"][field] = value;
    return record_disagreements(forged);
  };
  const double images = honest["summary"]["images"].get<double>();
  const double seconds = honest["summary"]["train_seconds"].get<double>();
  struct Case {
    const char* field;
    double value;
    std::string mention;
  };
  for (const Case& c : std::vector<Case>{
           {"images", 100 * images, "images are more than its 40 steps of 64 hold"},
           {"train_seconds", seconds / 100, "images/s is faster than any step"},
           {"test_accuracy", 0.999, "test accuracy 99.90 % is not its last test evaluation"},
           {"steps", 4, "images are more than its 4 steps"}}) {
    const std::vector<std::string> found = edited(c.field, c.value);
    ASSERT_FALSE(found.empty()) << c.field;
    EXPECT_NE(join_flags(found).find(c.mention), std::string::npos) << join_flags(found);
    EXPECT_EQ(found[0].rfind("figures disagree: ", 0), 0u) << found[0];
  }
  // Shorter steps than any measured, with images and seconds scaled together.
  RunData forged = run;
  forged.info["summary"]["steps"] = 4000;
  forged.info["summary"]["images"] = 4000 * 64;
  EXPECT_NE(join_flags(record_disagreements(forged)).find("ms per step is shorter than any step"),
            std::string::npos)
      << join_flags(record_disagreements(forged));
  // The flag reaches run_flags, so every table and chart marks the run.
  forged = run;
  forged.info["summary"]["images"] = 100 * images;
  EXPECT_EQ(flag_headline(run_flags(forged).at(0)), "figures disagree");
}

// Two runs given one folder at the same moment: exactly one claims it and records, the other is
// refused at once, and the winner's record is whole. Forked processes released together, many
// times, as two `gpulab-cli train --out SAME` would race.
TEST(RunRecord, OfTwoRunsRacingForAFolderExactlyOneGetsIt) {
  test::TempDir dir;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const auto run_dir = dir.path() / ("run" + std::to_string(attempt));
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    pid_t children[2];
    for (pid_t& child : children) {
      child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        close(go[1]);
        char byte;
        if (read(go[0], &byte, 1) != 0) _exit(9);  // wait until the parent lets both go
        try {
          RunRecorder record(run_dir, {{"name", std::to_string(getpid())}});
          StepMetrics step;
          step.step = 1;
          record.on_step(step);
          RunSummary summary;
          summary.status = RunStatus::Finished;
          record.finish(summary);
          _exit(0);
        } catch (const RecordError& e) {
          _exit(std::string(e.what()).find("already holds a run") != std::string::npos ? 3 : 1);
        } catch (...) {
          _exit(2);
        }
      }
    }
    close(go[0]);
    close(go[1]);  // both children read end-of-file at once
    std::vector<int> codes;
    for (pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    std::sort(codes.begin(), codes.end());
    ASSERT_EQ(codes, (std::vector<int>{0, 3})) << "attempt " << attempt;
    const RunData run = load_run(run_dir);
    EXPECT_EQ(run.status(), "finished");
    EXPECT_EQ(run.steps.size(), 1u);
  }
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

// Whatever a runs folder holds, the good runs load and each damaged one is a problem naming its
// folder and file (and field or line), never an exception, a hang or a read without end.
TEST(RunRecord, DamagedRunsAreSkippedWithTheirFileNamed) {
  test::TempDir dir;
  const auto damaged = test::write_damaged_runs(dir.path());
  std::vector<std::string> problems;
  const std::vector<RunData> runs = load_runs(dir.path(), &problems);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name(), "good-b");
  EXPECT_EQ(runs[1].name(), "good-a");
  for (const test::DamagedRun& run : damaged) {
    const std::string file =
        (dir.path() / run.folder).string() + (run.folder == run.file ? "" : "/" + run.file);
    const auto named = std::find_if(problems.begin(), problems.end(), [&](const std::string& p) {
      return p.find(file) != std::string::npos && p.find(run.detail) != std::string::npos;
    });
    EXPECT_NE(named, problems.end())
        << run.folder << ": no problem names " << file << " " << run.detail;
  }
  EXPECT_EQ(problems.size(), damaged.size());
}

// NUL bytes after the last whole line (a crash's unwritten blocks) are a cut-off tail: the steps
// before them read.
TEST(RunRecord, NulBytesAfterTheLastWholeLineAreACutOffTail) {
  test::TempDir dir;
  test::write_run(dir.path(), test::complete_run_info(),
                  std::string(test::kGoodMetrics) + std::string(100, '\0'));
  const std::string good = test::kGoodMetrics;
  const size_t steps = size_t(std::count(good.begin(), good.end(), '\n')) - 1;  // less the header
  ASSERT_GT(steps, 0u);
  EXPECT_EQ(load_run(dir.path()).steps.size(), steps);
}

TEST(RunRecord, AFieldOfTheWrongTypeIsNamedWithWhatWasExpected) {
  test::TempDir dir;
  nlohmann::json info = test::complete_run_info();
  info["model"]["name"] = 3;
  test::write_run(dir.path(), info);
  try {
    load_run(dir.path());
    FAIL() << "a number for the model's name was accepted";
  } catch (const RecordError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir.path() / "run.json").string() +
                  ": field \"model.name\": expected a string, found a number");
  }
  // A complete record of every field reads.
  test::write_run(dir.path(), test::complete_run_info());
  EXPECT_EQ(load_run(dir.path()).name(), "good");
}

// How a run used CUDA graphs is a sentence (a refused capture says why), never a flag.
TEST(RunRecord, CudaGraphsThatAreNotASentenceAreNamed) {
  test::TempDir dir;
  for (const nlohmann::json& bad : {nlohmann::json(true), nlohmann::json(3),
                                    nlohmann::json::array({"on"}), nlohmann::json(nullptr)}) {
    nlohmann::json info = test::complete_run_info();
    info["cuda_graphs"] = bad;
    test::write_run(dir.path(), info);
    try {
      load_run(dir.path());
      ADD_FAILURE() << "cuda_graphs " << bad.dump() << " was accepted";
    } catch (const RecordError& e) {
      EXPECT_EQ(
          std::string(e.what()).rfind((dir.path() / "run.json").string() +
                                          ": field \"cuda_graphs\": expected a string, found ",
                                      0),
          0u)
          << e.what();
    }
  }
  nlohmann::json info = test::complete_run_info();
  info["cuda_graphs"] =
      "off after capture failed: forward phase: cudaErrorStreamCaptureUnsupported";
  test::write_run(dir.path(), info);
  EXPECT_EQ(load_run(dir.path()).info["cuda_graphs"], info["cuda_graphs"]);
}

// The reader holds every whole-number setting to the bounds the command line, setup files and
// lab files check (engine/training/setting_bounds.hpp): each at its least and most reads, one
// past either is refused naming the field, and a value the entrances refuse the reader refuses.
TEST(RunRecord, TheReaderTakesEverySettingTheEntrancesTakeAndNoMore) {
  test::TempDir dir;
  int tried = 0;
  for (const SettingBound& setting : setting_bounds()) {
    const Bound& bound = setting.bound;
    std::vector<std::pair<nlohmann::json, bool>> values;  // the value, and whether it is taken
    if (bound.whole) {
      values = {{bound.least, true}, {bound.most, true}};
      if (bound.least > INT64_MIN) values.push_back({bound.least - 1, false});
      if (bound.most < INT64_MAX)
        values.push_back({bound.most + 1, false});
      else
        values.push_back({uint64_t(bound.most) + 1, false});
    } else {
      // An end that is included, else a value inside.
      const double inside = !bound.high_open && std::isfinite(bound.high) ? bound.high
                            : !bound.low_open                             ? bound.low
                            : std::isfinite(bound.high) ? (bound.low + bound.high) / 2
                                                        : bound.low + 1e300;
      values = {{inside, true}};
    }
    for (const auto& [value, taken] : values) {
      EXPECT_EQ(bound.problem(value).empty(), taken) << setting.key << " " << value;
      nlohmann::json info = test::complete_run_info();
      info["config"][setting.key] = value;
      test::write_run(dir.path(), info);
      ++tried;
      if (taken) {
        EXPECT_NO_THROW(load_run(dir.path())) << setting.key << " " << value;
        continue;
      }
      try {
        load_run(dir.path());
        ADD_FAILURE() << setting.key << " " << value << " was read";
      } catch (const RecordError& e) {
        EXPECT_NE(std::string(e.what()).find("field \"config." + std::string(setting.key) +
                                             "\": " + value.dump() + " is out of range"),
                  std::string::npos)
            << e.what();
      }
    }
  }
  EXPECT_GE(tried, 40);
}

// A name that is not UTF-8, or longer than a name may be, from any front end, is refused before
// a folder is made: run.json would have been left at 0 bytes, never to load.
TEST(RunRecord, ANameThatIsNotUtf8OrTooLongIsRefusedBeforeTheFolderIsMade) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(64, 1), test::synthetic_set(16, 2), dir.path()};
  for (const auto& [run_name, model_name, said] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"caf\xe9", "mlp",
            "the run's name is not UTF-8 text (byte 0xE9 at column 4); give a UTF-8 name of at "
            "most 256 bytes"},
           {"ok", "ml\xff",
            "the model's name is not UTF-8 text (byte 0xFF at column 3); give a "
            "UTF-8 name of at most 256 bytes"},
           {std::string(8 << 20, 'n'), "mlp",
            "the run's name is 8388608 bytes long; give a UTF-8 name of at most 256 bytes"}}) {
    RunRequest request;
    request.name = run_name;
    request.model = preset("mlp");
    request.model.name = model_name;
    request.train.max_steps = 1;
    request.out_dir = dir.path() / "run";
    RunObserver observer;
    RunControl control;
    try {
      execute_run(request, observer, control, &mnist);
      ADD_FAILURE() << "the run started";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), said);
    }
    EXPECT_FALSE(std::filesystem::exists(request.out_dir));
  }
}

// A record written elsewhere with a name of 4 MB (the window stopped, an export took 44 s) is
// read with its name cut as a new run's is bounded, and so are its model's name and message.
TEST(RunRecord, ARecordsHugeNamesAreReadBackCutToTheBound) {
  test::TempDir dir;
  nlohmann::json info = test::complete_run_info();
  info["name"] = std::string(4 << 20, 'n');
  info["model"]["name"] = std::string(1 << 20, 'm');
  info["message"] = std::string(1 << 20, 'x');
  test::write_run(dir.path() / "huge", info);
  const RunData run = load_run(dir.path() / "huge");
  EXPECT_LE(run.name().size(), kMaxNameBytes);
  EXPECT_EQ(run.name().substr(0, 10), "nnnnnnnnnn");
  EXPECT_NE(run.name().find("…"), std::string::npos);
  EXPECT_LE(run.info["model"]["name"].get<std::string>().size(), kMaxNameBytes);
  EXPECT_LE(run.info["message"].get<std::string>().size(), 4096u);
  const std::string short_name = "lenet5 on 2 threads";
  info["name"] = short_name;
  test::write_run(dir.path() / "short", info);
  EXPECT_EQ(load_run(dir.path() / "short").name(), short_name);
}

// A path that is not UTF-8 (Linux allows any bytes) is kept in run.json with U+FFFD for what is
// not, and the record loads: dumping it threw, and left a 0-byte run.json.
TEST(RunRecord, APathThatIsNotUtf8IsKeptLoadably) {
  test::TempDir dir;
  data::MnistData mnist{test::synthetic_set(64, 1), test::synthetic_set(16, 2),
                        dir.path() / "caf\xe9"};
  RunRequest request;
  request.model = preset("mlp");
  request.train.max_steps = 1;
  request.out_dir = dir.path() / "run";
  request.save_weights = dir.path() / "w\xe9.safetensors";
  RunObserver observer;
  RunControl control;
  EXPECT_EQ(execute_run(request, observer, control, &mnist).status, RunStatus::Finished);
  const RunData run = load_run(request.out_dir);
  EXPECT_EQ(run.info["data"]["dir"], (dir.path() / "caf\xef\xbf\xbd").string());
  EXPECT_EQ(run.info["weights"], (dir.path() / "w\xef\xbf\xbd.safetensors").string());
}

// Steps past what a double holds exactly (2^53) would wrap or round in exports and plots.
TEST(RunRecord, ImpossibleStepsAreRefusedWithTheLine) {
  test::TempDir dir;
  const std::string header =
      std::string(test::kGoodMetrics).substr(0, std::string(test::kGoodMetrics).find('\n') + 1);
  for (const std::string step : {"9223372036854775807", "1e30", "-3", "2.5", "inf"}) {
    test::write_run(dir.path(), test::complete_run_info(),
                    header + step + ",1,0.2,2.1,0.2,640,0.05,10,1,0,4,4,0,1,0\n");
    try {
      load_run(dir.path());
      ADD_FAILURE() << "step " << step << " was accepted";
    } catch (const RecordError& e) {
      EXPECT_NE(std::string(e.what()).find("metrics.csv:2: step " + step), std::string::npos)
          << e.what();
    }
  }
}

// A record left at "running" by a process that is gone reads as interrupted, in the window's list
// and the CLI's comparison alike; one whose process lives is another program's, still written.
TEST(RunRecord, ARunWhoseProcessIsGoneIsInterrupted) {
  test::TempDir dir;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);  // its pid now names no process

  nlohmann::json info = test::complete_run_info();
  info["status"] = "running";
  info["process"] = this_process_json();
  info["process"]["pid"] = int(child);
  test::write_run(dir.path() / "gone", info);
  info["process"] = this_process_json();
  test::write_run(dir.path() / "alive", info);
  info.erase("process");
  test::write_run(dir.path() / "older", info);

  const RunData gone = load_run(dir.path() / "gone");
  EXPECT_EQ(gone.status(), "interrupted");
  EXPECT_FALSE(gone.written_elsewhere());
  EXPECT_EQ(compare_runs({&gone}, 0, 0)[0].status, "interrupted");
  const RunData alive = load_run(dir.path() / "alive");
  EXPECT_EQ(alive.status(), "running");
  EXPECT_TRUE(alive.written_elsewhere());
  const RunData older = load_run(dir.path() / "older");  // nothing says who wrote it
  EXPECT_EQ(older.status(), "running");
  EXPECT_FALSE(older.written_elsewhere());

  // A run records its host and process when it starts.
  RunRecorder recorder(dir.path() / "new", {{"name", "new"}});
  EXPECT_EQ(load_run(dir.path() / "new").info["process"], this_process_json());
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
  EXPECT_EQ(run.info["status"], "running");  // it never got to say otherwise,
  EXPECT_EQ(run.status(), "interrupted");    // but its process is gone
  ASSERT_GE(run.steps.size(), 11u);
  for (size_t i = 0; i < run.steps.size(); ++i) EXPECT_EQ(run.steps[i].step, int64_t(i + 1));
  EXPECT_FALSE(run.samples.empty());
}

}  // namespace
}  // namespace gpulab
