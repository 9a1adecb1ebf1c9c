// The window on Qt's offscreen platform: train from the UI on a tiny synthetic MNIST, plots that
// receive points, pause/resume/stop, exports, the layer editor's checks, failures that leave the
// window usable, missing data, races, and the MNIST downloader against file:// sources.
#include <sys/wait.h>
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <QApplication>
#include <QCryptographicHash>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTreeWidget>
#include <QtTest/QTest>
#include <qcustomplot.h>

#include "engine/experiment.hpp"
#include "test_support.hpp"
#include "ui/chart_export.hpp"
#include "ui/chart_view.hpp"
#include "ui/compare_view.hpp"
#include "ui/data_fetcher.hpp"
#include "ui/device_picker.hpp"
#include "ui/experiment_panel.hpp"
#include "ui/layer_editor.hpp"
#include "ui/main_window.hpp"
#include "ui/race_panel.hpp"
#include "ui/run_store.hpp"
#include "ui/runs_panel.hpp"
#include "ui/status_widgets.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;

// Runs the event loop until `done` holds or the time is up.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = 60s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::string read_head(const QString& path, size_t bytes) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), std::streamsize(bytes));
  head.resize(size_t(in.gcount()));
  return head;
}

DeviceList no_gpu_devices() {
  DeviceList devices;
  devices.cpu = cpu_info();
  devices.no_gpu_reason = "no NVIDIA driver found (test)";
  return devices;
}

class Window : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_mnist(data_.path(), test::synthetic_set(512, 1), test::synthetic_set(128, 2));
    options_.runs_dir = runs_.path();
    options_.data_dir = data_.path();
    options_.devices = no_gpu_devices();
    options_.telemetry_hz = 20;
    window_ = std::make_unique<MainWindow>(options_);
    window_->show();
  }
  void TearDown() override {
    window_->stop_all();
    wait_until([&] { return !window_->any_running(); }, 30s);
    window_.reset();
  }
  // A small, fast setup: the MLP, batch 32, `steps` steps.
  void small_setup(int64_t steps, float lr = 0.01f, OptimizerKind optimizer = OptimizerKind::Adam) {
    Experiment e;
    e.model = preset("mlp");
    e.train.batch = 32;
    e.train.epochs = 1000;
    e.train.max_steps = steps;
    e.train.optimizer.kind = optimizer;
    e.train.optimizer.lr = lr;
    e.train.eval_every = 10;
    window_->experiment()->set_experiment(e);
    window_->device_picker()->set_threads(1);
  }
  RunEntry* only_run() {
    auto entries = window_->store()->entries();
    return entries.size() == 1 ? entries[0] : nullptr;
  }

  test::TempDir runs_, data_;
  WindowOptions options_;
  std::unique_ptr<MainWindow> window_;
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

TEST_F(Window, ARaceStartsEveryEntryAndSaysTheyShareTheCpu) {
  small_setup(400);
  RacePanel* race = window_->race();
  emit race->add_requested();
  Experiment e = window_->experiment()->experiment();
  e.train.batch = 64;
  window_->experiment()->set_experiment(e);
  emit race->add_requested();
  ASSERT_EQ(race->entries().size(), 2u);
  ASSERT_EQ(window_->start_race(), 2);
  EXPECT_TRUE(window_->share_warning().contains("share the CPU")) << window_->share_warning().toStdString();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_TRUE(window_->share_warning().isEmpty());
  const auto runs = window_->store()->entries();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0]->data.dir, runs[1]->data.dir);
  for (RunEntry* run : runs) EXPECT_EQ(run->data.status(), "finished");
  // Both are overlaid, and the comparison has a row per run against the first.
  EXPECT_EQ(window_->chart(ChartKind::Loss)->chart().runs.size(), 2u);
  const auto rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_GT(rows[1].speedup, 0.0);
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
  EXPECT_EQ(row->text(3), "diverged");
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
  // No display needed: Qt draws offscreen. Settings (remembered imports, the data folder) go to a
  // throwaway folder, never the user's.
  qputenv("QT_QPA_PLATFORM", "offscreen");
  gpulab::test::TempDir config;
  qputenv("XDG_CONFIG_HOME", QByteArray::fromStdString(config.path().string()));
  QApplication app(argc, argv);
  QApplication::setOrganizationName("gpulab-test");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
