// The window on Qt's offscreen platform: train from the UI on a tiny synthetic MNIST, plots that
// receive points, pause/resume/stop, exports, the layer editor's checks, failures that leave the
// window usable, missing data, races, and the MNIST downloader against file:// sources.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <sys/wait.h>
#include <zlib.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFontInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtTest/QTest>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <thread>
#include <tuple>

#include "bad_inputs.hpp"
#include "damaged_runs.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/session.hpp"
#include "engine/training/experiment.hpp"
#include "recorded_runs.hpp"
#include "test_support.hpp"
#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/plot_check.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/fetch/data_fetcher.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/demo_setups.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/layer_editor.hpp"
#include "ui/setup/limited_spin_box.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/guarded_application.hpp"
#include "ui/window/main_window.hpp"
#include "ui/window/window_state.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;

using test::type_into;
using test::wait_until;
using test::write_run;

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
    open_window();
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
  for (const char* chart : {"loss", "accuracy", "throughput", "step-time", "hardware", "speedup"}) {
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
  // Issue 16.5: the race has ended: nothing is left "to go".
  EXPECT_FALSE(window_->message().contains("more to go")) << window_->message().toStdString();
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

// A race ends saying its verdict: the second setup's images/s over the first's, worked out here
// from their records as every view gives a run's pace (issue 40.3: a step's images over the
// median step's time), measured one after another. Its setups stay in the Race list,
// so ticking Run at once and clicking Start race reruns them side by side, and that verdict says
// they are not comparable.
TEST_F(Window, ARaceSaysItsVerdictAndKeepsItsSetupsToRunAtOnce) {
  small_setup(30);
  RacePanel* race = window_->race();
  QPushButton* add = nullptr;
  for (QPushButton* button : race->findChildren<QPushButton*>())
    if (button->text() == "Add setup") add = button;
  ASSERT_NE(add, nullptr);
  QTest::mouseClick(add, Qt::LeftButton);
  Experiment e = window_->experiment()->experiment();
  e.train.batch = 64;
  window_->experiment()->set_experiment(e);
  QTest::mouseClick(add, Qt::LeftButton);
  ASSERT_EQ(race->entries().size(), 2u);
  const std::string first = race->entries()[0].name, second = race->entries()[1].name;
  auto* start = race->findChild<QPushButton*>("start-race");
  ASSERT_NE(start, nullptr);
  QTest::mouseClick(start, Qt::LeftButton);
  ASSERT_TRUE(window_->any_running());
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  double images_per_second[2] = {0, 0};
  bool under_load = false;  // other programs (a build beside the test) may load this machine
  for (RunEntry* run : window_->store()->entries()) {
    const RunData on_disk = load_run(run->data.dir);
    const double per_step = on_disk.info["summary"]["images"].get<double>() /
                            on_disk.info["summary"]["steps"].get<double>();
    images_per_second[run->data.name() == first ? 0 : 1] =
        1000.0 * per_step / median_step(on_disk).step_ms;
    under_load =
        under_load ||
        on_disk.info.value("outside_load", nlohmann::json::object()).value("under_load", false);
  }
  ASSERT_GT(images_per_second[0], 0);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", images_per_second[1] / images_per_second[0]);
  const std::string verdict =
      under_load ? "Race: ⚠ not comparable: measured under outside load"
                 : "Race: " + second + ": " + ratio + " " + first + ", measured one after another";
  EXPECT_TRUE(window_->message().contains(QString::fromStdString(verdict)))
      << verdict << "\n"
      << window_->message().toStdString();

  ASSERT_EQ(race->entries().size(), 2u) << "the race keeps its setups";
  auto* at_once = race->findChild<QCheckBox*>("race-at-once");
  ASSERT_NE(at_once, nullptr);
  QTest::mouseClick(at_once, Qt::LeftButton);
  ASSERT_TRUE(at_once->isChecked());
  QTest::mouseClick(start, Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(window_->store()->entries().size(), 4u);
  EXPECT_TRUE(window_->message().contains("Race: ⚠ not comparable: shared hardware"))
      << window_->message().toStdString();
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

  make_window();
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

// A run whose folder is deleted outside the window (a file manager, rm -r) leaves the list: it
// used to stay listed, and drawn, from a folder no longer there.
TEST_F(Window, ARunWhoseFolderIsDeletedOutsideTheWindowLeavesTheList) {
  write_run(runs_.path() / "kept", 1, 64, 20, 5, "2026-01-01T10:00:00Z");
  write_run(runs_.path() / "deleted", 1, 64, 20, 5, "2026-01-01T10:01:00Z");
  ASSERT_TRUE(wait_until([&] { return window_->store()->entries().size() == 2; }, 10s));
  std::filesystem::remove_all(runs_.path() / "deleted");
  ASSERT_TRUE(wait_until([&] { return window_->store()->entries().size() == 1; }, 10s));
  EXPECT_EQ(window_->store()->entries()[0]->data.dir.filename(), "kept");
  EXPECT_TRUE(
      wait_until([&] { return window_->runs_panel()->tree()->topLevelItemCount() == 1; }, 5s));
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

// What a setup holds that no field shows (planned learning rates, stop at an accuracy, the Step
// schedule's gamma) is said under the fields and kept for the runs it starts, not dropped; Forget
// drops it. A run's learning rates changed while it trained come back as the plan of its setup.
TEST_F(Window, SettingsNoFieldShowsAreSaidKeptAndForgotten) {
  test::TempDir dir;
  const auto path = dir.path() / "setup.json";
  std::ofstream(path) << R"({"name": "mlp", "layers": [{"type": "flatten"},
    {"type": "linear", "out_features": 10}], "train": {"batch": 32, "max_steps": 8, "epochs": 0,
    "optimizer": "sgd", "lr": 0.01, "gamma": 0.5, "stop_at_accuracy": 0.999,
    "lr_changes": [{"step": 3, "lr": 0.2}]}})";
  QString error;
  ASSERT_TRUE(window_->experiment()->load_file(QString::fromStdString(path.string()), &error))
      << error.toStdString();
  auto* kept = window_->findChild<QWidget*>("setup-kept");
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(kept->isVisible());
  const QString text = window_->experiment()->kept_text();
  for (const char* part :
       {"learning rate 0.2 from step 3", "stop at 99.9 % test accuracy", "gamma 0.5"})
    EXPECT_TRUE(text.contains(part)) << part << " in " << text.toStdString();

  ASSERT_EQ(window_->start_training(), 1) << window_->message().toStdString();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  RunEntry* run = window_->store()->entries().front();
  ASSERT_EQ(run->data.lr_changes.size(), 1u);
  EXPECT_EQ(run->data.lr_changes[0].step, 3);
  EXPECT_EQ(run->data.lr_changes[0].lr, 0.2);
  EXPECT_DOUBLE_EQ(run->data.info["config"]["stop_at_accuracy"].get<double>(), 0.999);
  EXPECT_FLOAT_EQ(run->data.info["config"]["gamma"].get<float>(), 0.5f);

  auto* forget = window_->findChild<QPushButton*>("setup-kept-forget");
  ASSERT_NE(forget, nullptr);
  QTest::mouseClick(forget, Qt::LeftButton, {}, forget->rect().center());
  EXPECT_FALSE(kept->isVisible());
  EXPECT_TRUE(window_->experiment()->kept_text().isEmpty());
  EXPECT_TRUE(window_->experiment()->experiment().train.lr_changes.empty());
  EXPECT_EQ(window_->experiment()->experiment().train.stop_at_accuracy, 0.0);

  // The run's own setup plans its change again.
  emit window_->runs_panel()->use_setup_requested(run->id);
  EXPECT_TRUE(kept->isVisible());
  const std::vector<PlannedLr> plan = window_->experiment()->experiment().train.lr_changes;
  EXPECT_EQ(plan, (std::vector<PlannedLr>{{3, 0.2}}));
}

// The Data and kernels box on a machine without a GPU: the input pipeline is chosen by a click
// and is the run's own (its run.json says so); the GPU-only choices are greyed and say why; a
// setup's gradient bucket size, which no field shows, is said, kept for the run, and forgotten.
TEST_F(Window, TheInputPipelineIsChosenByAClickAndTheGpuOnlyChoicesSayWhyTheyAreGreyed) {
  small_setup(4);
  for (const char* name : {"precision", "conv", "data-on"}) {
    auto* box = window_->findChild<QComboBox*>(name);
    ASSERT_NE(box, nullptr) << name;
    EXPECT_FALSE(box->isEnabled()) << name;
    EXPECT_TRUE(box->toolTip().startsWith("GPU only: tick a GPU to choose. A CPU run trains"))
        << name << ": " << box->toolTip().toStdString();
  }
  auto* graphs = window_->findChild<QCheckBox*>("cuda-graphs");
  ASSERT_NE(graphs, nullptr);
  EXPECT_FALSE(graphs->isEnabled());
  auto* preprocess = window_->findChild<QComboBox*>("preprocess");
  ASSERT_NE(preprocess, nullptr);
  ASSERT_TRUE(preprocess->isEnabled());
  test::choose_in_combo(preprocess, "augmented per batch");
  ASSERT_EQ(window_->start_training(), 1) << window_->message().toStdString();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const RunEntry* run = window_->store()->entries().front();
  EXPECT_EQ(run->data.info["config"].value("preprocess", ""), "per-batch");
  EXPECT_EQ(run->data.info["config"].value("precision", ""), "fp32");

  test::TempDir dir;
  const auto path = dir.path() / "buckets.json";
  std::ofstream(path) << R"({"name": "mlp", "layers": [{"type": "flatten"},
    {"type": "linear", "out_features": 10}], "train": {"batch": 32, "max_steps": 2, "epochs": 0,
    "preprocess": "once", "bucket_mb": 4, "collective_timeout_s": 9}})";
  QString error;
  ASSERT_TRUE(window_->open_setup(QString::fromStdString(path.string()), &error))
      << error.toStdString();
  EXPECT_EQ(preprocess->currentData().toString(), "once");
  const QString kept = window_->experiment()->kept_text();
  EXPECT_TRUE(kept.contains("gradient buckets of 4 MiB")) << kept.toStdString();
  EXPECT_TRUE(kept.contains("replicas wait 9 s for each other")) << kept.toStdString();
  EXPECT_EQ(window_->experiment()->experiment().backend.bucket_mb, 4);
  auto* forget = window_->findChild<QPushButton*>("setup-kept-forget");
  QTest::mouseClick(forget, Qt::LeftButton, {}, forget->rect().center());
  EXPECT_EQ(window_->experiment()->experiment().backend.bucket_mb, BackendOptions{}.bucket_mb);
  EXPECT_EQ(window_->experiment()->experiment().backend.preprocess, Preprocess::Once);
}

