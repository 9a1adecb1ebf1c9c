// The window's data-parallel views on Qt's offscreen platform: a 2-replica CPU run started from the
// device picker shows the all-reduce phase and a lane per replica, and runs that differ only in
// replicas get a scaling chart in Compare. On a GPU, a run the GPU fails under says what the
// reset came to, and the window keeps working.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QContextMenuEvent>
#include <QTimer>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTest>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <thread>

#include "engine/devices/devices.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/experiment.hpp"
#include "gpulab/build_config.hpp"
#include "test_support.hpp"
#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/charts/scaling_chart.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/limited_spin_box.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/window/main_window.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

#if GPULAB_CUDA_ENABLED
namespace gpulab::test {
int fault_the_gpu();  // cuda_fault.cu
}  // namespace gpulab::test
#endif

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;

using test::wait_until;

class DataParallelWindow : public test::WindowTest {
 protected:
  void SetUp() override {
    WindowTest::SetUp();
    open_window();
    small_setup(40, 0.01f, OptimizerKind::Adam, /*threads=*/2, /*eval_every=*/20);
  }
  // Types the replica count into the picker's spin box, as a user would.
  void type_replicas(int replicas) {
    auto* spin = window_->findChild<QSpinBox*>("cpu-replicas");
    ASSERT_NE(spin, nullptr);
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QString::number(replicas));
    QTest::keyClick(spin, Qt::Key_Enter);
    ASSERT_EQ(spin->value(), replicas);
  }
  void train_and_wait() {
    QTest::mouseClick(window_->train_button(), Qt::LeftButton);
    ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
    ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 120s));
  }
};

TEST_F(DataParallelWindow, PickerOffersReplicasAndSyncAndSaysWhyGpuReplicasAreOff) {
  DevicePicker* picker = window_->device_picker();
  EXPECT_EQ(picker->replicas(), 1);
  auto* sync = window_->findChild<QComboBox*>("sync-mode");
  ASSERT_NE(sync, nullptr);
  EXPECT_FALSE(sync->isEnabled());  // nothing to agree on with one replica
  picker->set_replicas(2);
  EXPECT_TRUE(sync->isEnabled());
  picker->set_sync(SyncMode::ParameterServer);
  EXPECT_EQ(picker->sync(), SyncMode::ParameterServer);
  // Without a GPU the GPU choices are there, disabled, and say why.
  auto* gpu = window_->findChild<QSpinBox*>("gpu-replicas");
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->isEnabled());
  EXPECT_TRUE(gpu->toolTip().contains("No GPU: no NVIDIA driver found")) << gpu->toolTip().toStdString();
  auto* one_run = window_->findChild<QCheckBox*>("gpu-one-run");
  ASSERT_NE(one_run, nullptr);
  EXPECT_FALSE(one_run->isEnabled());
  EXPECT_TRUE(one_run->toolTip().contains("No GPU")) << one_run->toolTip().toStdString();
  // No data-parallel run ticked: the timeline is one line of hint.
  ReplicaTimeline* timeline = window_->replica_timeline();
  ASSERT_NE(timeline, nullptr);
  EXPECT_EQ(timeline->run(), nullptr);
  EXPECT_FALSE(timeline->plot()->isVisible());
  EXPECT_TRUE(window_->findChild<QLabel*>("replica-timeline-hint")->isVisible());
}

// A demo chosen from File > Demos after a replicated setup starts from the demo's own settings:
// one replica on the picker, and its race of 1 thread against every core, one replica each, in
// the Race list.
TEST_F(DataParallelWindow, ADemoAfterAReplicatedSetupStartsFromItsOwnSettings) {
  type_replicas(2);
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Demos", "cpu-threads"));
  const auto& race = window_->race()->entries();
  ASSERT_TRUE(wait_until([&] { return race.size() == 2u; }, 5s))
      << window_->message().toStdString();
  EXPECT_EQ(window_->device_picker()->replicas(), 1);
  EXPECT_EQ(race[0].backend.threads, 1);
  EXPECT_EQ(race[1].backend.threads, std::max(1, cpu_info().logical_cores));
  for (const RunRequest& r : race) {
    EXPECT_EQ(r.backend.replicas, 1) << r.name;
    EXPECT_EQ(r.backend.sync, SyncMode::AllReduce) << r.name;
  }
}

