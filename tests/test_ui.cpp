// The window on Qt's offscreen platform: train from the UI on a tiny synthetic MNIST, plots that
// receive points, pause/resume/stop, exports, the layer editor's checks, failures that leave the
// window usable, missing data, races, and the MNIST downloader against file:// sources.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <sys/wait.h>
#include <zlib.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDoubleSpinBox>
#include <QFontInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest/QTest>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "engine/experiment.hpp"
#include "engine/run_record.hpp"
#include "engine/session.hpp"
#include "test_support.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"
#include "ui/chart_export.hpp"
#include "ui/chart_view.hpp"
#include "ui/compare_view.hpp"
#include "ui/data_fetcher.hpp"
#include "ui/device_picker.hpp"
#include "ui/experiment_panel.hpp"
#include "ui/layer_editor.hpp"
#include "ui/main_window.hpp"
#include "ui/plot_check.hpp"
#include "ui/race_panel.hpp"
#include "ui/run_store.hpp"
#include "ui/runs_panel.hpp"
#include "ui/status_widgets.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;

using test::wait_until;

std::string read_head(const QString& path, size_t bytes) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), std::streamsize(bytes));
  head.resize(size_t(in.gcount()));
  return head;
}

class Window : public test::WindowTest {
 protected:
  void SetUp() override {
    WindowTest::SetUp();
    window_ = std::make_unique<MainWindow>(options_);
    window_->show();
  }
  RunEntry* only_run() {
    auto entries = window_->store()->entries();
    return entries.size() == 1 ? entries[0] : nullptr;
  }
};

TEST_F(Window, BuildsWithEveryPartAndSaysWhyThereIsNoGpu) {
  EXPECT_TRUE(window_->train_button()->isEnabled());
  EXPECT_FALSE(window_->pause_button()->isEnabled());
  EXPECT_FALSE(window_->stop_button()->isEnabled());
  EXPECT_EQ(window_->live_charts().size(), 5u);
  EXPECT_EQ(window_->device_picker()->selected(), std::vector<std::string>{"cpu"});
  auto* reason = window_->findChild<QLabel*>("no-gpu-reason");
  ASSERT_NE(reason, nullptr);
  EXPECT_TRUE(reason->text().contains("no NVIDIA driver found")) << reason->text().toStdString();
  auto* gpu = window_->findChild<QCheckBox*>("device-no-gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->isEnabled());
  EXPECT_TRUE(window_->data_message().isEmpty());
}

TEST_F(Window, TrainsFromTheUiAndThePlotsReceivePoints) {
  small_setup(60);
  window_->train_button()->click();
  ASSERT_TRUE(window_->any_running());
  EXPECT_TRUE(window_->stop_button()->isEnabled());
  EXPECT_FALSE(window_->train_button()->isEnabled());
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));

  RunEntry* run = only_run();
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->data.status(), "finished") << run->data.info.dump();
  EXPECT_EQ(run->data.steps.size(), 60u);
  // Every 10 steps (10..50) and at each epoch's end (16 steps of 32 images: 16, 32, 48, and 60).
  EXPECT_EQ(run->data.evals.size(), 9u);
  EXPECT_FALSE(run->data.samples.empty());
  // The record on disk says the same.
  const RunData on_disk = load_run(run->data.dir);
  EXPECT_EQ(on_disk.status(), "finished");
  EXPECT_EQ(on_disk.steps.size(), 60u);

  ChartView* loss = window_->chart(ChartKind::Loss);
  ASSERT_FALSE(loss->chart().panels.empty());
  EXPECT_EQ(loss->chart().panels[0].lines[0].points.size(), 60u);
  EXPECT_EQ(loss->plot()->graph(0)->dataCount(), 60);
  ChartView* hardware = window_->chart(ChartKind::Gpu);
  EXPECT_TRUE(hardware->chart().panels[0].visible);  // CPU utilization
  EXPECT_GT(hardware->chart().panels[0].lines[0].points.size(), 0u);
  EXPECT_TRUE(window_->progress()->text(run->id).contains("finished")) << window_->progress()->text(run->id).toStdString();
  EXPECT_TRUE(window_->train_button()->isEnabled());
}

TEST_F(Window, PauseResumeAndStop) {
  small_setup(1'000'000);
  ASSERT_EQ(window_->start_training(), 1);
  RunEntry* run = only_run();
  ASSERT_TRUE(wait_until([&] { return run->data.steps.size() >= 20; }));

  window_->pause_button()->click();
  EXPECT_EQ(window_->pause_button()->text(), "Resume");
  wait_until([] { return false; }, 200ms);  // a step in flight ends and reaches the window
  const size_t paused_at = run->data.steps.size();
  wait_until([] { return false; }, 400ms);
  EXPECT_LE(run->data.steps.size(), paused_at + 1) << "steps went on while paused";

  window_->pause_button()->click();
  ASSERT_TRUE(wait_until([&] { return run->data.steps.size() > paused_at + 20; }));

  window_->stop_button()->click();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(run->data.status(), "cancelled");
  EXPECT_EQ(load_run(run->data.dir).status(), "cancelled");
}