TEST_F(Window, PresenterModeFillsTheScreenWithThePlots) {
  window_->set_presenter(true);
  EXPECT_FALSE(window_->findChild<QWidget*>("setup-column")->isVisible());
  EXPECT_FALSE(window_->runs_panel()->isVisible());
  EXPECT_TRUE(window_->train_button()->isVisible());
  window_->set_presenter(false);
  EXPECT_TRUE(window_->findChild<QWidget*>("setup-column")->isVisible());
}

// Every chart the window shows now, with whatever text in it overlaps or is cut off.
QStringList window_layout_problems(MainWindow& window) {
  QStringList problems;
  std::vector<ChartView*> views = window.live_charts();
  views.push_back(window.compare()->speedup_chart());
  views.push_back(window.compare()->step_time_chart());
  std::vector<std::pair<QString, QCustomPlot*>> plots;
  for (ChartView* view : views)
    if (view->isVisible()) plots.emplace_back(chart_kind_name(view->kind()), view->plot());
  if (window.replica_timeline()->plot()->isVisible())
    plots.emplace_back("replica timeline", window.replica_timeline()->plot());
  for (const auto& [name, plot] : plots) {
    plot->replot(QCustomPlot::rpImmediateRefresh);
    for (const QString& problem : layout_problems(*plot))
      problems << QString("%1 at %2x%3: %4")
                      .arg(name)
                      .arg(plot->width())
                      .arg(plot->height())
                      .arg(problem);
  }
  return problems;
}

