// The window's side of bench/gui_overhead: one run started from the gpulab window (live plots,
// 30 Hz drain, telemetry) in this process, or the replot time of a chart whose graphs hold
// 100,000 points each. Prints one JSON object. The headless side is gpulab-cli, in a process of
// its own, as each is used: a process whose main thread has run OpenMP work keeps an idle thread
// pool that makes libgomp throttle every later team's spinning, which would tax whichever side
// ran second.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <qcustomplot.h>

#include "app/blas_select.hpp"
#include "engine/records/run_record.hpp"
#include "engine/training/experiment.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/window/main_window.hpp"

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
  CLI::App cli{"gpulab window overhead: one run in the window, or the replot time"};
  std::string mode = "window", model = "lenet5", data_dir, runs_dir = "/tmp/gpulab-bench-gui-runs";
  int steps = 600, batch = 64, points = 100000, replots = 40;
  cli.add_option("--mode", mode, "window: train once from the window; replot: time a big chart")
      ->check(CLI::IsMember({"window", "replot"}));
  cli.add_option("--model", model);
  cli.add_option("--steps", steps);
  cli.add_option("--batch", batch);
  cli.add_option("--data-dir", data_dir);
  cli.add_option("--runs-dir", runs_dir);
  cli.add_option("--points", points);
  cli.add_option("--replots", replots);
  CLI11_PARSE(cli, argc, argv);
  QApplication app(argc, argv);

  if (mode == "replot") {
    // The loss chart of two runs of `points` steps each: raw and smoothed graphs and test dots.
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
    std::printf("{\"replot_graphs\": %d, \"replot_points_per_graph\": %d, \"replot_median_ms\": %.3f, "
                "\"replot_max_ms\": %.3f, \"platform\": \"%s\"}\n",
                view.plot()->graphCount(), graph_points, median(replot_ms),
                *std::max_element(replot_ms.begin(), replot_ms.end()),
                qPrintable(QGuiApplication::platformName()));
    return 0;
  }

  // One run from the window, as a learner starts it: the window's own event loop, live plots.
  ui::WindowOptions options;
  options.runs_dir = runs_dir;
  if (!data_dir.empty()) options.data_dir = data_dir;
  ui::MainWindow window(options);
  window.show();
  Experiment experiment;
  experiment.model = load_model(model);
  experiment.train.batch = batch;
  experiment.train.epochs = 0;
  experiment.train.max_steps = steps;
  window.experiment()->set_experiment(experiment);
  if (window.start_training() != 1) {
    std::fprintf(stderr, "gui_bench: the window did not start a run: %s\n", qPrintable(window.message()));
    return 1;
  }
  QEventLoop loop;
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, [&] {
    if (!window.any_running()) loop.quit();
  });
  poll.start(200);
  loop.exec();
  const nlohmann::json& info = window.store()->entries().front()->data.info;
  std::printf("{\"window_images_per_second\": %.1f, \"status\": \"%s\", \"platform\": \"%s\"}\n",
              images_per_second(info), info.value("status", "?").c_str(),
              qPrintable(QGuiApplication::platformName()));
  return 0;
}
