// Chart series, comparisons and experiments from run records: what every plot and export shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"
#include "engine/analysis/chart_builder.hpp"
#include "engine/analysis/chart_csv.hpp"
#include "engine/analysis/race_verdict.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/analysis/series.hpp"
#include "engine/base/errors.hpp"
#include "engine/records/run_names.hpp"
#include "engine/training/experiment.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

// A run of `steps` steps at `step_ms` each, 100 steps per epoch, a test evaluation every 50
// steps climbing towards 99 %, and a cpu sample every 0.1 s.
RunData make_run(const std::string& name, int steps, double step_ms, double images_per_second) {
  RunData run;
  run.info = {{"name", name},
              {"status", "finished"},
              {"config", {{"batch", 64}, {"device", "cpu"}, {"precision", "fp32"}}},
              {"plan", {{"steps_per_epoch", 100}}},
              {"summary", {{"images_per_second", images_per_second}, {"epochs", {{{"seconds", 2.0}}, {{"seconds", 4.0}}}}}}};
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.epoch = (s - 1) / 100 + 1;
    m.time_s = s * step_ms / 1000.0;
    m.loss = 2.0 / s;
    m.accuracy = 0.5;
    m.step_ms = step_ms;
    m.images_per_second = images_per_second;
    m.times.forward_ms = step_ms * 0.25;
    m.times.backward_ms = step_ms * 0.5;
    m.times.optimizer_ms = step_ms * 0.25;
    run.steps.push_back(m);
    if (s % 50 == 0) run.evals.push_back({s, m.epoch, m.time_s, Split::Test, 0.1, 0.90 + 0.045 * (s / 50)});
  }
  for (double t = 0; t < steps * step_ms / 1000.0; t += 0.1) {
    DeviceSample sample;
    sample.device = "cpu";
    sample.time_s = t;
    sample.util_percent = 50;
    sample.mem_used_bytes = 1 << 30;
    run.samples.push_back(sample);
  }
  return run;
}

TEST(TrailingMean, AveragesTheLastWindowValues) {
  TrailingMean mean(3);
  EXPECT_DOUBLE_EQ(mean.add(3), 3);
  EXPECT_DOUBLE_EQ(mean.add(6), 4.5);
  EXPECT_DOUBLE_EQ(mean.add(9), 6);
  EXPECT_DOUBLE_EQ(mean.add(12), 9);  // 3 dropped out
  TrailingMean raw(1);
  EXPECT_DOUBLE_EQ(raw.add(7), 7);
  EXPECT_DOUBLE_EQ(raw.add(-1), -1);
}

// One absurd loss must not leave the window's sum wrong once it has left it: the smoothed line
// goes back to the plain mean of the values around it, never below zero.
TEST(TrailingMean, OneHugeValueLeavesNoTraceOnceItIsOutOfTheWindow) {
  TrailingMean mean(25);
  for (int i = 0; i < 100; ++i) mean.add(0.5);
  mean.add(1e17);
  for (int i = 0; i < 24; ++i) EXPECT_GT(mean.add(0.25), 1e14);
  for (int i = 0; i < 200; ++i) {
    const double smoothed = mean.add(0.25);
    ASSERT_DOUBLE_EQ(smoothed, 0.25) << "step " << i << " after the spike left the window";
  }
  // Infinities and NaNs pass too, and leave no trace either.
  for (double odd : {std::numeric_limits<double>::infinity(), -1e300, 1e300}) {
    mean.add(odd);
    for (int i = 0; i < 24; ++i) mean.add(0.25);
    EXPECT_DOUBLE_EQ(mean.add(0.25), 0.25) << odd;
  }
}

TEST(Timeline, PlacesStepsEvalsAndSamplesOnEachAxis) {
  const RunData run = make_run("a", 200, 10.0, 6400);
  for (XAxis axis : {XAxis::Step, XAxis::Time, XAxis::Epoch}) {
    Timeline timeline(axis, steps_per_epoch(run));
    timeline.extend(run);
    const double x = timeline.x(run.steps[99]);  // step 100 at 1.0 s
    EXPECT_DOUBLE_EQ(x, axis == XAxis::Step ? 100 : 1.0) << x_axis_name(axis);
    // A sample at 0.505 s sits between steps 50 and 51.
    const double at = timeline.x_at_time(0.505);
    const double expected = axis == XAxis::Step ? 50.5 : 0.505;
    EXPECT_NEAR(at, expected, 1e-9) << x_axis_name(axis);
  }
  EXPECT_EQ(steps_per_epoch(run), 100);
}

TEST(ChartBuilder, ExtendsIncrementallyToTheSamePointsAsAtOnce) {
  RunData full = make_run("a", 300, 5.0, 12800);
  RunData growing = full;
  growing.steps.resize(100);
  growing.evals.resize(2);
  growing.samples.resize(5);  // up to 0.4 s: none later than the last step (0.5 s)
  ChartOptions options;
  options.smoothing = 10;
  for (ChartKind kind : {ChartKind::Loss, ChartKind::Accuracy, ChartKind::Gpu}) {
    ChartBuilder live(kind, options);
    live.reset({&growing});
    growing.steps = full.steps;
    growing.evals = full.evals;
    growing.samples = full.samples;
    live.update();
    const Chart all = build_chart(kind, {&full}, options);
    ASSERT_EQ(live.chart().panels.size(), all.panels.size());
    for (size_t p = 0; p < all.panels.size(); ++p)
      for (size_t l = 0; l < all.panels[p].lines.size(); ++l) {
        EXPECT_EQ(live.chart().panels[p].lines[l].points.x, all.panels[p].lines[l].points.x);
        EXPECT_EQ(live.chart().panels[p].lines[l].points.smoothed, all.panels[p].lines[l].points.smoothed);
      }
    growing.steps.resize(100);
    growing.evals.resize(2);
    growing.samples.resize(5);
  }
}