// The window at a screen's size, with six runs of the kinds this machine has (CPU runs on 1 to 8
// threads, one on two replicas, so the replica timeline shows), normal and presenter, live and
// Compare, with learning rates changed mid-run marked: no text overlaps or is cut off, and no
// chart is crushed. With GPULAB_SCREENSHOTS set, each state is saved there as a PNG.
TEST(WindowLayout, NoTextOverlapsAt1280x720And1920x1080) {
  test::TempDir runs, data;
  test::write_mnist(data.path(), test::synthetic_set(64, 1), test::synthetic_set(32, 2));
  // Learning rates changed while they trained: their marks' labels, three close together and one
  // at the end, must not overlap either.
  write_run(runs.path() / "a", 1, 64, 300, 20, "2026-01-01T10:00:00Z", 1, {{100, 0.01}});
  write_run(runs.path() / "b", 2, 64, 300, 11, "2026-01-01T10:01:00Z", 1,
            {{150, 0.5}, {160, 0.05}, {295, 0.0001}});
  write_run(runs.path() / "c", 4, 64, 300, 6, "2026-01-01T10:02:00Z");
  write_run(runs.path() / "d", 6, 64, 300, 5, "2026-01-01T10:03:00Z");
  write_run(runs.path() / "e", 8, 64, 300, 5, "2026-01-01T10:04:00Z");
  write_run(runs.path() / "f", 2, 64, 300, 12, "2026-01-01T10:05:00Z", 2);
  const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS");
  for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)}) {
    WindowOptions options;
    options.runs_dir = runs.path();
    options.data_dir = data.path();
    options.devices = test::no_gpu_devices();
    MainWindow window(options);
    window.show_recent(6);
    ASSERT_NE(window.replica_timeline()->run(), nullptr);
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

// A GPU's memory busy % is dotted in its utilization lane, in the run's colour, and named in the
// legend; its SM clock has a lane of its own, labelled with its unit. The points drawn are the
// samples' own readings.
TEST(HardwareChart, MemoryBusyIsDottedBesideUtilizationAndTheSmClockHasItsLane) {
  RunData run;
  run.info = {{"name", "one gpu"}, {"config", {{"device", "cuda:0"}, {"batch", 64}}}};
  for (int s = 1; s <= 20; ++s) {
    StepMetrics m;
    m.step = s;
    m.time_s = 0.05 * s;
    m.loss = 1.0 / s;
    run.steps.push_back(m);
  }
  const double busy[] = {20, 35, 50}, clock[] = {1980, 1830, 1755};
  for (int i = 0; i < 3; ++i) {
    DeviceSample sample;
    sample.device = "cuda:0";
    sample.time_s = 0.4 * i;
    sample.util_percent = 90;
    sample.mem_util_percent = busy[i];
    sample.sm_clock_mhz = clock[i];
    sample.mem_used_bytes = 2.0 * (1 << 30);
    sample.power_w = 250;
    sample.temperature_c = 55;
    run.samples.push_back(sample);
  }
  ChartOptions by_time;
  by_time.x = XAxis::Time;
  const Chart chart = build_chart(ChartKind::Gpu, {&run}, by_time);
  QCustomPlot plot;
  plot.resize(1200, 900);
  DrawnChart drawn = draw_chart(plot, chart, {run_color(2)}, PlotTheme{});
  plot.replot(QCustomPlot::rpImmediateRefresh);

  const DrawnLine *util = nullptr, *mem_busy = nullptr, *sm_clock = nullptr;
  for (const DrawnLine& line : drawn.lines) {
    const Metric metric = chart.panels[size_t(line.panel)].lines[size_t(line.line)].metric;
    if (metric == Metric::UtilPercent) util = &line;
    if (metric == Metric::MemBusyPercent) mem_busy = &line;
    if (metric == Metric::SmClockMhz) sm_clock = &line;
  }
  ASSERT_TRUE(util && mem_busy && sm_clock);
  EXPECT_EQ(mem_busy->panel, util->panel) << "one scale for both shares";
  EXPECT_EQ(mem_busy->raw->pen().style(), Qt::DotLine);
  EXPECT_EQ(mem_busy->raw->pen().color(), util->raw->pen().color());
  ASSERT_EQ(mem_busy->raw->data()->size(), 3);
  EXPECT_EQ(mem_busy->raw->data()->at(1)->key, 0.4);
  EXPECT_EQ(mem_busy->raw->data()->at(1)->value, 35);
  ASSERT_EQ(sm_clock->raw->data()->size(), 3);
  EXPECT_EQ(sm_clock->raw->data()->at(2)->value, 1755);
  QCPAxisRect* clock_rect = sm_clock->raw->keyAxis()->axisRect();
  EXPECT_EQ(clock_rect->axis(QCPAxis::atLeft)->label().toStdString(), "SM clock (MHz)");
  EXPECT_NE(clock_rect, util->raw->keyAxis()->axisRect());

  QStringList legend;
  ASSERT_NE(drawn.legend, nullptr);
  for (int i = 0; i < drawn.legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(drawn.legend->item(i)))
      legend << item->plottable()->name();
  EXPECT_EQ(legend.join(" | ").toStdString(), "one gpu | one gpu · memory busy");
  const QStringList problems = layout_problems(plot);
  EXPECT_TRUE(problems.isEmpty()) << problems.join("\n").toStdString();
}

// gpulab-cli export's charts of 21 runs: names and bar labels readable, colours all different.
// Issue 16.7: a speedup label over a bar that reaches the top of its axis stays visible (inside the
// bar), and a short value axis keeps more tick labels than "0" (presenter fonts, a low panel).
TEST(ChartText, LabelsStayInsideThePanelAndAxesKeepTheirTicks) {
  test::TempDir runs;
  std::vector<RunData> loaded;
  for (int r = 0; r < 3; ++r)
    loaded.push_back(load_run(write_run(runs.path() / ("r" + std::to_string(r)), 1 + r, 64, 60,
                                        20.0 / (1 + 3 * r), "2026-01-01T10:00:00Z")));
  std::vector<const RunData*> data;
  for (const RunData& run : loaded) data.push_back(&run);
  for (QSize size : {QSize(600, 420), QSize(900, 700)}) {
    QCustomPlot plot;
    plot.resize(size);
    DrawnChart drawn = draw_chart(plot, build_chart(ChartKind::Speedup, data, ChartOptions{}),
                                  {Qt::red, Qt::blue, Qt::green}, PlotTheme{1.4, true});
    plot.replot(QCustomPlot::rpImmediateRefresh);
    for (const auto& bars : drawn.bar_panels)
      for (QCPItemText* label : bars.labels) {
        if (!label->visible()) continue;
        const QCPAxisRect* rect = label->clipAxisRect();
        const QRectF box(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
        EXPECT_GE(box.top(), rect->top() - 1)
            << label->text().toStdString() << " is cut off at " << size.width();
      }
  }
  // A loss from 0 to 1.8 in a low panel with presenter fonts: more than "0" on its axis.
  RunData run = loaded[0];
  for (StepMetrics& step : run.steps) step.loss = 1.8 * step.step / 60.0;
  for (int height : {160, 220}) {
    QCustomPlot plot;
    plot.resize(500, height);
    draw_chart(plot, build_chart(ChartKind::Loss, {&run}, ChartOptions{}), {Qt::red},
               PlotTheme{1.4, true});
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QCPAxis* y = plot.axisRect()->axis(QCPAxis::atLeft);
    int shown = 0;
    for (double tick : y->tickVector()) shown += y->range().contains(tick) ? 1 : 0;
    EXPECT_GE(shown, 2) << "at " << height << " px the loss axis shows " << shown << " tick label(s)";
  }
}

// A bar's value is written as a number a class reads: 60012 images/s, never "6e+04" (the class
// chart of `lab grade` and the window's class board showed its throughputs so).
TEST(ChartText, BarValuesOfThousandsAreWholeNumbersAndSmallOnesKeepThreeDigits) {
  Chart chart;
  chart.kind = ChartKind::Speedup;
  chart.title = "What the class measured";
  chart.runs = {"Ada", "Bob", "Cy"};
  chart.flags = {"", "", ""};
  for (const char* unit : {"images/s", "speedup"}) {
    Panel panel;
    panel.title = unit;
    panel.y_label = unit;
    BarSet bars;
    bars.label = unit;
    bars.values = std::string(unit) == "images/s" ? std::vector<double>{60012.4, 1337.0, 999.5}
                                                   : std::vector<double>{1.17, 0.6, 12.345};
    bars.notes = {"", "", ""};
    panel.bars.push_back(bars);
    chart.panels.push_back(panel);
  }
  QCustomPlot plot;
  plot.resize(900, 600);
  const DrawnChart drawn =
      draw_chart(plot, chart, {Qt::red, Qt::blue, Qt::green}, PlotTheme{1.0, false});
  QStringList labels;
  for (const auto& bars : drawn.bar_panels)
    for (QCPItemText* label : bars.labels) labels << label->text();
  EXPECT_EQ(labels, QStringList({"60012", "1337", "1000", "1.17", "0.6", "12.3"}))
      << labels.join(" | ").toStdString();
}

// A learning rate changed at step 100 of a 200-step run (100 steps an epoch) is drawn in every
// line panel at its place on each axis (step 100, epoch 1.0, the time it took effect), with its
// label shown once, in the top panel; the exported SVG carries it too.
TEST(ChartMarks, ALearningRateChangeIsDrawnAtItsPlaceInEveryLinePanelAndExported) {
  test::TempDir runs;
  const RunData run = load_run(
      write_run(runs.path() / "r", 1, 64, 200, 10.0, "2026-01-01T10:00:00Z", 1, {{100, 0.5}}));
  ASSERT_EQ(run.lr_changes.size(), 1u);
  const double changed_s = run.lr_changes[0].time_s;
  EXPECT_GT(changed_s, 0.0);
  for (XAxis axis : {XAxis::Step, XAxis::Epoch, XAxis::Time}) {
    const double expected = axis == XAxis::Step ? 100 : axis == XAxis::Epoch ? 0.5 : changed_s;
    ChartOptions options;
    options.x = axis;
    for (ChartKind kind : {ChartKind::Loss, ChartKind::StepTime, ChartKind::Gpu}) {
      QCustomPlot plot;
      plot.resize(900, 600);
      const Chart chart = build_chart(kind, {&run}, options);
      DrawnChart drawn = draw_chart(plot, chart, {Qt::red}, PlotTheme{});
      plot.replot(QCustomPlot::rpImmediateRefresh);
      const std::string where = std::string(chart_kind_name(kind)) + " on " + x_axis_name(axis);
      int line_panels = 0;
      for (int rect : drawn.rect_panel) line_panels += chart.panels[size_t(rect)].is_bars() ? 0 : 1;
      ASSERT_EQ(drawn.marks.size(), 1u) << where;
      ASSERT_EQ(int(drawn.marks[0].lines.size()), line_panels) << where;
      std::set<QCPAxisRect*> panels;
      for (QCPItemStraightLine* line : drawn.marks[0].lines) {
        EXPECT_DOUBLE_EQ(line->point1->coords().x(), expected) << where;
        EXPECT_DOUBLE_EQ(line->point2->coords().x(), expected) << where;
        EXPECT_EQ(line->pen().style(), Qt::DashLine) << where;
        panels.insert(line->clipAxisRect());
      }
      EXPECT_EQ(int(panels.size()), line_panels) << where << ": one line in each panel";
      QCPItemText* label = drawn.marks[0].label;
      ASSERT_NE(label, nullptr);
      EXPECT_EQ(label->text(), "lr 0.5");
      EXPECT_TRUE(label->visible()) << where;
      EXPECT_EQ(label->clipAxisRect(), drawn.marks[0].lines.front()->clipAxisRect());
      // Beside its line, at the top of the panel.
      const QRectF box =
          QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
      const double line_px = label->clipAxisRect()->axis(QCPAxis::atBottom)->coordToPixel(expected);
      EXPECT_NEAR(box.left(), line_px, 1.0) << where;
      EXPECT_LT(box.top() - label->clipAxisRect()->top(), box.height()) << where;
      EXPECT_TRUE(layout_problems(plot).isEmpty())
          << where << ":\n"
          << layout_problems(plot).join("\n").toStdString();
    }
  }
  const QString svg = QString::fromStdString((runs.path() / "loss.svg").string());
  QString error;
  ASSERT_TRUE(
      export_chart(ChartKind::Loss, {&run}, {}, ChartOptions{}, svg, ExportFormat::Svg, &error))
      << error.toStdString();
  QFile file(svg);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(file.readAll().contains("lr 0.5")) << "the exported chart names the change";
}

TEST(ExportLayout, TwentyOneRunsStayReadable) {
  test::TempDir runs;
  std::vector<RunData> loaded;
  for (int r = 0; r < 21; ++r) {
    const auto dir = write_run(runs.path() / std::to_string(r).insert(0, 1, 'r'), 1 + r % 8,
                               32 << (r / 8), 60, 5 + r, "2026-01-01T10:00:00Z");
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
  make_window();
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

  make_window();
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

// Compare's Matmul share: a CPU run trained here measures its matrix products each step, and the
// cell is their time over forward and backward, recomputed here from its steps; a record without
// them (a GPU's, an older one) has a dash, and with no run measuring it the column is left out
// and said so.
TEST_F(Window, CompareShowsTheMatmulShareTheCpuMeasuredAndLeavesItOutWhereNoneDid) {
  write_run(runs_.path() / "recorded", 1, 64, 30, 5, "2026-01-01T10:00:00Z");
  make_window();
  window_->show_recent(1);
  QTableWidget* table = window_->compare()->table();
  ASSERT_EQ(table->horizontalHeaderItem(12)->text(), "Matmul\nshare");
  EXPECT_TRUE(table->isColumnHidden(12));
  auto* left_out = window_->compare()->findChild<QLabel*>("summary-left-out");
  ASSERT_NE(left_out, nullptr);
  EXPECT_TRUE(left_out->text().contains("Matmul share")) << left_out->text().toStdString();

  small_setup(12);
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const RunEntry* trained = window_->store()->entries().front();
  double matmul = 0, compute = 0;
  for (const StepMetrics& s : trained->data.steps) {
    ASSERT_TRUE(std::isfinite(s.times.matmul_ms)) << "step " << s.step;
    matmul += s.times.matmul_ms;
    compute += s.times.forward_ms + s.times.backward_ms;
  }
  ASSERT_GT(compute, 0);
  window_->show_recent(2);
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(table->isColumnHidden(12));
  for (int r = 0; r < 2; ++r) {
    const bool own = window_->compare()->runs()[size_t(r)]->id == trained->id;
    EXPECT_EQ(table->item(r, 12)->text(),
              own ? QString::number(100 * matmul / compute, 'f', 0) + " %" : QString("–"))
        << r;
    if (own)
      EXPECT_TRUE(table->item(r, 12)->toolTip().contains("of forward and backward in matrix products"))
          << table->item(r, 12)->toolTip().toStdString();
  }
}

TEST_F(Window, TheBaselineListOffersEveryRun) {
  write_run(runs_.path() / "a", 1, 64, 30, 5, "2026-01-01T10:00:00Z");
  write_run(runs_.path() / "b", 2, 64, 30, 5, "2026-01-01T10:01:00Z");
  write_run(runs_.path() / "c", 4, 64, 30, 5, "2026-01-01T10:02:00Z");
  make_window();
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
  // Its energy, as run.json has it: joules where the machine measures them, else a dash whose tip
  // says why (never 0 J).
  QTableWidget* table = window_->compare()->table();
  ASSERT_EQ(table->horizontalHeaderItem(9)->text(), "Energy");
  const QString energy = table->item(0, 9)->text();
  if (std::isfinite(rows[0].energy_j))
    EXPECT_EQ(energy, QString::number(rows[0].energy_j, 'f', 0) + " J");
  else
    EXPECT_EQ(energy, "–");
  EXPECT_TRUE(table->item(0, 9)->toolTip().startsWith(QString::fromStdString(rows[0].energy_note)))
      << table->item(0, 9)->toolTip().toStdString();
  EXPECT_FALSE(rows[0].energy_note.empty());
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
  // The CPU run's matrix products' share, as gpulab-cli train's compute: line gives it.
  ASSERT_FALSE(rows[0].matmul_note.empty());
  EXPECT_NE(md.find("- compute: " + rows[0].matmul_note + "\n"), std::string::npos) << md;
  // And run.json's summary, which gpulab-cli prints, says the same.
  EXPECT_EQ(QString::number(
                load_run(run->data.dir).info["summary"]["time_to_target_s"].get<double>(), 'f', 2),
            seconds);
}

TEST_F(Window, PresenterModeShowsTheKeyFiguresLargeAndNamesSayTheThreads) {
  window_->set_presenter(true);
  window_->showNormal();  // a room's 1080p screen: offscreen, "full screen" is a small one
  window_->resize(1920, 1080);
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
  // The presenter picks the runs shown from the menu: one entry a run, then Untick all and
  // Show only the latest.
  QMenu* menu = window_->runs_button()->menu();
  const QList<QAction*> actions = menu->actions();
  ASSERT_EQ(
      std::count_if(actions.begin(), actions.end(), [](QAction* a) { return a->isCheckable(); }),
      1);
  EXPECT_TRUE(window_->runs_button()->isVisible());
  menu->actions()[0]->setChecked(false);
  ASSERT_TRUE(wait_until([&] { return window_->store()->checked().empty(); }, 2s));
}

// Issue 16.4: the presenter's headline and the status line read the same live figures; a dash
// before the first measurement; a flagged run carries ⚠ and why; of many runs the latest are
// listed, saying how many are not.
TEST_F(Window, PresenterHeadlineAgreesWithTheStatusLineAndListsTheLatestRuns) {
  window_->set_presenter(true);
  window_->showNormal();  // offscreen, "full screen" is the small offscreen screen
  window_->resize(1920, 1080);
  small_setup(100000);
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running());
  EXPECT_FALSE(window_->key_numbers().contains(">0</b> images/s"))
      << window_->key_numbers().toStdString();
  RunEntry* live = only_run();
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(wait_until([&] { return live->data.steps.size() >= 30; }));
  // Both read at the same moment: the status line's images/s is the headline's.
  const QRegularExpression rate("(\\d+|–)(</b>)? images/s");
  QString headline, status;
  ASSERT_TRUE(wait_until([&] {
    headline = window_->key_numbers();
    status = window_->progress()->text(live->id);
    return rate.match(headline).hasMatch() && rate.match(status).hasMatch() &&
           rate.match(status).captured(1) != "–";
  }));
  EXPECT_EQ(rate.match(headline).captured(1), rate.match(status).captured(1))
      << headline.toStdString() << "\n"
      << status.toStdString();
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  // Stopped early: flagged in the headline, with the reason.
  ASSERT_TRUE(wait_until([&] { return window_->key_numbers().contains("⚠ cancelled after"); }, 5s))
      << window_->key_numbers().toStdString();
  // Four more runs: the latest four of five are listed, and the headline says one is not.
  for (int i = 0; i < 4; ++i) {
    small_setup(3);
    QTest::mouseClick(window_->train_button(), Qt::LeftButton);
    ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  }
  for (RunEntry* entry : window_->store()->entries())
    window_->store()->set_checked(entry->id, true);
  ASSERT_TRUE(
      wait_until([&] { return window_->key_numbers().contains("1 earlier not listed"); }, 5s))
      << window_->key_numbers().toStdString();
  // On a 1280x720 screen, two runs in smaller figures, so both rows of charts stay on it; the
  // headline takes less than a sixth of the window.
  window_->resize(1280, 720);
  ASSERT_TRUE(
      wait_until([&] { return window_->key_numbers().contains("3 earlier not listed"); }, 5s))
      << window_->key_numbers().toStdString();
  auto* label = window_->findChild<QLabel*>("key-numbers");
  ASSERT_NE(label, nullptr);
  wait_until([] { return false; }, 200ms);
  EXPECT_LT(label->height(), 720 / 6) << label->height();
  window_->resize(1920, 1080);
  EXPECT_TRUE(
      wait_until([&] { return window_->key_numbers().contains("1 earlier not listed"); }, 5s))
      << window_->key_numbers().toStdString();
}

// Issue 9.7: a value typed out of range is clamped with a word on the message bar, naming the
// field, the typed value and the limit; so is one from a loaded setup.
TEST_F(Window, ClampedValuesAreNamedOnTheMessageBar) {
  auto* batch = window_->findChild<QSpinBox*>("batch");
  ASSERT_NE(batch, nullptr);
  type_into(batch, "100000");
  EXPECT_EQ(batch->value(), 60000);  // MNIST's training set
  for (const char* part : {"Batch size", "100000", "60000"})
    EXPECT_TRUE(window_->message().contains(part))
        << part << ": " << window_->message().toStdString();

  auto* lr = window_->findChild<QDoubleSpinBox*>("lr");
  ASSERT_NE(lr, nullptr);
  type_into(lr, "500", Qt::Key_Enter);
  EXPECT_DOUBLE_EQ(lr->value(), 100.0);
  EXPECT_TRUE(window_->message().contains("Learning rate: 500"))
      << window_->message().toStdString();

  Experiment e = window_->experiment()->experiment();
  e.train.max_steps = 20'000'000;
  window_->experiment()->set_experiment(e);
  EXPECT_TRUE(window_->message().contains("Step limit: 20000000"))
      << window_->message().toStdString();
}

// Issue 16.6: what Qt's boxes refused a keystroke at (a minus sign, an exponent) is taken, and
// the message names the field, the value typed and the value used; a batch larger than MNIST's
// training set is not kept; several messages in a row all stay on the bar.
TEST_F(Window, TypedValuesSayWhatWasUsedAndSeveralMessagesStayReadable) {
  auto* lr = window_->findChild<QDoubleSpinBox*>("lr");
  auto* decay = window_->findChild<QDoubleSpinBox*>("weight-decay");
  auto* batch = window_->findChild<QSpinBox*>("batch");
  ASSERT_TRUE(lr && decay && batch);
  type_into(lr, "-1");
  EXPECT_DOUBLE_EQ(lr->value(), 0.00001);
  type_into(decay, "1e9");
  EXPECT_DOUBLE_EQ(decay->value(), 1.0);
  type_into(batch, "99999999");
  EXPECT_EQ(batch->value(), 60000);
  const QString message = window_->message();
  for (const char* part : {"Learning rate: -1 is out of range; it was set to the limit, 1e-05.",
                           "Weight decay: 1e+09 is out of range; it was set to the limit, 1.",
                           "Batch size: 99999999 is out of range; it was set to the limit, 60000."})
    EXPECT_TRUE(message.contains(part)) << part << "\n in: " << message.toStdString();
  // In range, typed with an exponent: taken as typed.
  type_into(lr, "2e-3");
  EXPECT_DOUBLE_EQ(lr->value(), 0.002);
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

  // Issue 44: the race to 99 %, listed under File → Demos; without a GPU its CPU half runs.
  EXPECT_TRUE(demo_names().contains("race-to-99")) << demo_names().join(", ").toStdString();
  ASSERT_TRUE(window_->open_setup("race-to-99", &error)) << error.toStdString();
  EXPECT_TRUE(window_->message().contains("no GPU")) << window_->message().toStdString();
  EXPECT_EQ(window_->device_picker()->selected(), std::vector<std::string>{"cpu"});
  EXPECT_EQ(window_->experiment()->experiment().model.name, "fast-mnist");
  EXPECT_DOUBLE_EQ(window_->experiment()->experiment().train.stop_at_accuracy, 0.99);
  EXPECT_EQ(window_->experiment()->experiment().train.schedule.kind, ScheduleKind::OneCycle);

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

// Issue 40.10: the words the window uses are the record's, said once: "cancelled" as the runs
// list and run.json say it (not "stopped"), one space before "(baseline)", and the reason a GPU
// is missing without doubled parentheses.
TEST_F(Window, TheWindowsWordsAreTheRecordsWords) {
  QString error;
  ASSERT_TRUE(window_->open_setup("race.json", &error)) << error.toStdString();
  EXPECT_FALSE(window_->message().contains("))")) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("no NVIDIA driver found (test)"))
      << window_->message().toStdString();
  small_setup(1'000'000);
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] {
    return !window_->store()->entries().empty() &&
           window_->store()->entries().front()->data.steps.size() >= 2;
  }));
  RunEntry* run = window_->store()->entries().front();
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const QString line = window_->progress()->text(run->id);
  EXPECT_TRUE(line.contains(": cancelled at step ")) << line.toStdString();
  EXPECT_EQ(load_run(run->data.dir).info.value("status", ""), "cancelled");
  window_->runs_panel()->set_baseline(run->id);
  QApplication::processEvents();
  const QString listed = window_->runs_panel()->tree()->topLevelItem(0)->text(0);
  EXPECT_TRUE(listed.endsWith(" (baseline)")) << listed.toStdString();
  EXPECT_FALSE(listed.contains("  ")) << listed.toStdString();
}

