// The window's test fixture, shared by the window suites: a tiny synthetic MNIST, an empty runs
// folder, a device list with no GPU (or two fake ones), and a window on them that is stopped and
// closed after each test.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>
#include <QApplication>
#include <QtTest/QTest>

#include "engine/devices/devices.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/experiment.hpp"
#include "test_support.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/window/guarded_application.hpp"
#include "ui/window/main_window.hpp"
#include "ui_input.hpp"

namespace gpulab::test {

inline DeviceList no_gpu_devices() {
  DeviceList devices;
  devices.cpu = cpu_info();
  devices.no_gpu_reason = "no NVIDIA driver found (test)";
  return devices;
}

// Two GPUs as list_devices would list them, for the picker's GPU choices: nothing here can run
// on them, so tests check the requests the window would start, not runs.
inline DeviceList two_gpu_devices() {
  DeviceList devices;
  devices.cpu = cpu_info();
  for (int index : {0, 1}) {
    GpuInfo gpu;
    gpu.index = index;
    gpu.name = "NVIDIA H100 80GB HBM3 (fake)";
    gpu.memory_bytes = 80.0 * (1 << 30);
    gpu.compute_major = 9;
    gpu.driver_version = "999.12.34";
    gpu.runtime_version = "13.0";
    gpu.pci_bus_id = index == 0 ? "0000:65:00.0" : "0000:66:00.0";
    devices.gpus.push_back(gpu);
  }
  return devices;
}

class WindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_mnist(data_.path(), synthetic_set(512, 1), synthetic_set(128, 2));
    options_.runs_dir = runs_.path();
    options_.data_dir = data_.path();
    options_.devices = no_gpu_devices();
    options_.telemetry_hz = 20;
  }
  void TearDown() override { close_window(); }
  // A window on the options, not yet shown (as a restart makes it, before its first paint).
  void make_window() { window_ = std::make_unique<ui::MainWindow>(options_); }
  void open_window() {
    make_window();
    window_->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(window_.get()));
  }
  // Stops its runs and closes it, as quitting does (the setup is kept in the runs folder).
  void close_window() {
    if (!window_) return;
    window_->stop_all();
    wait_until([&] { return !window_->any_running(); }, std::chrono::seconds(60));
    window_.reset();
  }
  // A small, fast setup: the MLP, batch 32, `steps` steps, tested every `eval_every`, on
  // `threads` CPU threads (one unless said).
  void small_setup(int64_t steps, float lr = 0.01f, OptimizerKind optimizer = OptimizerKind::Adam,
                   int threads = 1, int64_t eval_every = 10) {
    Experiment e;
    e.model = preset("mlp");
    e.train.batch = 32;
    e.train.epochs = 1000;
    e.train.max_steps = steps;
    e.train.optimizer.kind = optimizer;
    e.train.optimizer.lr = lr;
    e.train.eval_every = eval_every;
    window_->experiment()->set_experiment(e);
    window_->device_picker()->set_threads(threads);
  }

  TempDir runs_, data_;
  ui::WindowOptions options_;
  std::unique_ptr<ui::MainWindow> window_;
};

// The screens of a window test program with more than the offscreen platform's own: its 800x800
// screen first (where windows open, as in every other program), then a projector's 1024x768 and
// 1280x720 and a 1920x1080 monitor side by side, each a screen a window can be maximized on.
inline constexpr const char* kClassroomScreens = R"({"screens": [
  {"name": "offscreen", "x": 0, "y": 0, "width": 800, "height": 800, "logicalDpi": 96,
   "logicalBaseDpi": 96, "dpr": 1},
  {"name": "1024x768", "x": 800, "y": 0, "width": 1024, "height": 768, "logicalDpi": 96,
   "logicalBaseDpi": 96, "dpr": 1},
  {"name": "1280x720", "x": 1824, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96,
   "logicalBaseDpi": 96, "dpr": 1},
  {"name": "1920x1080", "x": 3104, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96,
   "logicalBaseDpi": 96, "dpr": 1}]})";

// The main() of a window test program. No display needed: Qt draws offscreen. Settings
// (remembered imports, the data folder) go to a throwaway folder, never the user's. qt_dialogs:
// Qt's own file dialogs, which a test can close (a platform dialog could not be). screens: the
// offscreen platform's screens as its configuration file gives them (kClassroomScreens), or none
// for its one 800x800 screen.
inline int run_window_tests(int argc, char** argv, bool qt_dialogs = false,
                            const char* screens = nullptr) {
  TempDir config;
  QByteArray platform = "offscreen";
  if (screens) {
    const std::filesystem::path file = config.path() / "screens.json";
    std::ofstream(file) << screens;
    platform += ":configfile=" + QByteArray::fromStdString(file.string());
  }
  qputenv("QT_QPA_PLATFORM", platform);
  qputenv("XDG_CONFIG_HOME", QByteArray::fromStdString(config.path().string()));
  if (qt_dialogs) QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
  ui::GuardedApplication app(argc, argv);  // the window's own, with its event boundary
  QApplication::setOrganizationName("gpulab-test");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

}  // namespace gpulab::test