// A learning rate changed while the run trained is marked on every line chart: at its step on
// the step axis, at step / steps per epoch on the epoch axis, at the moment it took effect on the
// time axis; a change that arrives later makes the live chart redraw with its mark.
TEST(ChartBuilder, LearningRateChangesAreMarkedAtTheirPlaceOnEveryAxis) {
  RunData run = make_run("a", 300, 10.0, 6400);  // 100 steps an epoch, step s ends at s / 100 s
  run.lr_changes.push_back({150, 2, 1.495, 0.5});
  for (XAxis axis : {XAxis::Step, XAxis::Epoch, XAxis::Time}) {
    ChartOptions options;
    options.x = axis;
    for (ChartKind kind : {ChartKind::Loss, ChartKind::Accuracy, ChartKind::StepTime,
                           ChartKind::Throughput, ChartKind::Gpu}) {
      const Chart chart = build_chart(kind, {&run}, options);
      ASSERT_EQ(chart.marks.size(), 1u) << chart_kind_name(kind) << " " << x_axis_name(axis);
      const double expected = axis == XAxis::Step ? 150 : axis == XAxis::Epoch ? 1.5 : 1.495;
      EXPECT_DOUBLE_EQ(chart.marks[0].x, expected)
          << chart_kind_name(kind) << " " << x_axis_name(axis);
      EXPECT_EQ(chart.marks[0].label, "lr 0.5");
    }
  }
  EXPECT_EQ(lr_mark_label(0.00025), "lr 0.00025");
  EXPECT_EQ(lr_mark_label(0.1), "lr 0.1");

  // Live: the second run's change arrives after the chart was built.
  RunData other = make_run("b", 100, 10.0, 6400);
  ChartBuilder live(ChartKind::Loss, ChartOptions{});
  live.reset({&run, &other});
  ASSERT_EQ(live.chart().marks.size(), 1u);
  EXPECT_FALSE(live.update());
  other.lr_changes.push_back({40, 1, 0.395, 0.001});
  EXPECT_TRUE(live.update()) << "a new mark: the view redraws";
  ASSERT_EQ(live.chart().marks.size(), 2u);
  EXPECT_EQ(live.chart().marks[1].run, 1);
  EXPECT_DOUBLE_EQ(live.chart().marks[1].x, 40);
  EXPECT_EQ(live.chart().marks[1].label, "lr 0.001");

  // The CSV has a row for each change, at the x of its mark, the new rate as the value.
  ChartOptions by_epoch;
  by_epoch.x = XAxis::Epoch;
  std::ostringstream csv;
  write_chart_csv(build_chart(ChartKind::Loss, {&run, &other}, by_epoch), csv);
  EXPECT_NE(csv.str().find("\n,a,lr_change,,1.5,0.5,\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find("\n,b,lr_change,,0.4,0.001,\n"), std::string::npos) << csv.str();
  std::ostringstream speedup;  // bars: no x axis, no marks
  write_chart_csv(build_chart(ChartKind::Speedup, {&run, &other}, by_epoch), speedup);
  EXPECT_EQ(speedup.str().find("lr_change"), std::string::npos) << speedup.str();
}

TEST(ChartBuilder, TelemetryLanesAppearWithTheirFirstSample) {
  RunData run = make_run("a", 100, 5.0, 12800);
  const auto samples = run.samples;
  run.samples.clear();
  ChartBuilder builder(ChartKind::Gpu, ChartOptions{});
  builder.reset({&run});
  for (const Panel& p : builder.chart().panels) EXPECT_FALSE(p.visible);
  run.samples = samples;
  EXPECT_TRUE(builder.update());  // a new device: redraw
  EXPECT_TRUE(builder.chart().panels[0].visible);   // utilization
  EXPECT_TRUE(builder.chart().panels[1].visible);   // memory
  EXPECT_FALSE(builder.chart().panels[2].visible);  // a CPU reports no power
  EXPECT_FALSE(builder.update());
}

TEST(ChartBuilder, ARunOnTwoGpusHasALineForEachInEveryLane) {
  RunData run = make_run("a", 100, 5.0, 12800);
  for (double t = 0; t < 0.5; t += 0.1)
    for (const char* gpu : {"cuda:0", "cuda:1"}) {
      DeviceSample sample;
      sample.device = gpu;
      sample.time_s = t;
      sample.util_percent = gpu[5] == '0' ? 90 : 45;
      sample.mem_used_bytes = 2.0 * (1 << 30);
      sample.power_w = 300;
      sample.temperature_c = 60;
      sample.mem_util_percent = 30;
      sample.sm_clock_mhz = 1980;
      run.samples.push_back(sample);
    }
  const Chart chart = build_chart(ChartKind::Gpu, {&run}, ChartOptions{});
  ASSERT_EQ(chart.panels.size(), 5u);
  for (const Panel& panel : chart.panels) {
    EXPECT_TRUE(panel.visible) << panel.y_label;
    std::vector<std::string> gpus;
    for (const LineSeries& line : panel.lines)
      if (line.device.rfind("cuda", 0) == 0 && line.points.size() > 0 &&
          line.metric != Metric::MemBusyPercent)
        gpus.push_back(line.device);
    EXPECT_EQ(gpus, (std::vector<std::string>{"cuda:0", "cuda:1"})) << panel.y_label;
  }
  // Each GPU's line carries its own readings.
  for (const LineSeries& line : chart.panels[0].lines)
    if (line.device == "cuda:1" && line.metric == Metric::UtilPercent) {
      EXPECT_EQ(line.points.y.front(), 45);
    }
}

// A GPU's memory-controller busy % rides in the utilization lane, dotted beside its
// utilization, and its SM clock has the last lane, each point the sample's own reading; the CPU
// has neither (its mem_util_percent is its share of host memory), so it gets no such line. The
// chart's CSV carries them under their keys.
TEST(ChartBuilder, MemoryBusyAndTheSmClockAreDrawnFromTheGpusSamples) {
  RunData run = make_run("a", 100, 5.0, 12800);
  run.samples.clear();
  const double busy[] = {12, 47, 38}, clock[] = {1980, 1755, 1410};
  for (int i = 0; i < 3; ++i) {
    DeviceSample gpu;
    gpu.device = "cuda:0";
    gpu.time_s = 0.5 * i;
    gpu.util_percent = 90;
    gpu.mem_util_percent = busy[i];
    gpu.sm_clock_mhz = clock[i];
    DeviceSample cpu;
    cpu.device = "cpu";
    cpu.time_s = 0.5 * i;
    cpu.util_percent = 20;
    cpu.mem_util_percent = 3;
    run.samples.push_back(gpu);
    run.samples.push_back(cpu);
  }
  ChartOptions by_time;
  by_time.x = XAxis::Time;
  const Chart chart = build_chart(ChartKind::Gpu, {&run}, by_time);
  ASSERT_EQ(chart.panels.size(), 5u);
  const Panel& util = chart.panels[0];
  EXPECT_EQ(util.y_label, "utilization (%)");
  EXPECT_TRUE(util.percent);
  const Panel& clocks = chart.panels[4];
  EXPECT_EQ(clocks.y_label, "SM clock (MHz)");
  EXPECT_TRUE(clocks.visible);
  EXPECT_FALSE(clocks.percent);
  std::vector<std::pair<Metric, std::string>> util_lines, clock_lines;
  for (const LineSeries& line : util.lines) util_lines.emplace_back(line.metric, line.device);
  for (const LineSeries& line : clocks.lines) clock_lines.emplace_back(line.metric, line.device);
  EXPECT_EQ(util_lines,
            (std::vector<std::pair<Metric, std::string>>{{Metric::UtilPercent, "cuda:0"},
                                                         {Metric::MemBusyPercent, "cuda:0"},
                                                         {Metric::UtilPercent, "cpu"}}));
  EXPECT_EQ(clock_lines,
            (std::vector<std::pair<Metric, std::string>>{{Metric::SmClockMhz, "cuda:0"}}));
  EXPECT_EQ(util.lines[1].points.x, (std::vector<double>{0, 0.5, 1.0}));
  EXPECT_EQ(util.lines[1].points.y, (std::vector<double>{12, 47, 38}));
  EXPECT_EQ(clocks.lines[0].points.y, (std::vector<double>{1980, 1755, 1410}));

  std::ostringstream csv;
  write_chart_csv(chart, csv);
  EXPECT_NE(csv.str().find("utilization (%),a,mem_busy_percent,cuda:0,0.5,47,\n"),
            std::string::npos)
      << csv.str();
  EXPECT_NE(csv.str().find("SM clock (MHz),a,sm_clock_mhz,cuda:0,1,1410,\n"), std::string::npos)
      << csv.str();

  // A CPU run alone: no SM clock lane to show.
  run.samples.erase(std::remove_if(run.samples.begin(), run.samples.end(),
                                   [](const DeviceSample& s) { return s.device != "cpu"; }),
                    run.samples.end());
  EXPECT_FALSE(build_chart(ChartKind::Gpu, {&run}, by_time).panels[4].visible);
}

TEST(Compare, SpeedupTimeToTargetAndTheStepBreakdown) {
  const RunData cpu = make_run("cpu", 200, 20.0, 3200);
  const RunData gpu = make_run("gpu", 200, 2.0, 32000);
  const auto rows = compare_runs({&cpu, &gpu}, 0, 0.98);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].speedup, 10.0);
  EXPECT_DOUBLE_EQ(rows[0].epoch_seconds, 3.0);
  // 98 % is first reached by the evaluation at step 100: 2.0 s on the CPU, 0.2 s on the GPU.
  EXPECT_DOUBLE_EQ(rows[0].time_to_target_s, 2.0);
  EXPECT_NEAR(rows[1].time_to_target_s, 0.2, 1e-12);

  const Chart speedup = build_chart(ChartKind::Speedup, {&cpu, &gpu}, ChartOptions{});
  EXPECT_DOUBLE_EQ(speedup.panels[0].bars[0].values[1], 10.0);
  EXPECT_DOUBLE_EQ(speedup.panels[1].bars[0].values[1], 1.0);  // both made-up runs say 3 s epochs
  const Chart steps = build_chart(ChartKind::StepTime, {&cpu, &gpu}, ChartOptions{});
  // CPU runs on one device: no copy, no all-reduce in the breakdown.
  std::vector<std::string> phases;
  for (const BarSet& set : steps.panels[1].bars) phases.push_back(set.label);
  EXPECT_EQ(phases,
            (std::vector<std::string>{"data", "forward", "backward", "optimizer", "other"}));
  EXPECT_DOUBLE_EQ(steps.panels[1].bars[2].values[0], 10.0);  // backward: half of 20 ms
}