TEST_F(DataParallelWindow, ReplicasAndSyncAreSavedWithTheSetupAndComeBack) {
  type_replicas(3);
  auto* sync = window_->findChild<QComboBox*>("sync-mode");
  ASSERT_TRUE(sync->isEnabled());
  test::choose_in_combo(sync, "parameter server");
  EXPECT_EQ(window_->device_picker()->sync(), SyncMode::ParameterServer);

  // File > Save setup…, the name typed into the dialog.
  const QString path = QString::fromStdString((runs_.path() / "three-replicas.json").string());
  test::answer_file_dialog(path, [&] {
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Save setup"));
  });
  ASSERT_TRUE(wait_until([&] { return QFileInfo::exists(path); }, 10s));
  const Experiment saved = load_experiment(path.toStdString());
  EXPECT_EQ(saved.backend.device, "cpu");
  EXPECT_EQ(saved.backend.replicas, 3);
  EXPECT_EQ(saved.backend.sync, SyncMode::ParameterServer);
  EXPECT_EQ(saved.backend.threads, 2);

  // Quit and start again on the same runs folder: the kept setup brings them back.
  close_window();
  open_window();
  DevicePicker* picker = window_->device_picker();
  EXPECT_EQ(picker->selected(), std::vector<std::string>{"cpu"});
  EXPECT_EQ(picker->replicas(), 3);
  EXPECT_EQ(picker->sync(), SyncMode::ParameterServer);
  EXPECT_EQ(picker->threads(), 2);
  EXPECT_TRUE(window_->findChild<QComboBox*>("sync-mode")->isEnabled());

  // And the saved file, opened over other settings, sets them again.
  picker->set_replicas(1);
  picker->set_sync(SyncMode::AllReduce);
  QString error;
  ASSERT_TRUE(window_->open_setup(path, &error)) << error.toStdString();
  EXPECT_EQ(picker->replicas(), 3);
  EXPECT_EQ(picker->sync(), SyncMode::ParameterServer);
}

// A setup whose threads or replicas this machine cannot give is clamped to the picker's limits
// with the message the setup's other fields give (issue 17.7), not silently.
TEST_F(DataParallelWindow, ASetupsThreadsAndReplicasBeyondTheMachineAreClampedWithAMessage) {
  DevicePicker* picker = window_->device_picker();
  const int most_threads = window_->findChild<QSpinBox*>("cpu-threads")->maximum();
  const int most_replicas = window_->findChild<QSpinBox*>("cpu-replicas")->maximum();
  auto open = [&](const char* file, const char* train) {
    const auto path = runs_.path() / file;
    std::ofstream(path) << R"({"name": "tiny", "layers": [{"type": "flatten"},
        {"type": "linear", "out_features": 10}], "train": )"
                        << train << "}";
    QString error;
    ASSERT_TRUE(window_->open_setup(QString::fromStdString(path.string()), &error))
        << error.toStdString();
  };
  open("threads.json", R"({"device": "cpu", "threads": 1000000})");
  EXPECT_EQ(picker->threads(), most_threads);
  EXPECT_EQ(window_->message().toStdString(),
            clamp_message("CPU threads", "1000000", QString::number(most_threads)).toStdString());
  open("replicas.json", R"({"device": "cpu", "threads": 1, "replicas": 1000})");
  EXPECT_EQ(picker->replicas(), most_replicas);
  // Each clamped field stays on the message bar, the newest last.
  const QStringList lines = window_->message().split('\n');
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().toStdString(),
            clamp_message("CPU replicas", "1000", QString::number(most_replicas)).toStdString());
  EXPECT_TRUE(lines.contains(clamp_message("CPU threads", "1000000", QString::number(most_threads))))
      << window_->message().toStdString();
}