TEST_F(Window, ExportsEveryChartAsPngPdfSvgAndCsv) {
  small_setup(40);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  test::TempDir out;
  QString error;
  const QString dir = QString::fromStdString(out.path().string());
  ASSERT_TRUE(window_->export_all(dir, &error)) << error.toStdString();
  for (const char* chart : {"loss", "accuracy", "throughput", "step-time", "gpu"}) {
    const QString base = dir + "/" + chart;
    EXPECT_EQ(read_head(base + ".png", 8), std::string("\x89PNG\r\n\x1a\n", 8)) << chart;
    EXPECT_EQ(read_head(base + ".pdf", 5), "%PDF-") << chart;
    EXPECT_NE(read_head(base + ".svg", 4096).find("<svg"), std::string::npos) << chart;
    EXPECT_EQ(read_head(base + ".csv", 30).substr(0, 17), "panel,run,series,") << chart;
    EXPECT_GT(QFileInfo(base + ".png").size(), 5000) << chart;
  }
  // The loss CSV holds every step with its smoothed value.
  std::ifstream csv((dir + "/loss.csv").toStdString());
  int rows = 0;
  for (std::string line; std::getline(csv, line);) rows += line.rfind("loss,", 0) == 0 && line.find(",loss,") != std::string::npos;
  EXPECT_EQ(rows, 40);

  // A folder that does not exist is a clear error, not a crash.
  ChartView* loss = window_->chart(ChartKind::Loss);
  EXPECT_FALSE(loss->export_to(dir + "/missing/loss.png", ExportFormat::Png, &error));
  EXPECT_TRUE(error.contains("does not exist")) << error.toStdString();
}

TEST_F(Window, LayerEditorExplainsInvalidLayersAndBlocksTraining) {
  ExperimentPanel* panel = window_->experiment();
  LayerEditor* layers = panel->layers();
  EXPECT_TRUE(layers->problem().isEmpty());
  const int64_t lenet_parameters = layers->parameter_count();
  EXPECT_EQ(lenet_parameters, 61706);

  layers->set_value(0, "kernel", 40);  // conv1: 40x40 kernel on a 28x28 image
  EXPECT_TRUE(layers->problem().contains("Layer 1 (conv1)")) << layers->problem().toStdString();
  EXPECT_TRUE(layers->problem().contains("larger than its input")) << layers->problem().toStdString();
  EXPECT_FALSE(window_->train_button()->isEnabled());
  EXPECT_EQ(window_->start_training(), 0);
  EXPECT_TRUE(window_->message().contains("larger than its input")) << window_->message().toStdString();

  layers->set_value(0, "kernel", 5);
  EXPECT_TRUE(layers->problem().isEmpty()) << layers->problem().toStdString();
  EXPECT_TRUE(window_->train_button()->isEnabled());

  // A linear layer on an unflattened input names the fix.
  const int rows = layers->table()->rowCount();
  layers->remove_layer(6);  // lenet5's flatten
  EXPECT_EQ(layers->table()->rowCount(), rows - 1);
  EXPECT_TRUE(layers->problem().contains("flatten")) << layers->problem().toStdString();
  layers->insert_layer(6, LayerType::Flatten);
  EXPECT_TRUE(layers->problem().isEmpty()) << layers->problem().toStdString();
  EXPECT_EQ(layers->parameter_count(), lenet_parameters);

  // Output shapes are shown per layer as the table changes.
  EXPECT_EQ(layers->table()->item(0, 6)->text(), "6×28×28");
  layers->move_layer(1, 1);  // tanh below the pool: same shapes, still valid
  EXPECT_TRUE(layers->problem().isEmpty());
}

TEST_F(Window, AFailingRunShowsItsMessageAndTheWindowKeepsWorking) {
  small_setup(200, 1e6f, OptimizerKind::SGD);  // diverges at once
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  RunEntry* failed = only_run();
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->data.status(), "failed");
  EXPECT_TRUE(window_->message().contains("loss became")) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("lower learning rate")) << window_->message().toStdString();
  EXPECT_EQ(load_run(failed->data.dir).status(), "failed");

  small_setup(20);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const auto runs = window_->store()->entries();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]->data.status(), "finished");
}

TEST_F(Window, MissingDataOffersToFetchOrChooseAFolder) {
  test::TempDir empty;
  options_.data_dir = empty.path();
  MainWindow window(options_);
  EXPECT_TRUE(window.data_message().contains("MNIST is not in")) << window.data_message().toStdString();
  auto* banner = window.findChild<Banner*>("data-message");
  ASSERT_NE(banner, nullptr);
  QStringList buttons;
  for (auto* b : banner->findChildren<QPushButton*>()) buttons << b->text();
  EXPECT_TRUE(buttons.contains("Fetch MNIST"));
  EXPECT_TRUE(buttons.contains("Choose folder…"));
  EXPECT_EQ(window.start_training(), 0);
  EXPECT_TRUE(window.store()->entries().empty()) << "no run record for a run that never started";
}

// Two CPU setups raced on one CPU: by default one after another, each measured alone.
TEST_F(Window, AFairRaceRunsSetupsThatShareTheCpuOneAfterAnother) {
  small_setup(60);
  RacePanel* race = window_->race();
  emit race->add_requested();
  Experiment e = window_->experiment()->experiment();
  e.train.batch = 64;
  window_->experiment()->set_experiment(e);
  emit race->add_requested();
  ASSERT_EQ(race->entries().size(), 2u);
  ASSERT_FALSE(race->run_at_once());
  ASSERT_EQ(window_->start_race(), 1) << "only the first setup starts";
  EXPECT_TRUE(window_->message().contains("Fair race")) << window_->message().toStdString();
  EXPECT_TRUE(window_->share_warning().isEmpty());
  EXPECT_TRUE(window_->any_running());
  int most_at_once = 0;
  ASSERT_TRUE(wait_until([&] {
    int live = 0;
    for (RunEntry* run : window_->store()->entries()) live += run->live ? 1 : 0;
    most_at_once = std::max(most_at_once, live);
    return !window_->any_running();
  }));
  EXPECT_EQ(most_at_once, 1);
  const auto runs = window_->store()->entries();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0]->data.dir, runs[1]->data.dir);
  for (RunEntry* run : runs) {
    EXPECT_EQ(run->data.status(), "finished");
    EXPECT_FALSE(run->data.info.contains("shared_hardware"));
  }
  // Both are overlaid, and the comparison has a row per run against the first, neither marked.
  EXPECT_EQ(window_->chart(ChartKind::Loss)->chart().runs.size(), 2u);
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_GT(rows[1].speedup, 0.0);
  for (const auto& row : rows)
    for (const auto& caveat : row.caveats)
      EXPECT_EQ(caveat.find("shared its hardware"), std::string::npos) << caveat;
}