// Issue 16.5: the race demo on a machine without a GPU keeps saying why its GPU half is missing
// once training has started.
TEST_F(Window, TheRaceDemoWithoutAGpuKeepsSayingWhyAfterTrainStarts) {
  QString error;
  ASSERT_TRUE(window_->open_setup("race.json", &error)) << error.toStdString();
  ASSERT_TRUE(window_->message().contains("no GPU")) << window_->message().toStdString();
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("no GPU")) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("cuda:0")) << window_->message().toStdString();
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_TRUE(window_->message().contains("no GPU")) << window_->message().toStdString();
}

// Issue 16.7: an empty bar says why: time to a target no run reached, an epoch-time speedup of
// runs that never finished an epoch.
TEST_F(Window, EmptySpeedupBarsSayWhy) {
  // 512 images at batch 32: 16 steps an epoch, then 4 of the next; too slow a learning rate to
  // reach 100 % test accuracy.
  small_setup(20, 0.00001f);
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  small_setup(10, 0.00001f);  // no full epoch
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  window_->compare()->target_box()->setValue(100.0);
  window_->resize(1920, 1080);  // room for all three panels of the speedup chart
  window_->show_tab("compare");
  QApplication::processEvents();
  ChartView* speedup = window_->compare()->speedup_chart();
  const Chart& chart = speedup->chart();
  ASSERT_EQ(chart.panels[2].bars[0].notes, (std::vector<std::string>{"not reached", "not reached"}));
  auto shown_texts = [&] {
    speedup->refresh(true);
    speedup->replot_if_dirty();
    QStringList shown;
    for (int i = 0; i < speedup->plot()->itemCount(); ++i)
      if (auto* text = qobject_cast<QCPItemText*>(speedup->plot()->item(i));
          text && text->visible())
        shown << text->text();
    return shown;
  };
  const QStringList shown = shown_texts();
  // No run reached the target: said once for the panel, not under each bar.
  EXPECT_EQ(shown.count("not reached\n(every run)"), 1) << shown.join(" | ").toStdString();
  EXPECT_EQ(shown.count("not\nreached"), 0) << shown.join(" | ").toStdString();
  EXPECT_EQ(shown.count("no full\nepoch"), 1) << shown.join(" | ").toStdString();
  // The table says the second run's epoch time is extrapolated from its 10 steps.
  QTableWidget* table = window_->compare()->table();
  EXPECT_TRUE(table->item(1, 4)->text().startsWith("≈ "))
      << table->item(1, 4)->text().toStdString();
  EXPECT_TRUE(table->item(1, 4)->toolTip().contains("from 10 steps"))
      << table->item(1, 4)->toolTip().toStdString();
}