// A step budget that ends inside an epoch closes it early: that epoch is no epoch time.
TEST(Compare, EpochTimeComesFromFullEpochsOnly) {
  // 938 steps an epoch, then 66 of the next: 43.2 s and 12.2 s. The full one alone is 43.2 s.
  RunData cut = make_run("cut", 0, 10.0, 5000);
  cut.info["plan"]["steps_per_epoch"] = 938;
  cut.info["summary"]["epochs"] = {{{"epoch", 1}, {"seconds", 43.2}, {"steps", 938}},
                                   {{"epoch", 2}, {"seconds", 12.2}, {"steps", 66}}};
  // An older record without the steps per epoch: its metrics say epoch 2 ended at step 1004.
  RunData older = cut;
  for (auto& e : older.info["summary"]["epochs"]) e.erase("steps");
  for (int s = 1; s <= 1004; ++s) {
    StepMetrics m;
    m.step = s;
    m.epoch = s <= 938 ? 1 : 2;
    m.step_ms = 40.0;
    older.steps.push_back(m);
  }
  // No full epoch: 66 steps of 20 ms each, extrapolated to 938 steps: 18.76 s.
  RunData short_run = make_run("short", 66, 20.0, 3200);
  short_run.info["plan"]["steps_per_epoch"] = 938;
  short_run.info["summary"]["epochs"] = {{{"epoch", 1}, {"seconds", 1.4}, {"steps", 66}}};
  const auto rows = compare_runs({&cut, &older, &short_run}, 0, 0.98);
  EXPECT_DOUBLE_EQ(rows[0].epoch_seconds, 43.2);
  EXPECT_EQ(rows[0].full_epochs, 1);
  EXPECT_FALSE(rows[0].epoch_extrapolated);
  EXPECT_DOUBLE_EQ(rows[1].epoch_seconds, 43.2);
  EXPECT_NEAR(rows[2].epoch_seconds, 66 * 20.0 / 66 * 938 / 1000.0, 1e-9);
  EXPECT_TRUE(rows[2].epoch_extrapolated);
  EXPECT_EQ(epoch_time_text(rows[0]), "43.20 s");
  EXPECT_EQ(epoch_time_text(rows[2]), "≈ 18.76 s, from 66 steps");
  // The epoch-time speedup compares full epochs only: none for the extrapolated run.
  EXPECT_DOUBLE_EQ(rows[1].epoch_speedup, 1.0);
  EXPECT_TRUE(std::isnan(rows[2].epoch_speedup));
  std::ostringstream csv;
  write_comparison_csv(rows, csv);
  // No energy, no matrix products' share.
  EXPECT_NE(csv.str().find(",extrapolated from steps,,,\n"), std::string::npos) << csv.str();
  // The speedup chart's empty bars say why.
  const Chart speedup = build_chart(ChartKind::Speedup, {&cut, &older, &short_run}, ChartOptions{});
  EXPECT_EQ(speedup.panels[1].bars[0].notes[2], "no full epoch");
  EXPECT_EQ(speedup.panels[1].bars[0].notes[1], "");
  EXPECT_EQ(speedup.panels[2].bars[0].notes[0], "not reached");  // no evaluation at 98 %
}