// "Run at once": side by side, with a warning while they run and a mark that stays on the
// records, in Compare and in the lab report.
TEST_F(Window, ARaceRunAtOnceIsMarkedAsSharingTheCpuEverywhere) {
  small_setup(200);
  RacePanel* race = window_->race();
  emit race->add_requested();
  Experiment e = window_->experiment()->experiment();
  e.train.batch = 64;
  window_->experiment()->set_experiment(e);
  emit race->add_requested();
  auto* at_once = race->findChild<QCheckBox*>("race-at-once");
  ASSERT_NE(at_once, nullptr);
  at_once->setChecked(true);
  ASSERT_EQ(window_->start_race(), 2);
  EXPECT_TRUE(window_->share_warning().contains("share the CPU")) << window_->share_warning().toStdString();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const auto runs = window_->store()->entries();
  ASSERT_EQ(runs.size(), 2u);
  for (RunEntry* run : runs) {
    EXPECT_EQ(run->data.status(), "finished");
    ASSERT_TRUE(run->data.info.contains("shared_hardware")) << run->data.info.dump();
    const RunData on_disk = load_run(run->data.dir);
    EXPECT_EQ(on_disk.info["shared_hardware"]["concurrent_with"].size(), 1u);
  }
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    ASSERT_FALSE(row.caveats.empty());
    EXPECT_NE(row.caveats[0].find("shared its hardware with"), std::string::npos);
  }
  auto* table = window_->compare()->findChild<QTableWidget*>();
  ASSERT_NE(table, nullptr);
  EXPECT_TRUE(table->item(0, 0)->text().startsWith("⚠")) << table->item(0, 0)->text().toStdString();
  test::TempDir report;
  std::vector<const RunData*> data;
  for (RunEntry* run : runs) data.push_back(&run->data);
  QString error;
  const std::vector<QColor> colors = {Qt::red, Qt::blue};
  ASSERT_TRUE(write_lab_report(QString::fromStdString(report.path().string()), data, colors,
                               ChartOptions{}, &error))
      << error.toStdString();
  std::ifstream md(report.path() / "summary.md");
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("caveat:** shared its hardware with"), std::string::npos) << text;
}

TEST_F(Window, RunsFromEarlierSessionsAreListedRenamedAndDeleted) {
  small_setup(10);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const std::filesystem::path dir = only_run()->data.dir;
  window_.reset();

  window_ = std::make_unique<MainWindow>(options_);
  RunEntry* run = only_run();
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->data.dir, dir);
  EXPECT_EQ(run->data.steps.size(), 10u);
  EXPECT_EQ(window_->runs_panel()->tree()->topLevelItemCount(), 1);

  QString error;
  ASSERT_TRUE(window_->store()->rename(run->id, "my first run", &error)) << error.toStdString();
  EXPECT_EQ(load_run(dir).name(), "my first run");
  EXPECT_TRUE(window_->runs_panel()->tree()->topLevelItem(0)->text(0).startsWith("my first run"));

  ASSERT_TRUE(window_->store()->remove(run->id, &error)) << error.toStdString();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(window_->runs_panel()->tree()->topLevelItemCount(), 0);
}

TEST_F(Window, SetupsSaveAndLoadAsTheJsonTheCliReads) {
  small_setup(123, 0.02f, OptimizerKind::AdamW);
  test::TempDir dir;
  const QString path = QString::fromStdString((dir.path() / "setup.json").string());
  QString error;
  ASSERT_TRUE(window_->experiment()->save_file(path, &error)) << error.toStdString();
  const Experiment saved = load_experiment(path.toStdString());
  EXPECT_EQ(saved.model.layers.size(), preset("mlp").layers.size());
  EXPECT_EQ(saved.train.max_steps, 123);
  EXPECT_EQ(saved.train.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_EQ(model_to_json(load_model(path.toStdString()))["layers"], model_to_json(preset("mlp"))["layers"]);

  window_->experiment()->set_experiment(Experiment{preset("lenet5"), {}, {}});
  ASSERT_TRUE(window_->experiment()->load_file(path, &error)) << error.toStdString();
  EXPECT_EQ(window_->experiment()->experiment().train.max_steps, 123);
  EXPECT_FALSE(window_->experiment()->load_file(path + ".missing", &error));
  EXPECT_TRUE(error.contains("cannot be opened")) << error.toStdString();
}

TEST_F(Window, PresenterModeFillsTheScreenWithThePlots) {
  window_->set_presenter(true);
  EXPECT_FALSE(window_->findChild<QWidget*>("setup-column")->isVisible());
  EXPECT_FALSE(window_->runs_panel()->isVisible());
  EXPECT_TRUE(window_->train_button()->isVisible());
  window_->set_presenter(false);
  EXPECT_TRUE(window_->findChild<QWidget*>("setup-column")->isVisible());
}

// A finished run folder made without training: `steps` steps of `step_ms`, a test evaluation
// every 20 steps climbing to 99 %, a CPU sample every 0.1 s.
std::filesystem::path write_run(const std::filesystem::path& dir, int threads, int batch, int steps,
                                double step_ms, const std::string& created) {
  nlohmann::json info = {
      {"created", created},
      {"model", model_to_json(preset("lenet5"))},
      {"config",
       {{"device", "cpu"},
        {"threads", threads},
        {"batch", batch},
        {"optimizer", "adam"},
        {"lr", 0.001},
        {"precision", "fp32"}}},
      {"devices", {{{"id", "cpu"}, {"description", "CPU"}, {"cores", 8}}}},
      {"plan", {{"epochs", 1}, {"steps_per_epoch", steps}, {"total_steps", steps}}}};
  info["name"] = auto_run_name(info);
  RunRecorder recorder(dir, info);
  RunSummary summary;
  double time_s = 0, evaluating_s = 0;
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.epoch = 1;
    time_s += step_ms / 1000;
    m.time_s = time_s;
    m.loss = 2.3 / s;
    m.accuracy = 0.5;
    m.step_ms = step_ms;
    m.images_per_second = batch / (step_ms / 1000);
    m.times = {0.1 * step_ms, 0, 0.3 * step_ms, 0.5 * step_ms, 0, 0.1 * step_ms};
    recorder.on_step(m);
    if (s % 20 == 0) {
      time_s += 0.3;  // the evaluation
      evaluating_s += 0.3;
      recorder.on_eval({s, 1, time_s, Split::Test, 0.1, std::min(0.99, 0.9 + 0.02 * s / 20),
                        time_s - evaluating_s});
    }
    for (double t = time_s - step_ms / 1000; t < time_s; t += 0.1) {
      DeviceSample sample;
      sample.device = "cpu";
      sample.time_s = t;
      sample.util_percent = 50 + threads;
      sample.mem_used_bytes = 1 << 28;
      recorder.on_sample(sample);
    }
  }
  summary.status = RunStatus::Finished;
  summary.steps = steps;
  summary.images = int64_t(steps) * batch;
  summary.train_seconds = time_s - evaluating_s;
  summary.wall_seconds = time_s;
  recorder.finish(summary);
  return dir;
}