// Issue 18.6: the whole-number and the real spin box are one piece of code; each says what became
// of a value typed out of range, one it rounds, one that is no number, and one set by a setup.
TEST(LimitedSpinBoxes, BothKindsSayWhatBecameOfAValue) {
  QStringList reports;
  const ClampReport report = [&](const QString& field, const QString& typed, const QString& used,
                                 ClampWhy why) {
    reports << clamp_message(field, typed, used, why);
  };
  QWidget form;
  auto* whole = new LimitedSpinBox("Batch size", report, &form);
  whole->setRange(1, 60000);
  whole->setValue(64);
  auto* real = new LimitedDoubleSpinBox("Momentum", report, &form);
  real->setDecimals(5);
  real->setRange(0, 1);
  real->setValue(0.9);
  auto* layout = new QVBoxLayout(&form);
  layout->addWidget(whole);
  layout->addWidget(real);
  form.show();
  type_into(whole, "1e9");
  EXPECT_EQ(whole->value(), 60000);
  type_into(whole, "-");
  EXPECT_EQ(whole->value(), 60000);
  type_into(real, "0.1234567");
  EXPECT_DOUBLE_EQ(real->value(), 0.12346);
  type_into(real, "-");
  whole->set_checked_value(100'000'000'000LL);
  real->set_checked_value(2.5);
  EXPECT_DOUBLE_EQ(real->value(), 1.0);
  const QStringList expected = {
      "Batch size: 1000000000 is out of range; it was set to the limit, 60000.",
      "Batch size: \"-\" is not a number; it stays 60000.",
      "Momentum: 0.1234567 has more decimals than the field keeps; it was set to 0.12346.",
      "Momentum: \"-\" is not a number; it stays 0.12346.",
      "Batch size: 100000000000 is out of range; it was set to the limit, 60000.",
      "Momentum: 2.5 is out of range; it was set to the limit, 1."};
  EXPECT_EQ(reports, expected) << reports.join("\n").toStdString();
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
  for (const auto& [args, mention] : std::vector<std::pair<std::string, std::string>>{
           {"--tab nope", "--tab"},
           {"--show-recent x", "--show-recent"},
           {"--setup /nonexistent.json", "/nonexistent.json"},
           {"--telemetry-hz 0", "--telemetry-hz"},
           {"--telemetry-hz nan", "--telemetry-hz"},
           {"--class-folder /nonexistent", "--class-folder /nonexistent: no such folder"},
           {"--device cuda:7 --train", "--device cuda:7"}}) {
    const auto [code, output] = gpulab(args);
    EXPECT_EQ(code, 2) << args << "\n" << output;
    EXPECT_NE(output.find(mention), std::string::npos) << args << "\n" << output;
  }
  EXPECT_TRUE(std::filesystem::is_empty(runs.path())) << "a refused start made a run";
}

// --- Whatever the runs folder holds, the window starts; signals end its runs as cancelled -----

// The real window binary, started as a person would, with its output in `log`.
pid_t start_window(const std::vector<std::string>& args, const std::filesystem::path& config,
                   const std::filesystem::path& log) {
  const pid_t child = fork();
  if (child != 0) return child;
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(out, 1);
  dup2(out, 2);
  setenv("QT_QPA_PLATFORM", "offscreen", 1);
  setenv("XDG_CONFIG_HOME", config.c_str(), 1);
  std::vector<char*> argv{const_cast<char*>(GPULAB_GUI_PATH)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(GPULAB_GUI_PATH, argv.data());
  _exit(127);
}

// Waits for `child` to end; its wait status, or -1 when it is still running at the deadline.
int wait_for_exit(pid_t child, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(child, &status, WNOHANG) == child) return status;
    std::this_thread::sleep_for(20ms);
  }
  return -1;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Damaged records (wrong types in every field, folders and link loops for files, FIFOs, a
// device, huge counts and files) beside good ones: the window starts, keeps running, and quits on
// SIGTERM, its event loop answering the signal. A link loop as the runs folder itself is named
// and refused at once (exit code 2), as a file or a missing folder is, never an abort.
TEST(WindowStart, DamagedRunsFoldersNeitherStopNorHangTheWindow) {
  test::TempDir dir;
  test::write_damaged_runs(dir.path() / "runs");
  const auto log = dir.path() / "log";
  const pid_t window =
      start_window({"--runs-dir", (dir.path() / "runs").string()}, dir.path() / "config", log);
  ASSERT_GT(window, 0);
  EXPECT_EQ(wait_for_exit(window, 4s), -1) << "the window ended\n" << file_text(log);
  kill(window, SIGTERM);
  int status = wait_for_exit(window, 30s);
  if (status == -1) kill(window, SIGKILL), waitpid(window, nullptr, 0);
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status << "\n"
      << file_text(log);

  std::filesystem::create_symlink("loop", dir.path() / "loop");
  const auto loop_log = dir.path() / "log-loop";
  const pid_t refused =
      start_window({"--runs-dir", (dir.path() / "loop").string()}, dir.path() / "config", loop_log);
  ASSERT_GT(refused, 0);
  status = wait_for_exit(refused, 30s);
  if (status == -1) kill(refused, SIGKILL), waitpid(refused, nullptr, 0);
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 2)
      << "status " << status << "\n"
      << file_text(loop_log);
  EXPECT_NE(file_text(loop_log).find((dir.path() / "loop").string() + ": cannot be read"),
            std::string::npos)
      << file_text(loop_log);
}

// SIGTERM or SIGINT while a run trains: the run ends as cancelled, recorded so, and the window
// quits with exit code 0 instead of leaving the record at "running" for ever.
TEST(WindowStart, SigtermAndSigintEndTheRunAsCancelledThenQuit) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(512, 1), test::synthetic_set(64, 2));
  Experiment e;
  e.model = preset("mlp");
  e.train.batch = 16;
  e.train.epochs = 1000;
  e.backend.threads = 1;
  save_experiment(dir.path() / "setup.json", e);
  for (const int signal : {SIGTERM, SIGINT}) {
    const auto runs = dir.path() / ("runs-" + std::to_string(signal));
    std::filesystem::create_directories(runs);  // a --runs-dir must exist
    const auto log = dir.path() / ("log-" + std::to_string(signal));
    const pid_t window =
        start_window({"--runs-dir", runs.string(), "--data-dir", (dir.path() / "data").string(),
                      "--setup", (dir.path() / "setup.json").string(), "--train"},
                     dir.path() / "config", log);
    ASSERT_GT(window, 0);
    std::filesystem::path run;
    const bool training = wait_until(
        [&] {
          std::error_code ignored;
          for (const auto& entry : std::filesystem::directory_iterator(runs, ignored))
            if (entry.is_directory() && file_text(entry.path() / "metrics.csv").size() > 2000)
              run = entry.path();
          return !run.empty();
        },
        60s);
    kill(window, signal);
    const int status = wait_for_exit(window, 60s);
    if (status == -1) kill(window, SIGKILL), waitpid(window, nullptr, 0);
    ASSERT_TRUE(training) << file_text(log);
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << strsignal(signal) << ": status " << status << "\n"
        << file_text(log);
    const RunData record = load_run(run);
    EXPECT_EQ(record.info["status"], "cancelled") << strsignal(signal);
  }
}