// The picker on a machine with two GPUs (a fake list: nothing trains on them here, so the test
// reads the requests the race line-up collects, which are what ▶ Train would start).
class GpuPicker : public test::WindowTest {
 protected:
  void SetUp() override {
    WindowTest::SetUp();
    options_.devices = test::two_gpu_devices();
    open_window();
    small_setup(20);
  }
  template <typename Widget>
  Widget* find(const char* name) {
    auto* widget = window_->findChild<Widget*>(name);
    EXPECT_NE(widget, nullptr) << name;
    return widget;
  }
  void click(const char* name) {
    QCheckBox* box = find<QCheckBox>(name);
    ASSERT_TRUE(box->isEnabled()) << name;
    QTest::mouseClick(box, Qt::LeftButton, {}, box->rect().center());
  }
  void type_gpu_replicas(int replicas) {
    auto* spin = find<QSpinBox>("gpu-replicas");
    ASSERT_TRUE(spin->isEnabled());
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QString::number(replicas));
    QTest::keyClick(spin, Qt::Key_Enter);
    ASSERT_EQ(spin->value(), replicas);
  }
  // Clicks "Add setup" under Race and returns what it added, one request per run.
  std::vector<RunRequest> add_to_race() {
    window_->race()->clear();
    for (QPushButton* button : window_->race()->findChildren<QPushButton*>())
      if (button->text() == "Add setup") QTest::mouseClick(button, Qt::LeftButton);
    return window_->race()->entries();
  }
  // The choices of the Data and kernels box, precision and sync, in one line to compare.
  static std::string choices(const BackendOptions& b) {
    return std::string(precision_name(b.precision)) + ", " + conv_name(b.conv) + ", data on " +
           data_on_name(b.data_on) + ", graphs " + (b.cuda_graph ? "on" : "off") + ", " +
           preprocess_name(b.preprocess) + ", " + sync_name(b.sync);
  }
  std::vector<std::string> devices_of(const std::vector<RunRequest>& requests) {
    std::vector<std::string> devices;
    for (const RunRequest& r : requests) devices.push_back(r.backend.device);
    return devices;
  }
};