// Every chart the window shows now, with whatever text in it overlaps or is cut off.
QStringList window_layout_problems(MainWindow& window) {
  QStringList problems;
  std::vector<ChartView*> views = window.live_charts();
  views.push_back(window.compare()->speedup_chart());
  views.push_back(window.compare()->step_time_chart());
  for (ChartView* view : views) {
    if (!view->isVisible()) continue;
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    for (const QString& problem : layout_problems(*view->plot()))
      problems << QString("%1 at %2x%3: %4")
                      .arg(chart_kind_name(view->kind()))
                      .arg(view->plot()->width())
                      .arg(view->plot()->height())
                      .arg(problem);
  }
  return problems;
}

// The window at a screen's size, with runs of each kind this machine has (CPU runs on 1, 2 and 4
// threads), normal and presenter, live and Compare: no text overlaps or is cut off. With
// GPULAB_SCREENSHOTS set, each state is saved there as a PNG.
TEST(WindowLayout, NoTextOverlapsAt1280x720And1920x1080) {
  test::TempDir runs, data;
  test::write_mnist(data.path(), test::synthetic_set(64, 1), test::synthetic_set(32, 2));
  write_run(runs.path() / "a", 1, 64, 300, 20, "2026-01-01T10:00:00Z");
  write_run(runs.path() / "b", 2, 64, 300, 11, "2026-01-01T10:01:00Z");
  write_run(runs.path() / "c", 4, 64, 300, 6, "2026-01-01T10:02:00Z");
  const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS");
  for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)}) {
    WindowOptions options;
    options.runs_dir = runs.path();
    options.data_dir = data.path();
    options.devices = test::no_gpu_devices();
    MainWindow window(options);
    window.show_recent(3);
    window.resize(size);
    window.show();
    for (bool presenter : {false, true}) {
      window.set_presenter(presenter);
      window.showNormal();  // offscreen, "full screen" is whatever size it had
      window.resize(size);
      for (const char* tab : {"live", "compare"}) {
        window.show_tab(tab);
        wait_until([] { return false; }, 300ms);
        const QStringList problems = window_layout_problems(window);
        EXPECT_TRUE(problems.isEmpty()) << size.width() << "x" << size.height()
                                        << (presenter ? " presenter " : " ") << tab << ":\n"
                                        << problems.join("\n").toStdString();
        if (!shots.isEmpty())
          window.grab().save(QString("%1/window-%2x%3-%4-%5.png")
                                 .arg(shots)
                                 .arg(size.width())
                                 .arg(size.height())
                                 .arg(presenter ? "presenter" : "normal", tab));
      }
    }
  }
}

