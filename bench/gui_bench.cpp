// The window's cost to training, measured: the same run headless and with the gpulab window
// attached (live plots, 30 Hz drain, telemetry), alternating, and the replot time of a chart whose
// graphs hold 100,000 points each. Prints one JSON object; bench/gui_overhead runs it under Xvfb.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <QApplication>
#include <QElapsedTimer>
#include <qcustomplot.h>

#include "app/blas_select.hpp"
#include "datasets/mnist.hpp"
#include "engine/experiment.hpp"
#include "engine/session.hpp"
#include "ui/chart_view.hpp"
#include "ui/experiment_panel.hpp"
#include "ui/device_picker.hpp"
#include "ui/main_window.hpp"
#include "ui/run_store.hpp"

namespace {

using namespace gpulab;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double images_per_second(const nlohmann::json& info) {
  return info.value("summary", nlohmann::json::object()).value("images_per_second", 0.0);
}

// A run of `steps` steps with made-up values: only the number of points matters to a replot.
RunData synthetic_run(const std::string& name, int steps) {
  RunData run;
  run.info = {{"name", name}, {"status", "finished"}, {"plan", {{"steps_per_epoch", 938}}}};
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.epoch = (s - 1) / 938 + 1;
    m.time_s = s * 0.01;
    m.loss = 2.3 / (1 + s * 1e-3) + 0.05 * ((s * 7919) % 100) / 100.0;
    m.accuracy = 0.9;
    m.step_ms = 10 + (s % 13);
    m.images_per_second = 6400;
    run.steps.push_back(m);
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  gpulab::select_blas_kernels(argc, argv);
  CLI::App cli{"gpulab window overhead"};
  std::string model = "lenet5", data_dir, runs_dir = "/tmp/gpulab-bench-gui-runs";
  int steps = 600, rounds = 3, batch = 64, points = 100000, replots = 40;
  cli.add_option("--model", model);
  cli.add_option("--steps", steps);
  cli.add_option("--batch", batch);
  cli.add_option("--rounds", rounds);
  cli.add_option("--data-dir", data_dir);
  cli.add_option("--runs-dir", runs_dir);
  cli.add_option("--points", points);
  cli.add_option("--replots", replots);
  CLI11_PARSE(cli, argc, argv);

  QApplication app(argc, argv);
  const data::MnistData mnist = data::load_mnist(
      data::default_data_dir(data_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(data_dir)));
  std::filesystem::remove_all(runs_dir);

  RunRequest request;
  request.model = load_model(model);
  request.train.batch = batch;
  request.train.epochs = 0;
  request.train.max_steps = steps;
  request.train.eval_at_epoch_end = true;
  request.backend.threads = 0;
  request.telemetry_hz = 4;

  ui::WindowOptions options;
  options.runs_dir = runs_dir;
  if (!data_dir.empty()) options.data_dir = data_dir;
  ui::MainWindow window(options);
  window.show();
  Experiment experiment{request.model, request.train, request.backend};
  window.experiment()->set_experiment(experiment);

  std::vector<double> headless, windowed, ratios;
  for (int round = 0; round < rounds; ++round) {
    request.out_dir = new_run_dir(runs_dir, "headless");
    RunObserver quiet;
    RunControl control;
    const RunSummary s = execute_run(request, quiet, control, &mnist);
    const double h = s.train_seconds > 0 ? s.images / s.train_seconds : 0;

    if (window.start_training() != 1) {
      std::fprintf(stderr, "gui_bench: the window did not start a run: %s\n", qPrintable(window.message()));
      return 1;
    }
    while (window.any_running()) {
      QApplication::processEvents(QEventLoop::AllEvents, 20);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const double w = images_per_second(window.store()->entries().front()->data.info);
    headless.push_back(h);
    windowed.push_back(w);
    ratios.push_back(h > 0 ? w / h : 0);
    std::fprintf(stderr, "round %d: headless %.0f images/s, with the window %.0f images/s (%.1f%%)\n",
                 round + 1, h, w, 100 * ratios.back());
  }

  // Replot: the loss chart of two runs, each with `points` steps (raw and smoothed graphs).
  const RunData a = synthetic_run("a", points), b = synthetic_run("b", points);
  ui::ChartView view(ChartKind::Loss);
  view.resize(1200, 750);
  view.show();
  view.set_runs({&a, &b}, {ui::run_color(0), ui::run_color(1)});
  QApplication::processEvents();
  std::vector<double> replot_ms;
  for (int i = 0; i < replots; ++i) {
    QElapsedTimer timer;
    timer.start();
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    replot_ms.push_back(timer.nsecsElapsed() / 1e6);
  }
  int graph_points = 0;
  for (int g = 0; g < view.plot()->graphCount(); ++g)
    graph_points = std::max(graph_points, view.plot()->graph(g)->dataCount());

  std::printf("{\"model\": \"%s\", \"batch\": %d, \"steps\": %d, \"rounds\": %d, "
              "\"headless_images_per_second\": %.1f, \"window_images_per_second\": %.1f, "
              "\"window_over_headless\": %.4f, \"replot_graphs\": %d, \"replot_points_per_graph\": %d, "
              "\"replot_median_ms\": %.3f, \"replot_max_ms\": %.3f, \"platform\": \"%s\"}\n",
              model.c_str(), batch, steps, rounds, median(headless), median(windowed), median(ratios),
              view.plot()->graphCount(), graph_points, median(replot_ms),
              *std::max_element(replot_ms.begin(), replot_ms.end()),
              qPrintable(QGuiApplication::platformName()));
  return 0;
}