TEST_F(GpuPicker, TickedGpusRaceOrTrainAsOneRunWithTheirReplicas) {
  EXPECT_TRUE(find<QSpinBox>("gpu-replicas")->isEnabled());
  EXPECT_TRUE(find<QCheckBox>("gpu-one-run")->isEnabled());
  click("device-cpu");
  click("device-cuda-0");
  // One GPU, one replica: a plain single-GPU run, as before.
  std::vector<RunRequest> requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:0"});
  EXPECT_EQ(requests[0].backend.replicas, 1);
  EXPECT_EQ(requests[0].name.find("replicas"), std::string::npos) << requests[0].name;

  // Two GPUs ticked: a race of one run on each, as before.
  click("device-cuda-1");
  EXPECT_EQ(devices_of(add_to_race()), (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_TRUE(window_->train_button()->text().contains("Race 2 runs"))
      << window_->train_button()->text().toStdString();

  // ... or one run across both.
  click("gpu-one-run");
  requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:0,1"});
  EXPECT_EQ(requests[0].backend.replicas, 1);
  EXPECT_EQ(requests[0].backend.sync, SyncMode::AllReduce);
  EXPECT_NE(requests[0].name.find("cuda:0,1, 2 replicas"), std::string::npos) << requests[0].name;
  EXPECT_EQ(window_->train_button()->text().toStdString(), "▶ Train");
  auto* plan = find<QLabel>("device-plan");
  EXPECT_TRUE(plan->text().contains("one run on cuda:0,1 (2 replicas)")) << plan->text().toStdString();

  // Two replicas on one GPU.
  click("device-cuda-1");
  type_gpu_replicas(2);
  requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:0x2"});
  EXPECT_NE(requests[0].name.find("cuda:0x2, 2 replicas"), std::string::npos) << requests[0].name;

  // Two on each of two GPUs, as one run.
  click("device-cuda-1");
  requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:0x2,1x2"});
  EXPECT_NE(requests[0].name.find("cuda:0x2,1x2, 4 replicas"), std::string::npos) << requests[0].name;

  // With the CPU ticked too, a race of the CPU against the two-GPU run; the CPU keeps its row.
  click("device-cpu");
  requests = add_to_race();
  ASSERT_EQ(devices_of(requests), (std::vector<std::string>{"cpu", "cuda:0x2,1x2"}));
  EXPECT_EQ(requests[0].backend.threads, 1);
  EXPECT_TRUE(plan->text().contains("a race of 2 runs")) << plan->text().toStdString();
  click("device-cpu");

  // The choice is kept with the setup: quit, start again, and it is there.
  close_window();
  open_window();
  DevicePicker* picker = window_->device_picker();
  EXPECT_EQ(picker->selected(), std::vector<std::string>{"cuda:0x2,1x2"});
  EXPECT_EQ(picker->gpu_replicas(), 2);
  EXPECT_TRUE(picker->one_gpu_run());
}

// Issue 41.9 in the window: the parameter server serves GPU replicas too (IBM's recipe), so the
// sync choice is enabled by any run of several replicas, CPU or GPU. The GPU-only choices of the
// Data and kernels box reach the GPU run; a CPU run raced against it trains as the CPU can.
TEST_F(GpuPicker, SyncServesGpuReplicasAndGpuOnlyChoicesReachOnlyTheGpuRun) {
  auto* sync = find<QComboBox>("sync-mode");
  click("device-cpu");
  click("device-cuda-0");
  EXPECT_FALSE(sync->isEnabled());  // one GPU, one replica: nothing to agree on
  type_gpu_replicas(2);
  ASSERT_TRUE(sync->isEnabled());
  test::choose_in_combo(sync, "parameter server");
  std::vector<RunRequest> requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:0x2"});
  EXPECT_EQ(requests[0].backend.sync, SyncMode::ParameterServer);

  // The GPU-only choices, made as a person makes them.
  test::choose_in_combo(find<QComboBox>("precision"), "tf32");
  test::choose_in_combo(find<QComboBox>("conv"), "implicit GEMM");
  test::choose_in_combo(find<QComboBox>("preprocess"), "augmented per batch");
  auto* data_on = find<QComboBox>("data-on");
  // Batches augmented per batch are made on the host: "device" cannot be chosen.
  auto* items = qobject_cast<QStandardItemModel*>(data_on->model());
  EXPECT_FALSE(items->item(data_on->findData("device"))->isEnabled());
  test::choose_in_combo(data_on, "copied from host");
  QCheckBox* graphs = find<QCheckBox>("cuda-graphs");
  ASSERT_TRUE(graphs->isEnabled());
  QTest::mouseClick(graphs, Qt::LeftButton, {}, QPoint(8, graphs->height() / 2));
  EXPECT_FALSE(graphs->isChecked());

  // The CPU (one replica) raced against the two GPU replicas.
  click("device-cpu");
  requests = add_to_race();
  ASSERT_EQ(devices_of(requests), (std::vector<std::string>{"cpu", "cuda:0x2"}));
  const BackendOptions& cpu = requests[0].backend;
  EXPECT_EQ(choices(requests[1].backend),
            "tf32, implicit, data on host, graphs off, per-batch, parameter-server");
  // The CPU computes in fp32 with its own kernels from host memory; its one replica all-reduces
  // nothing; the input pipeline is the same for both, the race's point.
  EXPECT_EQ(choices(cpu), "fp32, im2col, data on auto, graphs on, per-batch, allreduce");
  EXPECT_NO_THROW(validate(cpu));  // the CPU's run starts (the GPUs here are a fake list)

  // The GPU unticked: its choices are greyed, kept, and say why.
  click("device-cuda-0");
  for (const char* name : {"precision", "conv", "data-on"}) {
    auto* box = find<QComboBox>(name);
    EXPECT_FALSE(box->isEnabled()) << name;
    EXPECT_TRUE(box->toolTip().startsWith("GPU only")) << name << ": " << box->toolTip().toStdString();
  }
  EXPECT_FALSE(graphs->isEnabled());
  EXPECT_EQ(find<QComboBox>("conv")->currentData().toString(), "implicit");
  EXPECT_EQ(add_to_race()[0].backend.conv, ConvAlgorithm::Im2col);
  click("device-cuda-0");
  EXPECT_EQ(devices_of(add_to_race()), (std::vector<std::string>{"cpu", "cuda:0x2"}));
  EXPECT_EQ(add_to_race()[1].backend.conv, ConvAlgorithm::Implicit);
}

// A GPU setup opened while the CPU is ticked keeps its GPU choices: before, the panel reset
// precision to fp32 as the setup was applied (the CPU still ticked), then ticked its GPU.
TEST_F(GpuPicker, AGpuSetupOpenedWhileTheCpuIsTickedKeepsItsPrecisionAndKernels) {
  const auto path = runs_.path() / "gpu-setup.json";
  std::ofstream(path) << R"({"name": "tiny", "layers": [{"type": "flatten"},
      {"type": "linear", "out_features": 10}], "train": {"device": "cuda:1x2",
      "precision": "bf16", "conv": "implicit", "data_on": "device", "cuda_graph": false,
      "preprocess": "once", "sync": "parameter-server", "bucket_mb": 5}})";
  ASSERT_EQ(window_->device_picker()->selected(), std::vector<std::string>{"cpu"});
  QString error;
  ASSERT_TRUE(window_->open_setup(QString::fromStdString(path.string()), &error))
      << error.toStdString();
  const std::vector<RunRequest> requests = add_to_race();
  ASSERT_EQ(devices_of(requests), std::vector<std::string>{"cuda:1x2"});
  const char* const setup = "bf16, implicit, data on device, graphs off, once, parameter-server";
  EXPECT_EQ(choices(requests[0].backend), setup);
  EXPECT_EQ(requests[0].backend.bucket_mb, 5);
  EXPECT_TRUE(window_->experiment()->kept_text().contains("gradient buckets of 5 MiB"))
      << window_->experiment()->kept_text().toStdString();
  // Saved again, the file holds all of it.
  const auto again = runs_.path() / "gpu-setup-again.json";
  ASSERT_TRUE(window_->save_setup_file(QString::fromStdString(again.string()), &error))
      << error.toStdString();
  const Experiment saved = load_experiment(again);
  EXPECT_EQ(saved.backend.device, "cuda:1x2");
  EXPECT_EQ(choices(saved.backend), setup);
  EXPECT_EQ(saved.backend.bucket_mb, 5);
}