// The hardware chart of a run on two GPUs: a line for each GPU in every lane, told apart by shade
// and named in the legend; other programs' CPU time dashed in the run's colour beside its own.
TEST(HardwareChart, EachGpuHasItsLineAndOtherProgramsAreDashed) {
  RunData run;
  run.info = {{"name", "two gpus"}, {"config", {{"device", "cuda:0,1"}, {"batch", 64}}}};
  for (int s = 1; s <= 20; ++s) {
    StepMetrics m;
    m.step = s;
    m.time_s = 0.05 * s;
    m.loss = 1.0 / s;
    run.steps.push_back(m);
  }
  for (double t = 0; t < 1.0; t += 0.1)
    for (const char* device : {"cpu", "cpu-others", "cuda:0", "cuda:1"}) {
      DeviceSample sample;
      sample.device = device;
      sample.time_s = t;
      sample.util_percent = device[0] == 'c' && device[1] == 'u' ? 80 : 30;
      if (device[1] == 'u') {
        sample.mem_used_bytes = 2.0 * (1 << 30);
        sample.power_w = 250;
        sample.temperature_c = 55;
      }
      run.samples.push_back(sample);
    }
  const Chart chart = build_chart(ChartKind::Gpu, {&run}, ChartOptions{});
  QCustomPlot plot;
  plot.resize(1200, 900);
  DrawnChart drawn = draw_chart(plot, chart, {run_color(3)}, PlotTheme{});
  plot.replot(QCustomPlot::rpImmediateRefresh);

  // The utilization lane's graphs, by device.
  std::map<std::string, const DrawnLine*> util;
  std::map<std::string, int> lanes_with;  // device -> lanes where it has a line with points
  for (const DrawnLine& line : drawn.lines) {
    const LineSeries& series = chart.panels[size_t(line.panel)].lines[size_t(line.line)];
    if (series.points.size() == 0) continue;
    ++lanes_with[series.device];
    if (line.panel == 0) util[series.device] = &line;
  }
  ASSERT_EQ(util.size(), 4u);
  EXPECT_EQ(lanes_with["cuda:0"], 4) << "utilization, memory, power and temperature";
  EXPECT_EQ(lanes_with["cuda:1"], 4);
  const QPen cpu = util["cpu"]->raw->pen(), others = util["cpu-others"]->raw->pen();
  EXPECT_EQ(cpu.style(), Qt::SolidLine);
  EXPECT_EQ(others.style(), Qt::DashLine);
  EXPECT_EQ(others.color(), cpu.color()) << "other programs are drawn in the run's colour";
  EXPECT_TRUE(util["cpu-others"]->label.startsWith("two gpus · other programs"))
      << util["cpu-others"]->label.toStdString();
  EXPECT_NE(util["cuda:0"]->raw->pen().color(), util["cuda:1"]->raw->pen().color());
  EXPECT_TRUE(util["cuda:1"]->label.contains("cuda:1")) << util["cuda:1"]->label.toStdString();

  QStringList legend;
  ASSERT_NE(drawn.legend, nullptr);
  for (int i = 0; i < drawn.legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(drawn.legend->item(i)))
      legend << item->plottable()->name();
  EXPECT_TRUE(legend.contains("two gpus · other programs")) << legend.join(" | ").toStdString();
  EXPECT_TRUE(legend.contains("two gpus · cuda:0")) << legend.join(" | ").toStdString();
  EXPECT_TRUE(legend.contains("two gpus · cuda:1")) << legend.join(" | ").toStdString();
  const QStringList problems = layout_problems(plot);
  EXPECT_TRUE(problems.isEmpty()) << problems.join("\n").toStdString();
}

// gpulab-cli export's charts of 21 runs: names and bar labels readable, colours all different.
TEST(ExportLayout, TwentyOneRunsStayReadable) {
  test::TempDir runs;
  std::vector<RunData> loaded;
  for (int r = 0; r < 21; ++r) {
    const auto dir = write_run(runs.path() / ("r" + std::to_string(r)), 1 + r % 8, 32 << (r / 8),
                               60, 5 + r, "2026-01-01T10:00:00Z");
    loaded.push_back(load_run(dir));
  }
  std::vector<const RunData*> data;
  for (const RunData& run : loaded) data.push_back(&run);
  std::set<QRgb> colors;
  for (int r = 0; r < 21; ++r) colors.insert(run_color(r).rgb());
  EXPECT_EQ(colors.size(), 21u);
  for (ChartKind kind :
       {ChartKind::Speedup, ChartKind::StepTime, ChartKind::Loss, ChartKind::Throughput}) {
    for (XAxis x : {XAxis::Step, XAxis::Time}) {
      ChartOptions options;
      options.x = x;
      QCustomPlot plot;
      plot.resize(kExportWidth, kExportHeight);
      std::vector<QColor> palette;
      for (int r = 0; r < 21; ++r) palette.push_back(run_color(r));
      draw_chart(plot, build_chart(kind, data, options), palette, PlotTheme{});
      plot.replot(QCustomPlot::rpImmediateRefresh);
      const QStringList problems = layout_problems(plot);
      EXPECT_TRUE(problems.isEmpty()) << chart_kind_name(kind) << ":\n"
                                      << problems.join("\n").toStdString();
    }
  }
}

TEST_F(Window, RunColoursAreDistinctAndTicksBaselineAndSetupSurviveARestart) {
  for (int r = 0; r < 12; ++r)
    write_run(runs_.path() / ("r" + std::to_string(r)), 1 + r, 64, 30, 5,
              "2026-01-01T10:00:" + std::to_string(10 + r) + "Z");
  window_ = std::make_unique<MainWindow>(options_);
  window_->show_recent(12);
  std::set<QRgb> shown;
  for (RunEntry* e : window_->store()->checked()) shown.insert(e->color.rgb());
  EXPECT_EQ(shown.size(), 12u) << "two shown runs share a colour";
  // Untick all but two, make the second of them the baseline, change the setup and the target.
  auto entries = window_->store()->entries();
  for (size_t i = 2; i < entries.size(); ++i) window_->store()->set_checked(entries[i]->id, false);
  const std::string baseline_dir = entries[1]->data.dir.string();
  const QRgb color = entries[0]->color.rgb();
  window_->runs_panel()->set_baseline(entries[1]->id);
  small_setup(77);
  window_->compare()->target_box()->setValue(95);
  window_.reset();

  window_ = std::make_unique<MainWindow>(options_);
  const auto checked = window_->store()->checked();
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_EQ(checked[1]->color.rgb(), color);
  EXPECT_EQ(
      window_->compare()->runs()[size_t(window_->compare()->baseline_index())]->data.dir.string(),
      baseline_dir);
  EXPECT_EQ(window_->experiment()->experiment().train.max_steps, 77);
  EXPECT_DOUBLE_EQ(window_->compare()->target_accuracy(), 0.95);
  EXPECT_DOUBLE_EQ(window_->experiment()->experiment().train.target_accuracy, 0.95);
}