// Energy to solution in the comparison: run.json's figures as they are, and never 0 J where the
// record says it could not be measured or predates energy.
TEST(Compare, EnergyAndImagesPerJouleComeFromTheRecord) {
  RunData gpu = make_run("gpu", 200, 2.0, 32000);
  gpu.info["energy"] = {{"joules", 725.0},
                        {"images_per_joule", 9000.0 / 725.0},
                        {"of", {"cuda:0"}},
                        {"devices", {{{"device", "cuda:0"}, {"joules", 725.0}}}}};
  RunData cpu = make_run("cpu", 200, 20.0, 3200);
  cpu.info["energy"] = {
      {"joules", nullptr},
      {"images_per_joule", nullptr},
      {"of", {"cpu"}},
      {"devices",
       {{{"device", "cpu"}, {"joules", nullptr}, {"why", "no RAPL counters on this machine"}}}}};
  const RunData older = make_run("older", 200, 20.0, 3200);
  const auto rows = compare_runs({&gpu, &cpu, &older}, 0, 0.98);
  EXPECT_DOUBLE_EQ(rows[0].energy_j, 725.0);
  EXPECT_DOUBLE_EQ(rows[0].images_per_joule, 9000.0 / 725.0);
  EXPECT_EQ(rows[0].energy_note, "725 J on cuda:0 (12.4 images/J)");
  EXPECT_TRUE(std::isnan(rows[1].energy_j));
  EXPECT_EQ(rows[1].energy_note, "unavailable: cpu: no RAPL counters on this machine");
  EXPECT_TRUE(std::isnan(rows[2].energy_j));
  EXPECT_EQ(rows[2].energy_note, "not recorded");
  std::ostringstream csv;
  write_comparison_csv(rows, csv);
  const std::string text = csv.str();
  EXPECT_NE(text.find(",energy_joules,images_per_joule,matmul_percent\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find(",725,12.41"), std::string::npos) << text;
}

// The matrix products' share in the comparison: over the steps that measured it (the CPU's),
// their matmul_ms over their forward and backward time; none for a run that measured none.
TEST(Compare, TheMatmulShareIsTheMeasuredStepsMatrixProductsOverForwardAndBackward) {
  RunData cpu = make_run("cpu", 4, 20.0, 3200);  // forward 5 ms and backward 10 ms a step
  const double matmul[] = {9.0, 12.0, kNoValue, 9.0};  // step 3 did not measure it
  for (size_t s = 0; s < cpu.steps.size(); ++s) cpu.steps[s].times.matmul_ms = matmul[s];
  const RunData gpu = make_run("gpu", 4, 2.0, 32000);
  const auto rows = compare_runs({&cpu, &gpu}, 0, 0.98);
  // (9 + 12 + 9) ms of 3 x 15 ms: 66.7 %, 10.00 of 15.00 ms a step.
  EXPECT_DOUBLE_EQ(rows[0].matmul_percent, 100.0 * 30.0 / 45.0);
  EXPECT_EQ(rows[0].matmul_note,
            "67 % of forward and backward in matrix products (convolutions and GEMMs): 10.00 of "
            "15.00 ms a step");
  EXPECT_TRUE(std::isnan(rows[1].matmul_percent));
  EXPECT_EQ(rows[1].matmul_note, "");
  std::ostringstream csv;
  write_comparison_csv(rows, csv);
  const std::string text = csv.str();
  EXPECT_NE(text.find(",66.6666667\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 2), ",\n") << text;  // the GPU run's: empty
}

// A flagged run is marked on every chart that shows it, in the window and in exported files.
TEST(Charts, FlaggedRunsCarryAWarningSignAndTheirReasons) {
  RunData clean = make_run("clean", 20, 5.0, 12800),
          cancelled = make_run("stopped", 20, 5.0, 12800),
          loaded = make_run("loaded", 20, 5.0, 12800);
  cancelled.info["status"] = "cancelled";
  loaded.info["outside_load"] = {{"under_load", true}, {"mean_cores", 1.2}, {"cores", 2}};
  EXPECT_TRUE(run_flags(clean).empty());
  EXPECT_EQ(run_flags(cancelled), std::vector<std::string>{"cancelled after 20 steps"});
  ASSERT_EQ(run_flags(loaded).size(), 1u);
  EXPECT_EQ(flag_headline(run_flags(loaded)[0]), "measured under outside load");
  for (ChartKind kind : all_chart_kinds()) {
    const Chart chart = build_chart(kind, {&clean, &cancelled, &loaded}, ChartOptions{});
    EXPECT_EQ(chart.runs[0], "clean") << chart_kind_name(kind);
    EXPECT_EQ(chart.runs[1], "stopped ⚠") << chart_kind_name(kind);
    EXPECT_EQ(chart.runs[2], "loaded ⚠") << chart_kind_name(kind);
    EXPECT_EQ(chart.flags[1], "cancelled after 20 steps");
  }
  std::ostringstream csv;
  write_chart_csv(build_chart(ChartKind::Loss, {&clean, &cancelled}, ChartOptions{}), csv);
  EXPECT_NE(csv.str().find("loss,stopped ⚠,loss"), std::string::npos);
}

// A race's verdict from two small records: 331 images/s over 271.3 is 1.22x, said against the
// first run; three runs give a ratio each; a run that shared the hardware makes it "not
// comparable", and so does one measured under outside load, by its flag's headline.
TEST(RaceVerdict, SaysEachRunsImagesPerSecondOverTheFirstOrWhyNotComparable) {
  RunData one = make_run("1 thread", 20, 5.0, 271.3), two = make_run("2 threads", 20, 5.0, 331.0),
          four = make_run("4 threads", 20, 5.0, 542.6);
  EXPECT_EQ(race_verdict({&one, &two}, true),
            "2 threads: 1.22x 1 thread, measured one after another");
  EXPECT_EQ(race_verdict({&one, &two, &four}, false),
            "2 threads: 1.22x 1 thread; 4 threads: 2.00x 1 thread, measured side by side on "
            "their own hardware");
  EXPECT_EQ(race_verdict({&one}, true), "");
  RunData shared = two;
  shared.info["shared_hardware"] = {{"concurrent_with", {"1 thread"}}};
  EXPECT_EQ(race_verdict({&one, &shared}, false), "⚠ not comparable: shared hardware");
  RunData loaded = two;
  loaded.info["outside_load"] = {{"under_load", true}, {"mean_cores", 1.2}, {"cores", 2}};
  EXPECT_EQ(race_verdict({&one, &loaded}, true), "⚠ not comparable: measured under outside load");
}

// The breakdown's bar is built from the steps around the median step, so it is as tall as that
// step; with replicas the phases are the critical path's and the bar's title says so.
TEST(Compare, TheStepBreakdownAddsUpToTheMedianStep) {
  RunData run = make_run("dp", 0, 1, 1);
  run.info["config"]["replicas"] = 4;
  // 21 steps: step k takes 10 + k ms, of which forward 2, backward 4 + k, all-reduce 3, and
  // 1 ms outside every phase. The two longest steps have a slow forward (9 ms): a phase's median
  // over all steps would mix steps; the median step's own phases do not.
  for (int k = 0; k < 21; ++k) {
    StepMetrics m;
    m.step = k + 1;
    m.step_ms = 10.0 + k;
    m.times.forward_ms = k >= 19 ? 9.0 : 2.0;
    m.times.backward_ms = 4.0 + k - (k >= 19 ? 7.0 : 0.0);
    m.times.allreduce_ms = 3.0;
    run.steps.push_back(m);
  }
  std::reverse(run.steps.begin(), run.steps.end());  // not in order of their time
  // 21 steps: a band of 21/20 = 1 on each side of the median (k = 10): k = 9, 10, 11.
  const MedianStep median = median_step(run);
  EXPECT_EQ(median.steps, 3);
  EXPECT_DOUBLE_EQ(median.step_ms, 20.0);
  EXPECT_DOUBLE_EQ(median.phases_ms[size_t(phase_index("backward"))], 14.0);
  EXPECT_DOUBLE_EQ(median.other_ms, 1.0);
  const Chart chart = build_chart(ChartKind::StepTime, {&run}, ChartOptions{});
  const Panel& bars = chart.panels[1];
  EXPECT_EQ(bars.title, "Median step, by phase (slowest replica)");
  double sum = 0;
  for (const BarSet& set : bars.bars) sum += set.values[0];
  EXPECT_NEAR(sum, 20.0, 20.0 * 0.05);
  EXPECT_DOUBLE_EQ(sum, 20.0);  // data 0, forward 2, backward 14, all-reduce 3, other 1
  EXPECT_EQ(bars.bars.back().label, "other");
}

// The status line and the presenter's headline read one set of live figures.
TEST(Live, FiguresComeFromTheLastStepsAndADashBeforeTheFirst) {
  RunData run = make_run("live", 0, 1, 1);
  EXPECT_TRUE(std::isnan(live_figures(run, 100).images_per_second));
  EXPECT_TRUE(std::isnan(live_figures(run, 100).eta_s));
  // 30 steps: the first 10 at 10 ms (6400 images/s), the last 20 alternating 10 and 30 ms.
  for (int s = 1; s <= 30; ++s) {
    StepMetrics m;
    m.step = s;
    m.step_ms = s <= 10 || s % 2 == 0 ? 10.0 : 30.0;
    m.images_per_second = 64 / (m.step_ms / 1000.0);
    m.time_s = 0.02 * s;
    run.steps.push_back(m);
  }
  const LiveFigures live = live_figures(run, 100);
  // The last 20 steps: 20 × 64 images in 10 × 10 + 10 × 30 ms = 0.4 s: 3200 images/s.
  EXPECT_DOUBLE_EQ(live.images_per_second, 3200.0);
  // 0.6 s for 30 steps; 70 to go at that pace: 1.4 s.
  EXPECT_NEAR(live.eta_s, 1.4, 1e-12);
  EXPECT_EQ(live.step, 30);
}

TEST(Charts, CsvHasRawAndSmoothedColumnsAndQuotesNames) {
  const RunData run = make_run("lenet5, batch 64", 20, 5.0, 12800);
  ChartOptions options;
  options.smoothing = 2;
  std::ostringstream csv;
  write_chart_csv(build_chart(ChartKind::Loss, {&run}, options), csv);
  std::istringstream lines(csv.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header, "panel,run,series,device,step,value,smoothed");
  EXPECT_EQ(first, "loss,\"lenet5, batch 64\",loss,,1,2,2");
  EXPECT_EQ(second, "loss,\"lenet5, batch 64\",loss,,2,1,1.5");
  EXPECT_THROW(parse_chart_kind("pie"), ConfigError);
  EXPECT_EQ(parse_chart_kind("step-time"), ChartKind::StepTime);
}

TEST(TimeToTarget, OneDefinitionTrainingSecondsWithoutEvaluations) {
  // Steps of 10 ms; the evaluation after step 50 takes 0.5 s, so step 51 ends at 1.01 s.
  RunData run = make_run("a", 100, 10.0, 6400);
  run.evals.clear();
  for (StepMetrics& s : run.steps)
    if (s.step > 50) s.time_s += 0.5;
  run.evals.push_back({50, 1, 1.0, Split::Test, 0.2, 0.97});
  run.evals.push_back({100, 1, 2.0 + 0.5, Split::Test, 0.1, 0.99});  // itself 0.5 s long
  // Records from before train_s: derived from the steps around the evaluations.
  EXPECT_NEAR(time_to_target_s(run, 0.96), 0.5, 1e-9);
  EXPECT_NEAR(time_to_target_s(run, 0.98), 1.0, 1e-9);
  EXPECT_TRUE(std::isnan(time_to_target_s(run, 0.995)));
  // Newer records say it; comparisons use exactly that.
  run.evals[1].train_s = 0.987;
  EXPECT_DOUBLE_EQ(time_to_target_s(run, 0.98), 0.987);
  EXPECT_DOUBLE_EQ(compare_runs({&run}, 0, 0.98)[0].time_to_target_s, 0.987);
}

TEST(Charts, LinesBreakWhereTheRunWasEvaluatingOnTheTimeAxis) {
  const RunData run = make_run("a", 200, 10.0, 6400);  // evaluations after steps 50, 100, 150, 200
  ChartOptions options;
  options.x = XAxis::Time;
  const Chart chart = build_chart(ChartKind::Loss, {&run}, options);
  const Points& loss = chart.panels[0].lines[0].points;
  ASSERT_EQ(loss.size(), 200u + 3u);  // a gap after 50, 100 and 150; none after the last step
  int gaps = 0;
  for (size_t i = 0; i < loss.size(); ++i)
    if (std::isnan(loss.y[i])) {
      ++gaps;
      EXPECT_TRUE(std::isnan(loss.smoothed[i]));
      EXPECT_DOUBLE_EQ(loss.x[i], loss.x[i - 1]);
    }
  EXPECT_EQ(gaps, 3);
  // On the step axis a line runs on, and the CSV never holds a gap.
  options.x = XAxis::Step;
  EXPECT_EQ(build_chart(ChartKind::Loss, {&run}, options).panels[0].lines[0].points.size(), 200u);
  std::ostringstream csv;
  write_chart_csv(chart, csv);
  size_t rows = 0;
  for (size_t at = 0; (at = csv.str().find(",loss,", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 200u);
}

// A run.json as the window and gpulab-cli write it, named automatically.
RunData named_run(const std::string& device, int threads, int batch, double lr,
                  std::string name = "") {
  RunData run;
  run.info = {{"model", {{"name", "lenet5"}}},
              {"config",
               {{"device", device},
                {"threads", threads},
                {"batch", batch},
                {"optimizer", "adam"},
                {"lr", lr},
                {"precision", "fp32"}}}};
  run.info["name"] = name.empty() ? auto_run_name(run.info) : name;
  return run;
}

TEST(Names, AutomaticNamesCarryTheSettingsAndChartsShowWhatDiffers) {
  const RunData one = named_run("cpu", 1, 64, 0.001), four = named_run("cpu", 4, 64, 0.001);
  EXPECT_EQ(one.name(), "lenet5 cpu, 1 thread, b64, adam, lr 0.001, fp32");
  EXPECT_EQ(four.name(), "lenet5 cpu, 4 threads, b64, adam, lr 0.001, fp32");
  EXPECT_EQ(display_run_names({&one, &four}),
            (std::vector<std::string>{"lenet5 cpu, 1 thread, b64", "lenet5 cpu, 4 threads, b64"}));
  const RunData fast = named_run("cpu", 4, 64, 0.01);
  EXPECT_EQ(display_run_names({&four, &fast}),
            (std::vector<std::string>{"lenet5 cpu, 4 threads, b64, lr 0.001",
                                      "lenet5 cpu, 4 threads, b64, lr 0.01"}));
  // Replicas are one more part, shown when there are several.
  RunData replicated = named_run("cuda:0", 0, 256, 0.001);
  replicated.info["config"]["replicas"] = 2;
  EXPECT_EQ(auto_run_name(replicated.info),
            "lenet5 cuda:0, 2 replicas, b256, adam, lr 0.001, fp32");
  // GPU replicas are named in the device, and the name counts them.
  EXPECT_EQ(auto_run_name(named_run("cuda:0,1", 0, 256, 0.001).info),
            "lenet5 cuda:0,1, 2 replicas, b256, adam, lr 0.001, fp32");
  EXPECT_EQ(auto_run_name(named_run("cuda:0x2,1x2", 0, 256, 0.001).info),
            "lenet5 cuda:0x2,1x2, 4 replicas, b256, adam, lr 0.001, fp32");
  EXPECT_EQ(auto_run_name(named_run("cuda:1", 0, 256, 0.001).info),
            "lenet5 cuda:1, b256, adam, lr 0.001, fp32");
  // --preprocess once or per-batch is a part of its own; none, and records without the key, add
  // nothing.
  RunData augmented = named_run("cpu", 1, 64, 0.001);
  augmented.info["config"]["preprocess"] = "per-batch";
  EXPECT_EQ(auto_run_name(augmented.info),
            "lenet5 cpu, 1 thread, b64, adam, lr 0.001, fp32, augmented per batch");
  augmented.info["config"]["preprocess"] = "once";
  EXPECT_EQ(auto_run_name(augmented.info),
            "lenet5 cpu, 1 thread, b64, adam, lr 0.001, fp32, augmented once");
  augmented.info["config"]["preprocess"] = "none";
  EXPECT_EQ(auto_run_name(augmented.info), one.name());
  // An MPI job says how many ranks; one recorded before it did still has an automatic name.
  RunData ranks =
      named_run("cpu", 1, 256, 0.001, "lenet5 cpu, 1 thread, b256, adam, lr 0.001, fp32");
  ranks.info["config"]["ranks"] = 2;
  EXPECT_EQ(auto_run_name(ranks.info),
            "lenet5 cpu, 1 thread, 2 MPI ranks, b256, adam, lr 0.001, fp32");
  EXPECT_TRUE(has_auto_name(ranks));
  EXPECT_EQ(display_run_names({&ranks, &one}),
            (std::vector<std::string>{"lenet5 cpu, 1 thread, 2 MPI ranks, b256",
                                      "lenet5 cpu, 1 thread, b64"}));
  // The older automatic names are automatic too; a name a person gave stays.
  const RunData old = named_run("cpu", 2, 64, 0.001, "lenet5_cpu_b64");
  const RunData mine = named_run("cpu", 2, 64, 0.001, "my run");
  EXPECT_TRUE(has_auto_name(old));
  EXPECT_FALSE(has_auto_name(mine));
  EXPECT_EQ(display_run_names({&old, &mine, &one}),
            (std::vector<std::string>{"lenet5 cpu, 2 threads, b64", "my run",
                                      "lenet5 cpu, 1 thread, b64"}));
}

TEST(Names, DuplicateRunNamesAreNumbered) {
  const RunData a = make_run("x", 1, 1, 1), b = make_run("x", 1, 1, 1), c = make_run("y", 1, 1, 1);
  EXPECT_EQ(display_run_names({&a, &b, &c}), (std::vector<std::string>{"x (1)", "x (2)", "y"}));
}

// A race of 1 thread against 2, fair, then again at once: four runs, two names each twice.
TEST(Names, RepeatsAreNumberedByStartTimeWhateverTheOrderAndSubsetShown) {
  RunData runs[4] = {named_run("cpu", 1, 64, 0.001), named_run("cpu", 2, 64, 0.001),
                     named_run("cpu", 1, 64, 0.001), named_run("cpu", 2, 64, 0.001)};
  const char* created[4] = {"2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", "2026-01-01T10:02:00Z",
                            "2026-01-01T10:02:00Z"};
  for (int r = 0; r < 4; ++r) {
    runs[r].info["created"] = created[r];
    runs[r].dir = "/runs/r" + std::to_string(r);
  }
  const std::vector<std::string> oldest_first = {
      "lenet5 cpu, 1 thread, b64 (1)", "lenet5 cpu, 2 threads, b64 (1)",
      "lenet5 cpu, 1 thread, b64 (2)", "lenet5 cpu, 2 threads, b64 (2)"};
  EXPECT_EQ(display_run_names({&runs[0], &runs[1], &runs[2], &runs[3]}), oldest_first);
  // Newest first (the runs list's order) gives each run the same name.
  EXPECT_EQ(display_run_names({&runs[3], &runs[2], &runs[1], &runs[0]}),
            (std::vector<std::string>{oldest_first[3], oldest_first[2], oldest_first[1],
                                      oldest_first[0]}));
  // Named together (the window's store), a chart of two of them keeps their names: the later
  // 1-thread run is "(2)" beside the earlier 2-thread one, not a bare name of its own.
  name_runs({&runs[0], &runs[1], &runs[2], &runs[3]});
  EXPECT_EQ(display_run_names({&runs[1], &runs[2]}),
            (std::vector<std::string>{oldest_first[1], oldest_first[2]}));
  // A chart names them so too, and its speedup title names the baseline by that name.
  ChartOptions options;
  options.baseline = 1;
  const Chart chart = build_chart(ChartKind::Speedup, {&runs[1], &runs[2]}, options);
  EXPECT_EQ(chart.runs, (std::vector<std::string>{oldest_first[1], oldest_first[2]}));
  EXPECT_EQ(chart.title, "Compared with " + oldest_first[2]);
  EXPECT_EQ(compare_runs({&runs[2], &runs[1]}, 0, 0.9)[0].name, oldest_first[2]);
}

// A chart made while a run trained: the run ends cancelled, a flag, and the chart's next refresh
// of its bars marks it (the legend, the key and the title are drawn from these names).
TEST(Names, AChartMarksARunFlaggedAfterItWasMade) {
  RunData run = make_run("x", 10, 5, 1000), other = make_run("y", 10, 5, 1000);
  run.info["status"] = "running";
  ChartBuilder builder(ChartKind::Loss, ChartOptions{});
  builder.reset({&run, &other});
  EXPECT_EQ(builder.chart().runs, (std::vector<std::string>{"x", "y"}));
  run.info["status"] = "cancelled";
  EXPECT_FALSE(builder.update(false));  // the cheap update (every tick) does not look
  EXPECT_TRUE(builder.update(true));
  EXPECT_EQ(builder.chart().runs, (std::vector<std::string>{"x ⚠", "y"}));
  EXPECT_EQ(builder.chart().flags[0], "cancelled after 10 steps");
  EXPECT_FALSE(builder.update(true));  // once
}

TEST(Experiment, RoundTripsAndIsAModelFileTheCliReads) {
  test::TempDir dir;
  Experiment e;
  e.model = preset("pytorch-example");
  e.train.optimizer.kind = OptimizerKind::Momentum;
  e.train.optimizer.lr = 0.05f;
  e.train.batch = 128;
  e.train.epochs = 3;
  e.train.seed = 7;
  e.train.shuffle = false;
  e.backend.device = "cpu";
  e.backend.threads = 2;
  const auto path = dir.path() / "exp.json";
  save_experiment(path, e);
  const Experiment back = load_experiment(path);
  EXPECT_EQ(model_to_json(back.model), model_to_json(e.model));
  EXPECT_EQ(back.train.optimizer.kind, OptimizerKind::Momentum);
  EXPECT_FLOAT_EQ(back.train.optimizer.lr, 0.05f);
  EXPECT_EQ(back.train.batch, 128);
  EXPECT_EQ(back.train.epochs, 3);
  EXPECT_EQ(back.train.seed, 7u);
  EXPECT_FALSE(back.train.shuffle);
  EXPECT_EQ(back.backend.threads, 2);
  EXPECT_EQ(model_to_json(load_model(path.string())), model_to_json(e.model));

  std::ofstream(dir.path() / "bad.json") << R"({"layers": [{"type": "relu"}], "train": {"batch": "big"}})";
  try {
    load_experiment(dir.path() / "bad.json");
    FAIL() << "a string batch was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("\"batch\""), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("bad.json"), std::string::npos) << error.what();
  }
}

TEST(RunFolders, RunsStartedTogetherGetTheirOwnFolders) {
  test::TempDir dir;
  const auto a = new_run_dir(dir.path(), "lenet5_cpu");
  const auto b = new_run_dir(dir.path(), "lenet5_cpu");
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::filesystem::is_directory(a));
  EXPECT_TRUE(std::filesystem::is_directory(b));
}

// A ustar header block for a regular file.
std::vector<uint8_t> tar_entry(const std::string& path, const std::string& body) {
  std::vector<uint8_t> block(512, 0);
  std::copy(path.begin(), path.end(), block.begin());
  std::snprintf(reinterpret_cast<char*>(block.data()) + 124, 12, "%011o", unsigned(body.size()));
  block[156] = '0';
  std::copy_n("ustar", 5, block.begin() + 257);
  block.insert(block.end(), body.begin(), body.end());
  block.resize((block.size() + 511) / 512 * 512, 0);
  return block;
}

TEST(MnistFiles, UntarTakesTheWantedFilesAndRejectsACutArchive) {
  std::vector<uint8_t> archive = tar_entry("package/data/a", "hello");
  const auto other = tar_entry("package/readme", "skip me");
  archive.insert(archive.end(), other.begin(), other.end());
  const auto b = tar_entry("package/data/b", std::string(700, 'x'));
  archive.insert(archive.end(), b.begin(), b.end());
  archive.resize(archive.size() + 1024, 0);
  const auto want = [](const std::string& p) { return p.rfind("package/data/", 0) == 0; };
  const auto files = data::untar(archive, want, "t.tar");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(std::string(files.at("package/data/a").begin(), files.at("package/data/a").end()), "hello");
  EXPECT_EQ(files.at("package/data/b").size(), 700u);
  archive.resize(512 + 300);  // cut inside the first file's body
  EXPECT_THROW(data::untar(archive, want, "t.tar"), data::DataError);
}

TEST(MnistFiles, PresenceNeedsAllFourRawOrGzipped) {
  test::TempDir dir;
  std::string missing;
  EXPECT_FALSE(data::mnist_present(dir.path(), &missing));
  EXPECT_EQ(missing, "train-images-idx3-ubyte");
  test::write_mnist(dir.path(), test::synthetic_set(8, 1), test::synthetic_set(8, 2));
  EXPECT_TRUE(data::mnist_present(dir.path()));
  std::filesystem::rename(dir.path() / "t10k-labels-idx1-ubyte", dir.path() / "t10k-labels-idx1-ubyte.gz");
  EXPECT_TRUE(data::mnist_present(dir.path()));
}

}  // namespace
}  // namespace gpulab