// The Setup panel reads off what the hardware is: the CPU's cores and clock, each GPU's SMs,
// lanes, clock, memory and bandwidth, in the words gpulab-cli devices prints.
TEST(DevicePickerHardware, ShowsTheCpusCoresAndClockAndEachGpusLanesAndBandwidth) {
  DeviceList list;
  list.cpu.model = "Test CPU 9000";
  list.cpu.logical_cores = 8;
  list.cpu.physical_cores = 4;
  list.cpu.clock_mhz = 3500;
  list.cpu.clock_is_peak = true;
  GpuInfo gpu;
  gpu.name = "NVIDIA H100";
  gpu.memory_bytes = 80.0 * (1 << 30);
  gpu.compute_major = 9;
  gpu.sm_count = 132;
  gpu.clock_mhz = 1980;
  gpu.memory_clock_mhz = 2619;
  gpu.memory_bus_bits = 5120;
  list.gpus = {gpu};
  DevicePicker picker(list);
  auto* cpu = picker.findChild<QLabel*>("cpu-hardware");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->text().toStdString(), "8 logical cores (4 physical), up to 3.50 GHz");
  auto* gpu_label = picker.findChild<QLabel*>("gpu-hardware-0");
  ASSERT_NE(gpu_label, nullptr);
  // 132 SMs x 128 lanes; 2 transfers x 2619 MHz x 640 bytes = 3352 GB/s.
  const std::string expected =
      "132 SMs x 128 FP32 lanes = 16896 lanes at up to 1.98 GHz; 80.0 GiB at 3352 GB/s (5120-bit "
      "bus at 2.62 GHz)";
  EXPECT_EQ(gpu_label->text().toStdString(), expected);
  auto* box = picker.findChild<QCheckBox*>("device-cuda-0");
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->toolTip().contains(QString::fromStdString(expected)))
      << box->toolTip().toStdString();
}