TEST_F(Window, TheBaselineListOffersEveryRun) {
  write_run(runs_.path() / "a", 1, 64, 30, 5, "2026-01-01T10:00:00Z");
  write_run(runs_.path() / "b", 2, 64, 30, 5, "2026-01-01T10:01:00Z");
  write_run(runs_.path() / "c", 4, 64, 30, 5, "2026-01-01T10:02:00Z");
  window_ = std::make_unique<MainWindow>(options_);
  window_->show_recent(1);  // only c
  EXPECT_EQ(window_->compare()->baseline_box()->count(), 3);
  // Choosing an unticked run puts it in the comparison as the baseline.
  const int a = window_->store()->entries().back()->id;
  window_->runs_panel()->set_baseline(a);
  ASSERT_EQ(window_->compare()->runs().size(), 2u);
  EXPECT_EQ(window_->compare()->runs()[size_t(window_->compare()->baseline_index())]->id, a);
}

TEST_F(Window, StatusLineCompareAndReportGiveOneTimeToTarget) {
  small_setup(60);
  window_->compare()->target_box()->setValue(1.0);  // reached at the first evaluation
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  RunEntry* run = only_run();
  ASSERT_NE(run, nullptr);
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 1u);
  const QString seconds = QString::number(rows[0].time_to_target_s, 'f', 2);
  const QString status = window_->progress()->text(run->id);
  EXPECT_TRUE(status.contains("1.0 % after " + seconds + " s"))
      << status.toStdString() << " vs " << seconds.toStdString();
  bool in_table = false;
  for (int c = 0; c < window_->compare()->table()->columnCount(); ++c)
    in_table |= window_->compare()->table()->item(0, c)->text() == seconds + " s";
  EXPECT_TRUE(in_table);
  test::TempDir report;
  QString error;
  std::vector<const RunData*> runs{&run->data};
  ChartOptions options;
  options.target_accuracy = window_->compare()->target_accuracy();
  ASSERT_TRUE(
      write_lab_report(QString::fromStdString(report.path().string()), runs, {}, options, &error))
      << error.toStdString();
  std::ifstream summary(report.path() / "summary.md");
  const std::string md((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("| " + seconds.toStdString() + " s |"), std::string::npos) << md;
  // And run.json's summary, which gpulab-cli prints, says the same.
  EXPECT_EQ(QString::number(
                load_run(run->data.dir).info["summary"]["time_to_target_s"].get<double>(), 'f', 2),
            seconds);
}

TEST_F(Window, PresenterModeShowsTheKeyFiguresLargeAndNamesSayTheThreads) {
  window_->set_presenter(true);
  small_setup(40);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  RunEntry* run = only_run();
  EXPECT_NE(run->data.name().find("1 thread"), std::string::npos) << run->data.name();
  // The status line made after presenter mode was turned on is as large as the rest.
  QLabel* status = nullptr;
  for (QLabel* label : window_->progress()->findChildren<QLabel*>())
    if (label->text().contains("finished")) status = label;
  ASSERT_NE(status, nullptr);
  EXPECT_GE(QFontInfo(status->font()).pointSizeF(),
            1.4 * QFontInfo(QApplication::font()).pointSizeF());
  EXPECT_TRUE(window_->key_numbers().contains("images/s")) << window_->key_numbers().toStdString();
  auto* key = window_->findChild<QLabel*>("key-numbers");
  EXPECT_GE(QFontInfo(key->font()).pointSizeF(), 2 * QFontInfo(QApplication::font()).pointSizeF());
  // The presenter picks the runs shown from the menu.
  QMenu* menu = window_->runs_button()->menu();
  ASSERT_EQ(menu->actions().size(), 1);
  EXPECT_TRUE(window_->runs_button()->isVisible());
  menu->actions()[0]->setChecked(false);
  ASSERT_TRUE(wait_until([&] { return window_->store()->checked().empty(); }, 2s));
}