// Start-up files a hostile or careless user can give the window: a setup that cannot be used (a
// negative learning rate, a FIFO, a race of 5,000 entries, a billion classes, 100,000 layers), a
// checkpoint of 300,000 tensors or a header nested a million deep, a lab naming /dev/zero, a
// device, a FIFO and a file outside its folder as images, a run named with 4 MB of text. Each
// window is refused at once (exit code 2, one line naming the file) or opens and answers: its event
// loop takes SIGTERM and it quits with exit code 0. They start together, to keep the suite short.
TEST(WindowStart, HostileStartFilesAreRefusedOrOpenAndTheWindowAnswersSigterm) {
  using nlohmann::json;
  test::TempDir dir;
  const auto& root = dir.path();
  const json demo = json::parse(
      file_text(std::filesystem::path(GPULAB_SOURCE_DIR) / "resources/demos/race.json"));
  const auto setup = [&](const std::string& name, const std::function<void(json&)>& change) {
    json j = demo;
    change(j);
    test::write_text(root / name, j.dump());
    return (root / name).string();
  };
  struct Case {
    std::string what;
    std::vector<std::string> args;
    std::string refusal;  // what its one line names, where a refusal is right ("" must open)
  };
  std::vector<Case> cases;
  cases.push_back({"a negative learning rate",
                   {"--setup", setup("lr.json", [](json& j) { j["train"]["lr"] = -1; })},
                   "lr"});
  cases.push_back(
      {"a FIFO as the setup", {"--setup", test::make_fifo(root / "fifo.json")}, "FIFO"});
  test::write_text(root / "bom.json", "\xEF\xBB\xBF" + demo.dump());
  cases.push_back({"a setup saved with a byte order mark",
                   {"--setup", (root / "bom.json").string()},
                   "byte order mark"});
  cases.push_back({"a race of 5,000 entries",
                   {"--setup", setup("race.json",
                                     [](json& j) {
                                       json one = j["race"][0];
                                       j["race"] = json::array();
                                       for (int i = 0; i < 5000; ++i) j["race"].push_back(one);
                                     })},
                   "race"});
  cases.push_back({"a billion classes",
                   {"--setup", setup("classes.json",
                                     [](json& j) {
                                       j["classes"] = 1000000000;
                                       j["layers"].back()["out_features"] = 1000000000;
                                     })},
                   "fc3"});
  cases.push_back({"100,000 layers",
                   {"--setup", setup("layers.json",
                                     [](json& j) {
                                       json layers = json::array();
                                       for (int i = 0; i < 100000; ++i)
                                         layers.push_back({{"type", "tanh"}});
                                       layers.push_back({{"type", "flatten"}});
                                       layers.push_back({{"type", "linear"}, {"out_features", 10}});
                                       j["layers"] = layers;
                                       j.erase("race");
                                     })},
                   "layers"});
  const auto safetensors = [&](const std::string& name, const std::string& header) {
    const uint64_t size = header.size();
    std::ofstream out(root / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out << header;
    return (root / name).string();
  };
  json many = json::object();
  for (int i = 0; i < 300000; ++i)
    many["t" + std::to_string(i)] = {
        {"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4 * i, 4 * i + 4}}};
  cases.push_back({"a checkpoint of 300,000 tensors",
                   {"--weights", safetensors("many.safetensors", many.dump()), "--tab", "inside"},
                   ""});
  cases.push_back(
      {"a checkpoint header nested a million deep",
       {"--weights",
        safetensors("deep.safetensors", std::string(1000000, '[') + std::string(1000000, ']')),
        "--tab", "inside"},
       ""});
  std::filesystem::create_directories(root / "lab");
  test::make_fifo(root / "lab/fifo.png");
  std::filesystem::create_symlink("/dev/zero", root / "lab/zero.png");
  test::write_text(root / "outside.png", "not an image of the lab's");
  test::write_text(
      root / "lab/lab.md",
      "---\ntitle: Images from everywhere\n---\n\n# Images from everywhere\n\n"
      "![zero](/dev/zero)\n![url](file:///dev/zero)\n![random](../../../../dev/urandom)\n"
      "![fifo](fifo.png)\n![link](zero.png)\n![outside](../outside.png)\n");
  cases.push_back({"a lab naming /dev/zero, a FIFO and a file outside as images",
                   {"--lab", (root / "lab/lab.md").string(), "--tab", "labs"},
                   ""});
  json info = test::complete_run_info();
  info["name"] = std::string(4 << 20, 'n');
  test::write_run(root / "named-runs/huge-name", info);
  cases.push_back(
      {"a run named with 4 MB of text",
       {"--runs-dir", (root / "named-runs").string(), "--show-recent", "1", "--tab", "compare"},
       ""});

  struct Started {
    pid_t pid;
    std::filesystem::path log;
  };
  std::vector<Started> started;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::string> args = cases[i].args;
    if (std::find(args.begin(), args.end(), "--runs-dir") == args.end())
      args.insert(args.end(), {"--runs-dir", (root / "runs").string()});
    std::filesystem::create_directories(root / "runs");
    const auto log = root / ("log-" + std::to_string(i));
    started.push_back({start_window(args, root / ("config-" + std::to_string(i)), log), log});
    ASSERT_GT(started.back().pid, 0);
  }
  // Time to open (or to refuse) for all of them at once, under the sanitizers on two cores. A
  // SIGTERM that comes while a window still loads waits in its event loop's pipe; a window that
  // does not end within a minute of it does not answer (those above took minutes, or never).
  std::this_thread::sleep_for(8s);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    int status = wait_for_exit(started[i].pid, 1ms);
    const bool opened = status == -1;
    if (opened) {
      kill(started[i].pid, SIGTERM);
      status = wait_for_exit(started[i].pid, 60s);
      if (status == -1) kill(started[i].pid, SIGKILL), waitpid(started[i].pid, nullptr, 0);
    }
    const std::string log = file_text(started[i].log);
    const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (c.refusal.empty()) {
      EXPECT_TRUE(opened) << c.what << ": the window ended at once\n" << log.substr(0, 2000);
      EXPECT_EQ(code, 0) << c.what << ": SIGTERM did not end the window (status " << status << ")\n"
                         << log.substr(0, 2000);
    } else if (code != 2) {  // the window opened, saying why (or still loaded it at the SIGTERM)
      EXPECT_EQ(code, 0) << c.what << ": SIGTERM did not end the window (status " << status << ")\n"
                         << log.substr(0, 2000);
    } else {
      EXPECT_NE(log.find(c.refusal), std::string::npos) << c.what << "\n" << log.substr(0, 2000);
      EXPECT_LT(log.size(), 4000u) << c.what << ": the refusal is not one short line";
    }
    EXPECT_EQ(log.find("Sanitizer"), std::string::npos) << c.what << "\n" << log.substr(0, 4000);
  }
}

// An exception thrown by an event handler stops at the application's boundary: it is reported
// and later events are delivered.
TEST(WindowBoundary, AnExceptionInAnEventHandlerIsReportedAndTheLoopGoesOn) {
  auto* app = qobject_cast<GuardedApplication*>(QCoreApplication::instance());
  ASSERT_NE(app, nullptr) << "the window tests run under the window's own application class";
  struct Throwing : QObject {
    int delivered = 0;
    bool event(QEvent* e) override {
      if (e->type() != QEvent::User) return QObject::event(e);
      if (++delivered == 1) throw std::runtime_error("a handler failed");
      return true;
    }
  } target;
  QStringList caught;
  const auto connection = QObject::connect(app, &GuardedApplication::error_caught,
                                           [&](const QString& what) { caught << what; });
  QCoreApplication::postEvent(&target, new QEvent(QEvent::User));
  EXPECT_TRUE(wait_until([&] { return !caught.isEmpty(); }, 5s));
  QCoreApplication::postEvent(&target, new QEvent(QEvent::User));
  EXPECT_TRUE(wait_until([&] { return target.delivered == 2; }, 5s));
  QObject::disconnect(connection);
  ASSERT_EQ(caught.size(), 1);
  EXPECT_EQ(caught[0], "a handler failed");
}

// A record left "running" by a process that is gone is listed as interrupted; one that a living
// process still writes cannot be deleted from the window.
TEST_F(Window, RunsLeftRunningAreInterruptedOrNotDeletable) {
  window_.reset();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  nlohmann::json info = test::complete_run_info();
  info["status"] = "running";
  info["name"] = "gone";
  info["process"] = this_process_json();
  info["process"]["pid"] = int(child);
  test::write_run(runs_.path() / "gone", info);
  info["name"] = "alive";
  info["process"] = this_process_json();
  test::write_run(runs_.path() / "alive", info);
  make_window();
  QTreeWidget* tree = window_->runs_panel()->tree();
  ASSERT_EQ(tree->topLevelItemCount(), 2);
  std::map<QString, QString> status;
  // By folder (a row's tip starts with it): a run named as its folder is named automatically.
  for (int i = 0; i < 2; ++i)
    status[QFileInfo(tree->topLevelItem(i)->toolTip(0).section('\n', 0, 0)).fileName()] =
        tree->topLevelItem(i)->text(3);
  // (followed by ⚠ and the record's caveat)
  EXPECT_TRUE(status["gone"].startsWith("interrupted")) << status["gone"].toStdString();
  EXPECT_TRUE(status["alive"].startsWith("running")) << status["alive"].toStdString();
  for (RunEntry* entry : window_->store()->entries()) {
    QString error;
    const std::string name = entry->data.name();
    const bool removed = window_->store()->remove(entry->id, &error);
    EXPECT_EQ(removed, name == "gone") << name;
    if (!removed) {
      EXPECT_TRUE(error.contains("another process")) << error.toStdString();
    }
  }
  EXPECT_TRUE(std::filesystem::exists(runs_.path() / "alive" / "run.json"));
}

// A run of a million steps (a 58 MB metrics.csv) is read on a thread of its own: the event loop
// keeps answering a 10 ms ping (within 200 ms, or a quarter of the load's time on a slower build)
// while it loads and while the run, ticked from the last session, is drawn from its thinned copy.
class LargeRecord : public test::WindowTest {};
TEST_F(LargeRecord, AMillionStepRunLoadsInTheBackgroundWhileTheWindowAnswers) {
  const auto dir = runs_.path() / "big";
  std::string metrics =
      std::string(test::kGoodMetrics).substr(0, std::string(test::kGoodMetrics).find('\n') + 1);
  metrics.reserve(size_t(64) << 20);
  char line[160];
  for (int step = 1; step <= 1000000; ++step) {
    const int n =
        std::snprintf(line, sizeof line, "%d,1,%.3f,%.6f,0.5,6400,0.05,10,1,0,4,4,0,1,0\n", step,
                      step * 0.01, 2.3 / (1 + step * 1e-4));
    metrics.append(line, size_t(n));
  }
  nlohmann::json info = test::complete_run_info();
  info["name"] = "big";
  test::write_run(dir, info, metrics);
  WindowState state;
  state.checked = {dir.string()};
  state.present = true;
  ASSERT_TRUE(save_window_state(runs_.path(), state));
  // A record that cannot be read beside it: said at start, and still said once the large one is
  // in (issue 46.10: "Large run records loaded." replaced it within seconds).
  std::filesystem::create_directories(runs_.path() / "broken");
  std::ofstream(runs_.path() / "broken" / "run.json") << "{";

  open_window();
  EXPECT_EQ(window_->store()->loading_in_background(), 1) << "read before the window was shown";
  QElapsedTimer clock;
  clock.start();
  qint64 last = 0, longest = 0;
  QTimer ping;
  ping.setInterval(10);
  QObject::connect(&ping, &QTimer::timeout, [&] {
    longest = std::max(longest, clock.elapsed() - last);
    last = clock.elapsed();
  });
  ping.start();
  auto big = [&]() -> RunEntry* {
    for (RunEntry* entry : window_->store()->entries())
      if (entry->data.name() == "big") return entry;
    return nullptr;
  };
  ASSERT_TRUE(wait_until([&] { return big() != nullptr; }, 120s));
  const qint64 loaded_ms = clock.elapsed();
  QTest::qWait(1000);  // drawn meanwhile
  ping.stop();
  RecordProperty("longest_ping_gap_ms", int(longest));
  RecordProperty("load_ms", int(loaded_ms));
  // Read on the window's thread, the load would hold the loop for about all of its time; read on
  // its own, the loop's longest pause is a draw. The bound follows the load's own time, so a
  // sanitizer build on a busy machine (several times slower at both) is held to the same rule.
  EXPECT_LT(longest, std::max<qint64>(200, loaded_ms / 4))
      << "the event loop did not answer for " << longest << " ms of a " << loaded_ms
      << " ms load";
  EXPECT_EQ(window_->store()->loading_in_background(), 0);
  EXPECT_TRUE(window_->message().contains("could not be read")) << window_->message().toStdString();
  EXPECT_TRUE(window_->message().contains("Large run records loaded."))
      << window_->message().toStdString();
  const RunEntry* entry = big();
  EXPECT_TRUE(entry->checked);
  EXPECT_EQ(entry->data.steps_per_point, 50);
  EXPECT_EQ(entry->data.steps.size(), kMaxDrawnSteps);
  EXPECT_EQ(entry->data.steps.back().step, 1000000);
}

// A finished run of one step, recorded by RunRecorder into `folder`, as loaded back.
RunData record_one_step_run(const std::filesystem::path& folder) {
  {
    RunRecorder record(folder, {{"name", "a"}});
    StepMetrics step;
    step.step = 1;
    step.loss = 2;
    record.on_step(step);
    RunSummary summary;
    summary.status = RunStatus::Finished;
    record.finish(summary);
  }
  return load_run(folder);
}

// The window's exports are checked as gpulab-cli's are: a chart saved over a run's record is
// refused with the reason, and the record is kept.
TEST(ChartFiles, AnExportNeverReplacesARunsRecord) {
  test::TempDir dir;
  const RunData run = record_one_step_run(dir.path() / "run");
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

// The window's Export goes through the one output check: a file of another kind (a lab's .md
// named .png, a CSV of the user's) is refused naming what it is and kept; the window's own earlier
// export of that kind is replaced.
TEST(ChartFiles, AnExportReplacesOnlyAnEarlierExportOfItsKind) {
  test::TempDir dir;
  const RunData run = record_one_step_run(dir.path() / "run");
  for (const auto& [name, format, bytes, said] :
       std::vector<std::tuple<std::string, ExportFormat, std::string, std::string>>{
           {"lab.png", ExportFormat::Png, "# A lab\n", "is a text file"},
           {"grades.csv", ExportFormat::Csv, "name,grade\nAda,A\n", "is a CSV file"}}) {
    const auto file = dir.path() / name;
    std::ofstream(file) << bytes;
    const QString path = QString::fromStdString(file.string());
    QString error;
    EXPECT_FALSE(export_chart(ChartKind::Loss, {&run}, {}, ChartOptions{}, path, format, &error));
    EXPECT_TRUE(error.contains(QString::fromStdString(said))) << error.toStdString();
    std::ifstream in(file);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), bytes);
    std::filesystem::remove(file);
    for (int time = 0; time < 2; ++time)
      EXPECT_TRUE(export_chart(ChartKind::Loss, {&run}, {}, ChartOptions{}, path, format, &error))
          << error.toStdString();
  }
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