TEST_F(DataParallelWindow, ATwoReplicaRunShowsTheAllReduceAndTwoReplicaLanes) {
  type_replicas(2);
  train_and_wait();
  auto entries = window_->store()->entries();
  ASSERT_EQ(entries.size(), 1u);
  RunEntry* run = entries[0];
  EXPECT_EQ(run->data.status(), "finished") << run->data.info.dump();
  EXPECT_EQ(run->data.info["config"]["replicas"], 2);
  ASSERT_EQ(run->data.steps.size(), 40u);
  EXPECT_EQ(run->data.steps.back().replicas.size(), 2u);

  // The step breakdown has the all-reduce phase, and it took time.
  ChartView* step_time = window_->chart(ChartKind::StepTime);
  ASSERT_NE(step_time, nullptr);
  step_time->refresh(true);
  bool all_reduce = false;
  for (const Panel& panel : step_time->chart().panels)
    for (const BarSet& set : panel.bars)
      if (set.label == "all-reduce") {
        all_reduce = true;
        ASSERT_FALSE(set.values.empty());
        EXPECT_GT(set.values[0], 0.0);
      }
  EXPECT_TRUE(all_reduce);

  // The timeline follows the run: two lanes, every step with both replicas, all three phases.
  ReplicaTimeline* timeline = window_->replica_timeline();
  EXPECT_EQ(timeline->run(), &run->data);
  EXPECT_EQ(timeline->lanes(), 2);
  EXPECT_TRUE(timeline->plot()->isVisible());
  ASSERT_EQ(timeline->steps().size(), ReplicaTimeline::kSteps < 40 ? ReplicaTimeline::kSteps : 40u);
  EXPECT_EQ(timeline->steps().back().step, 40);
  for (const ReplicaStepSpan& step : timeline->steps()) {
    ASSERT_EQ(step.replicas.size(), 2u);
    EXPECT_EQ(step.replicas[0].replica, 0);
    EXPECT_EQ(step.replicas[1].replica, 1);
    EXPECT_GT(step.replicas[0].compute_ms, 0);
    EXPECT_GT(step.replicas[0].communication_ms, 0);
  }
  EXPECT_GT(timeline->plot()->itemCount(), 40 * 2);  // a segment per phase per replica per step
  EXPECT_TRUE(timeline->overlap_text().contains("%")) << timeline->overlap_text().toStdString();
  // The same lanes come back from the record on disk (replicas.csv).
  const RunData on_disk = load_run(run->data.dir);
  const auto recorded = recent_replica_steps(on_disk, ReplicaTimeline::kSteps);
  ASSERT_EQ(recorded.size(), timeline->steps().size());
  EXPECT_EQ(recorded.back().replicas.size(), 2u);
  EXPECT_DOUBLE_EQ(recorded.back().replicas[1].compute_ms,
                   timeline->steps().back().replicas[1].compute_ms);
}

TEST_F(DataParallelWindow, RunsThatDifferOnlyInReplicasGetAScalingChart) {
  train_and_wait();  // one replica
  type_replicas(2);
  train_and_wait();
  ASSERT_EQ(window_->store()->entries().size(), 2u);
  window_->show_tab("compare");
  ScalingChart* scaling = window_->compare()->scaling_chart();
  scaling->refresh();
  ASSERT_TRUE(scaling->study().has_value());
  EXPECT_TRUE(scaling->isVisible());
  const ScalingStudy& study = *scaling->study();
  ASSERT_EQ(study.points.size(), 2u);
  EXPECT_EQ(study.points[0].replicas, 1);
  EXPECT_EQ(study.points[1].replicas, 2);
  EXPECT_NEAR(study.points[0].efficiency, 1.0, 1e-9);
  EXPECT_GT(study.points[1].images_per_second, 0);
  EXPECT_TRUE(std::isfinite(study.model.transfer_ms));
  EXPECT_TRUE(scaling->model_text().contains("Predicted")) << scaling->model_text().toStdString();
  // Both runs had the same two threads: two replicas split them, and are ideally no faster.
  EXPECT_TRUE(study.model.shares_hardware());
  EXPECT_NEAR(study.model.ideal_images_per_second(2), study.points[0].images_per_second, 1e-6);
  EXPECT_TRUE(scaling->model_text().contains("every run has the same"))
      << scaling->model_text().toStdString();
  EXPECT_EQ(scaling->plot()->graphCount(), 6);
  test::TempDir out;
  QString error;
  for (ExportFormat format :
       {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv}) {
    const QString path =
        QString::fromStdString((out.path() / "scaling.").string()) + export_format_name(format);
    EXPECT_TRUE(scaling->export_to(path, format, &error, 640, 480)) << error.toStdString();
    EXPECT_GT(QFileInfo(path).size(), 0);
  }
}