// Issue 9.7: a value typed out of range is clamped with a word on the message bar, naming the
// field, the typed value and the limit; so is one from a loaded setup.
TEST_F(Window, ClampedValuesAreNamedOnTheMessageBar) {
  auto* batch = window_->findChild<QSpinBox*>("batch");
  ASSERT_NE(batch, nullptr);
  batch->setFocus();
  QTest::keyClick(batch, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(batch, "100000");
  QTest::keyClick(batch, Qt::Key_Return);
  EXPECT_EQ(batch->value(), 65536);
  for (const char* part : {"Batch size", "100000", "65536"})
    EXPECT_TRUE(window_->message().contains(part))
        << part << ": " << window_->message().toStdString();

  auto* lr = window_->findChild<QDoubleSpinBox*>("lr");
  ASSERT_NE(lr, nullptr);
  lr->setFocus();
  QTest::keyClick(lr, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(lr, "500");
  QTest::keyClick(lr, Qt::Key_Enter);
  EXPECT_DOUBLE_EQ(lr->value(), 100.0);
  EXPECT_TRUE(window_->message().contains("Learning rate: 500"))
      << window_->message().toStdString();

  Experiment e = window_->experiment()->experiment();
  e.train.max_steps = 20'000'000;
  window_->experiment()->set_experiment(e);
  EXPECT_TRUE(window_->message().contains("Step limit: 20000000"))
      << window_->message().toStdString();
}

// Issue 9.7: a learning rate of 5 leaves LeNet-5's loss finite but far above its start: flagged in
// the list, the comparison and the lab report, with a hint about the learning rate.
TEST_F(Window, ADivergedRunIsMarkedAsSuchEverywhere) {
  small_setup(150, 5.0f, OptimizerKind::Adam);
  Experiment e = window_->experiment()->experiment();
  e.model = preset("lenet5");
  window_->experiment()->set_experiment(e);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  RunEntry* run = only_run();
  ASSERT_NE(run, nullptr);
  const RunData on_disk = load_run(run->data.dir);
  EXPECT_EQ(on_disk.info["summary"]["diverged"], true) << on_disk.info.dump();
  EXPECT_TRUE(window_->message().contains("lower learning rate"))
      << window_->message().toStdString();
  QTreeWidgetItem* row = window_->runs_panel()->tree()->topLevelItem(0);
  // (a " ⚠" may follow where other programs loaded the CPU meanwhile, as under ctest -j2)
  EXPECT_TRUE(row->text(3).startsWith("diverged")) << row->text(3).toStdString();
  EXPECT_TRUE(row->toolTip(3).contains("--lr 5")) << row->toolTip(3).toStdString();
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "diverged");
  test::TempDir report;
  QString error;
  ASSERT_TRUE(write_lab_report(QString::fromStdString(report.path().string()), {&run->data},
                               {run->color}, ChartOptions{}, &error, nullptr))
      << error.toStdString();
  std::ifstream summary(report.path() / "summary.md");
  const std::string text{std::istreambuf_iterator<char>(summary), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("status: diverged"), std::string::npos) << text;
}

// Issue 9.10: a paused run says so in the list.
TEST_F(Window, APausedRunIsListedAsPaused) {
  small_setup(1'000'000);
  ASSERT_EQ(window_->start_training(), 1);
  RunEntry* run = only_run();
  ASSERT_TRUE(wait_until([&] { return run->data.steps.size() >= 5; }));
  QTreeWidgetItem* row = window_->runs_panel()->tree()->topLevelItem(0);
  window_->pause_button()->click();
  EXPECT_EQ(row->text(3), "paused");
  window_->pause_button()->click();
  EXPECT_EQ(row->text(3), "running");
}

// Issue 9.10: one CPU thread is "1 thread", in the device picker and in the run's device.
TEST_F(Window, OneCpuThreadIsSingular) {
  auto* threads = window_->findChild<QSpinBox*>("cpu-threads");
  ASSERT_NE(threads, nullptr);
  small_setup(5);
  EXPECT_EQ(threads->text(), "1 thread");
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(window_->runs_panel()->tree()->topLevelItem(0)->text(1), "cpu (1 thread)");
  window_->device_picker()->set_threads(2);
  EXPECT_EQ(threads->text(), std::max(1, cpu_info().logical_cores) >= 2 ? "2 threads" : "1 thread");
}

// Issue 9.10: at the window's default size the Layers tab shows every column, and after a layer
// that does not fit, later rows show a dash rather than shapes computed as if it were not there.
TEST_F(Window, LayersTabShowsEveryColumnAndDashesAfterAnError) {
  window_->experiment()->setCurrentIndex(1);
  LayerEditor* layers = window_->experiment()->layers();
  QTableWidget* table = layers->table();
  wait_until([] { return false; }, 100ms);
  QHeaderView* header = table->horizontalHeader();
  for (int column : {6, 7})
    EXPECT_LE(header->sectionViewportPosition(column) + header->sectionSize(column),
              table->viewport()->width())
        << "column " << column << " is behind the scrollbar";

  layers->set_value(0, "kernel", 40);
  EXPECT_EQ(table->item(0, 6)->text(), "?");
  for (int r = 1; r < table->rowCount(); ++r) {
    EXPECT_EQ(table->item(r, 6)->text(), "–") << "row " << r;
    EXPECT_EQ(table->item(r, 7)->text(), "–") << "row " << r;
  }
  layers->set_value(0, "kernel", 5);
  EXPECT_EQ(table->item(1, 6)->text(), "6×28×28");
}

// Issue 9.8: the README's demos are shipped and found; on a machine without a GPU the race runs
// its CPU half and says why.
TEST_F(Window, ShippedDemosAreFoundAndRunWithoutAGpu) {
  QString error;
  ASSERT_TRUE(window_->open_setup("race.json", &error)) << error.toStdString();
  EXPECT_TRUE(window_->message().contains("cuda:0")) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("no GPU")) << window_->message().toStdString();
  EXPECT_EQ(window_->device_picker()->selected(), std::vector<std::string>{"cpu"});
  EXPECT_TRUE(window_->race()->entries().empty());
  EXPECT_EQ(window_->experiment()->experiment().model.name, "lenet5");

  ASSERT_TRUE(window_->open_setup("cpu-threads", &error)) << error.toStdString();
  const auto& race = window_->race()->entries();
  ASSERT_EQ(race.size(), 2u);
  EXPECT_EQ(race[0].backend.threads, 1);
  EXPECT_EQ(race[1].backend.threads, std::max(1, cpu_info().logical_cores));

  EXPECT_FALSE(window_->open_setup("no-such-demo", &error));
  EXPECT_TRUE(error.contains("race")) << "the error lists the demos: " << error.toStdString();

  // Every setup the README's command lines name exists and opens.
  const auto source = std::filesystem::path(GPULAB_TEST_DATA_DIR).parent_path().parent_path();
  std::ifstream readme(source / "README.md");
  int named = 0;
  for (std::string line; std::getline(readme, line);) {
    const auto at = line.find("--setup ");
    if (at == std::string::npos || line.find("build/app/gpulab") == std::string::npos) continue;
    std::string file = line.substr(at + 8);
    file = file.substr(0, file.find(' '));
    ++named;
    EXPECT_TRUE(window_->open_setup(QString::fromStdString((source / file).string()), &error))
        << file << ": " << error.toStdString();
  }
  EXPECT_GE(named, 1);
}

// The window's own flags: a bad one gets one line naming it and exit code 2, before any run.
TEST(WindowFlags, BadFlagsAreNamedAndNothingStarts) {
  test::TempDir runs;
  auto gpulab = [&](const std::string& args) {
    const std::string command = "QT_QPA_PLATFORM=offscreen " + std::string(GPULAB_GUI_PATH) +
                                " --runs-dir " + runs.path().string() + " " + args + " 2>&1";
    std::FILE* pipe = popen(command.c_str(), "r");
    std::string output;
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int status = pclose(pipe);
    return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
  };
  for (const auto& [args, mention] :
       std::vector<std::pair<std::string, std::string>>{{"--tab nope", "--tab"},
                                                        {"--show-recent x", "--show-recent"},
                                                        {"--setup /nonexistent.json", "/nonexistent.json"},
                                                        {"--telemetry-hz 0", "--telemetry-hz"},
                                                        {"--device cuda:7 --train", "--device cuda:7"}}) {
    const auto [code, output] = gpulab(args);
    EXPECT_EQ(code, 2) << args << "\n" << output;
    EXPECT_NE(output.find(mention), std::string::npos) << args << "\n" << output;
  }
  EXPECT_TRUE(std::filesystem::is_empty(runs.path())) << "a refused start made a run";
}

// The window's exports are checked as gpulab-cli's are: a chart saved over a run's record is
// refused with the reason, and the record is kept.
TEST(ChartFiles, AnExportNeverReplacesARunsRecord) {
  test::TempDir dir;
  {
    RunRecorder record(dir.path() / "run", {{"name", "a"}});
    StepMetrics step;
    step.step = 1;
    step.loss = 2;
    record.on_step(step);
    RunSummary summary;
    summary.status = RunStatus::Finished;
    record.finish(summary);
  }
  const RunData run = load_run(dir.path() / "run");
  for (const char* file : {"metrics.csv", "run.json"}) {
    const QString path = QString::fromStdString((dir.path() / "run" / file).string());
    QString error;
    EXPECT_FALSE(
        export_chart(ChartKind::Loss, {&run}, {}, ChartOptions{}, path, ExportFormat::Csv, &error));
    EXPECT_TRUE(error.contains("is a file of the run folder")) << error.toStdString();
  }
  const RunData after = load_run(dir.path() / "run");
  EXPECT_EQ(after.status(), "finished");
  EXPECT_EQ(after.steps.size(), 1u);
}

// --runs-dir naming a file or a folder that is not there says so, rather than showing an empty
// list (the window is never shown: `timeout` ends a start that was not refused).
TEST(WindowFlags, ARunsFolderThatIsAFileOrMissingIsNamed) {
  test::TempDir dir;
  std::ofstream(dir.path() / "file") << "not a folder";
  for (const auto& [runs, mention] : std::vector<std::pair<std::string, std::string>>{
           {(dir.path() / "file").string(), ": is a file, not a folder of runs"},
           {(dir.path() / "missing").string(), ": no such folder; create it first"}}) {
    const std::string command = "QT_QPA_PLATFORM=offscreen timeout 20 " +
                                std::string(GPULAB_GUI_PATH) + " --runs-dir " + runs + " 2>&1";
    std::FILE* pipe = popen(command.c_str(), "r");
    std::string output;
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int status = pclose(pipe);
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << output;
    EXPECT_NE(output.find("--runs-dir " + runs + mention), std::string::npos) << output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));
}

// --- The downloader, against file:// sources --------------------------------------------

void write_gzip(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  gzFile out = gzopen(path.c_str(), "wb");
  gzwrite(out, bytes.data(), unsigned(bytes.size()));
  gzclose(out);
}

std::vector<uint8_t> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DataFetcher, FetchesFromAMirrorChecksSumsAndLeavesNoBadFile) {
  test::TempDir source, mirror, target;
  test::write_mnist(source.path(), test::synthetic_set(16, 1), test::synthetic_set(8, 2));
  std::map<std::string, std::string> sums;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    const auto bytes = file_bytes(source.path() / name);
    write_gzip(mirror.path() / (std::string(name) + ".gz"), bytes);
    const QByteArray raw(reinterpret_cast<const char*>(bytes.data()), qsizetype(bytes.size()));
    sums[name] = QCryptographicHash::hash(raw, QCryptographicHash::Sha256).toHex().toStdString();
  }
  const QString mirror_url = QUrl::fromLocalFile(QString::fromStdString(mirror.path().string())).toString();

  // A wrong sum for one file: that file is refused and nothing half-written stays behind.
  {
    DataFetcher fetcher(target.path() / "bad");
    auto wrong = sums;
    wrong["t10k-labels-idx1-ubyte"] = std::string(64, '0');
    fetcher.set_expected(wrong);
    fetcher.set_sources("", {mirror_url});
    bool done = false, ok = true;
    QString message;
    QObject::connect(&fetcher, &DataFetcher::finished, [&](bool success, const QString& text) {
      done = true;
      ok = success;
      message = text;
    });
    fetcher.start();
    ASSERT_TRUE(wait_until([&] { return done; }, 30s));
    EXPECT_FALSE(ok);
    EXPECT_TRUE(message.contains("wrong SHA-256")) << message.toStdString();
    EXPECT_FALSE(std::filesystem::exists(target.path() / "bad" / "t10k-labels-idx1-ubyte"));
    for (const auto& entry : std::filesystem::directory_iterator(target.path() / "bad"))
      EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
  }
  // The right sums: every file arrives, with progress reported on the way.
  DataFetcher fetcher(target.path() / "good");
  fetcher.set_expected(sums);
  fetcher.set_sources("", {"file:///nonexistent-mirror", mirror_url});
  bool done = false, ok = false;
  int progress_reports = 0;
  QObject::connect(&fetcher, &DataFetcher::progress, [&](qint64, qint64, const QString&) { ++progress_reports; });
  QObject::connect(&fetcher, &DataFetcher::finished, [&](bool success, const QString&) {
    done = true;
    ok = success;
  });
  fetcher.start();
  ASSERT_TRUE(wait_until([&] { return done; }, 30s));
  EXPECT_TRUE(ok);
  EXPECT_GT(progress_reports, 0);
  const data::MnistData loaded = data::load_mnist(target.path() / "good");
  EXPECT_EQ(loaded.train.count, 16);
  EXPECT_EQ(loaded.test.count, 8);
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv);
}