#if GPULAB_CUDA_ENABLED
// The window on this machine's real devices.
class GpuWindow : public test::WindowTest {
 protected:
  void SetUp() override {
    WindowTest::SetUp();
    const DeviceList devices = list_devices();
    if (devices.gpus.empty()) GTEST_SKIP() << "no GPU: " << devices.no_gpu_reason;
    options_.devices = devices;
    open_window();
  }
};

TEST_F(GpuWindow, AGpuFailureSaysWhatTheResetCameToAndTheWindowKeepsWorking) {
  // A run on cuda:0, then a trap in this process: a sticky error, which the run meets at its
  // next call. Its message says whether the reset gave a working GPU or gpulab must restart.
  Experiment e;
  e.model = preset("mlp");
  e.train.batch = 32;
  e.train.epochs = 1000;
  e.train.max_steps = 1'000'000;
  window_->experiment()->set_experiment(e);
  ASSERT_TRUE(window_->device_picker()->select_only("cuda:0"));
  ASSERT_EQ(window_->start_training(), 1);
  const auto run = [&] { return window_->store()->entries().front(); };
  ASSERT_TRUE(wait_until([&] {
    return !window_->any_running() ||
           (!window_->store()->entries().empty() && !run()->data.steps.empty());
  }));
  ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
  EXPECT_NE(test::fault_the_gpu(), 0) << "the trap did not fault";
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 60s));
  EXPECT_EQ(run()->data.status(), "failed");
  const std::string message = window_->message().toStdString();
  EXPECT_NE(message.find("the GPU failed; the run ends here"), std::string::npos) << message;
  const bool reset = message.find("cuda:0 was reset and takes work again") != std::string::npos;
  const bool restart = message.find("GPU runs need a restart of gpulab") != std::string::npos;
  EXPECT_NE(reset, restart) << message;

  // The window keeps working: a CPU run starts and finishes.
  e.train.max_steps = 10;
  window_->experiment()->set_experiment(e);
  ASSERT_TRUE(window_->device_picker()->select_only("cpu"));
  ASSERT_EQ(window_->start_training(), 1);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(window_->store()->entries().front()->data.status(), "finished");
}
#endif
// Issue 16.3 and 16.8: of two runs at one replica count the chart takes the finished one and
// says so; the user picks the other from the chart's menu, and it is marked ⚠ in the window and
// in the exported file; the lab report and Export all charts carry the scaling chart and the
// replica timeline, and the report's settings are a table of the values as typed. Issue 16.2:
// the breakdown of the 2-replica run is as tall as its median step.
TEST_F(DataParallelWindow, TheScalingChartTakesAFinishedRunAndMarksAFlaggedOnePicked) {
  train_and_wait();  // one replica
  type_replicas(2);
  train_and_wait();
  // A second 2-replica run, stopped after a few steps: cancelled.
  Experiment e = window_->experiment()->experiment();
  e.train.max_steps = 100000;
  window_->experiment()->set_experiment(e);
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running());
  ASSERT_TRUE(wait_until([&] {
    auto newest_first = window_->store()->entries();
    return newest_first.size() == 3 && newest_first[0]->data.steps.size() >= 5;
  }));
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  const auto entries = window_->store()->checked();  // in the order they were made
  ASSERT_EQ(entries.size(), 3u);
  ASSERT_EQ(entries[2]->data.status(), "cancelled");

  window_->show_tab("compare");
  ScalingChart* scaling = window_->compare()->scaling_chart();
  scaling->refresh();
  ASSERT_TRUE(scaling->study().has_value());
  ASSERT_EQ(scaling->study()->points.size(), 2u);
  EXPECT_EQ(scaling->study()->points[1].run, 1);  // the finished one, not the newest
  EXPECT_TRUE(scaling->runs_text().contains("right-click")) << scaling->runs_text().toStdString();
  auto marks = [&] {
    int count = 0;
    for (int i = 0; i < scaling->plot()->itemCount(); ++i)
      if (auto* text = qobject_cast<QCPItemText*>(scaling->plot()->item(i)))
        count += text->text() == QStringLiteral("⚠") ? 1 : 0;
    return count;
  };
  // A ⚠ over each flagged point in both panels (a run may be flagged for outside load too).
  auto flagged_points = [&] {
    int count = 0;
    for (const ScalingPoint& p : scaling->study()->points) count += p.flags.empty() ? 0 : 2;
    return count;
  };
  EXPECT_EQ(marks(), flagged_points());

  // Right-click on the chart, and take the other run from its menu.
  bool picked = false;
  QTimer::singleShot(200, [&] {
    auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
    if (!menu) return;
    for (QAction* action : menu->actions())
      if (action->text().startsWith("Use ") && action->text().contains("⚠")) {
        menu->close();
        action->trigger();
        picked = true;
        return;
      }
    menu->close();
  });
  const QPoint at = scaling->plot()->rect().center();
  QContextMenuEvent event(QContextMenuEvent::Mouse, at, scaling->plot()->mapToGlobal(at));
  QApplication::sendEvent(scaling->plot(), &event);
  ASSERT_TRUE(wait_until([&] { return picked; }, 5s));
  ASSERT_TRUE(scaling->study().has_value());
  EXPECT_EQ(scaling->study()->points[1].run, 2);
  EXPECT_TRUE(scaling->study()->points[1].picked);
  EXPECT_FALSE(scaling->study()->points[1].flags.empty());  // cancelled
  EXPECT_EQ(marks(), flagged_points());
  EXPECT_TRUE(scaling->runs_text().contains("cancelled after"))
      << scaling->runs_text().toStdString();

  // The 2-replica run's breakdown: the slowest replica's phases, as tall as its median step.
  ChartView* step_time = window_->compare()->step_time_chart();
  step_time->refresh(true);
  const Panel& bars = step_time->chart().panels[1];
  EXPECT_EQ(bars.title, "Median step, by phase (slowest replica)");
  const MedianStep median = median_step(entries[1]->data);
  double sum = 0, phases = 0;
  for (const BarSet& set : bars.bars) {
    sum += set.values[1];
    if (set.label != "other") phases += set.values[1];
  }
  EXPECT_NEAR(sum, median.step_ms, 0.05 * median.step_ms);
  EXPECT_LE(phases, median.step_ms * 1.0001);

  // Exported and reported: the scaling chart and the replica timeline come too.
  test::TempDir out;
  QString error;
  std::vector<const RunData*> runs;
  for (RunEntry* entry : entries) runs.push_back(&entry->data);
  ChartOptions options;
  options.target_accuracy = 0.5;
  ASSERT_TRUE(
      write_lab_report(QString::fromStdString(out.path().string()), runs, {}, options, &error))
      << error.toStdString();
  for (const char* file : {"scaling.png", "scaling.csv", "replica-timeline.png", "loss.png"})
    EXPECT_GT(QFileInfo(QString::fromStdString((out.path() / file).string())).size(), 0) << file;
  if (const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS"); !shots.isEmpty())
    for (const char* file : {"scaling.png", "replica-timeline.png", "summary.md", "speedup.png"})
      QFile::copy(QString::fromStdString((out.path() / file).string()),
                  shots + "/report-" + QString(file));
  std::ifstream md(out.path() / "summary.md");
  const std::string text{std::istreambuf_iterator<char>(md), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("| lr | 0.01 |"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.009999999"), std::string::npos) << text;
  EXPECT_NE(text.find("training seconds up to the first test evaluation"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("wall time"), std::string::npos) << text;
  EXPECT_NE(text.find("⚠"), std::string::npos) << text;
  test::TempDir all;
  ASSERT_TRUE(window_->export_all(QString::fromStdString(all.path().string()), &error))
      << error.toStdString();
  for (const char* file : {"scaling.png", "replica-timeline.png", "loss.png"})
    EXPECT_GT(QFileInfo(QString::fromStdString((all.path() / file).string())).size(), 0) << file;
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true);
}
