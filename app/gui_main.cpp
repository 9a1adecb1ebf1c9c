// gpulab: the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/blas_select.hpp"
#include "gpulab/build_config.hpp"
#include "io/input_file.hpp"
#include "ui/inside/inside_tab.hpp"
#include "ui/labs/labs_tab.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/window/guarded_application.hpp"
#include "ui/window/main_window.hpp"

namespace {

// SIGTERM or SIGINT: the runs end as cancelled (their records say so), then the window quits.
// A run that does not stop within a minute is left to the window's teardown, which cancels it.
void stop_runs_then_quit(gpulab::ui::MainWindow& window, const QString& signal_name) {
  std::fprintf(stderr, "gpulab: %s: stopping the runs (recorded as cancelled), then quitting\n",
               qPrintable(signal_name));
  window.stop_all();
  auto* poll = new QTimer(&window);
  auto waited = std::make_shared<int>(0);
  QObject::connect(poll, &QTimer::timeout, &window, [&window, waited] {
    if (!window.any_running() || ++*waited > 1200) QApplication::quit();
  });
  poll->start(50);
}

}  // namespace

int main(int argc, char** argv) {
  gpulab::select_blas_kernels(argc, argv);
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  bool help = false;  // --help and --version answer without a screen
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    help |= arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "-v" || arg == "--version";
  }
  if (help && (!platform || !*platform)) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  else if ((!platform || !*platform) && (!display || !*display) && (!wayland || !*wayland)) {
    std::fprintf(stderr,
                 "gpulab: no display ($DISPLAY is not set): start it from a desktop session, under "
                 "xvfb-run, or use gpulab-cli for training without a window\n");
    return 1;
  }
  gpulab::ui::GuardedApplication app(argc, argv);
  app.watch_termination_signals();
  QApplication::setOrganizationName("gpulab");
  QApplication::setApplicationName("gpulab");
  QApplication::setApplicationVersion(GPULAB_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription("gpulab: train CNNs on MNIST on the CPU and GPUs, and measure it");
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption presenter("presenter", "large fonts and plots filling the screen, for a room");
  const QCommandLineOption runs_dir("runs-dir", "folder of run records (default: $GPULAB_RUNS or ~/.local/share/gpulab/runs)", "DIR");
  const QCommandLineOption data_dir("data-dir", "folder with the MNIST files", "DIR");
  const QCommandLineOption telemetry("telemetry-hz", "device samples per second (default 10)", "HZ");
  const QCommandLineOption setup("setup", "open this setup (a JSON file saved by gpulab)", "FILE");
  const QCommandLineOption train("train", "start training the setup at once, on the CPU unless --device says otherwise");
  const QCommandLineOption device("device", "with --train: where to train (cpu, cuda:N; repeat to race)", "DEVICE");
  const QCommandLineOption recent("show-recent", "show the N most recent runs in the plots", "N");
  const QCommandLineOption tab("tab", "open on this tab: live, compare, labs or inside", "TAB");
  const QCommandLineOption weights(
      "weights", "open this checkpoint on the Inside tab (a .safetensors file)", "FILE");
  const QCommandLineOption class_folder(
      "class-folder",
      "open the class board on this folder (hand-ins to grade, or one lab grade wrote), as File "
      "> Open class folder does",
      "DIR");
  const QCommandLineOption lab(
      "lab",
      "open this lab (a Markdown lab file, see docs/labs.md) on the Labs tab; repeat for more",
      "FILE.md");
  parser.addOptions({presenter, runs_dir, data_dir, telemetry, setup, train, device, recent, tab,
                     lab, weights, class_folder});
  parser.process(app);

  gpulab::ui::WindowOptions options;
  options.presenter = parser.isSet(presenter);
  if (parser.isSet(runs_dir)) {
    // Named by hand, it must be a folder: a typo or a file would show an empty list.
    options.runs_dir = parser.value(runs_dir).toStdString();
    std::error_code error;
    const auto status = std::filesystem::status(options.runs_dir, error);
    std::string problem;
    if (error && error != std::errc::no_such_file_or_directory)
      problem = "cannot be read: " + error.message();
    else if (!std::filesystem::exists(status))
      problem = "no such folder; create it first (mkdir -p " + options.runs_dir.string() + ")";
    else if (!std::filesystem::is_directory(status))
      problem = "is a file, not a folder of runs";
    if (!problem.empty()) {
      std::fprintf(stderr, "gpulab: --runs-dir %s: %s\n", options.runs_dir.c_str(),
                   problem.c_str());
      return 2;
    }
  }
  if (parser.isSet(data_dir)) options.data_dir = parser.value(data_dir).toStdString();
  if (parser.isSet(telemetry)) {
    bool ok = false;
    const double hz = parser.value(telemetry).toDouble(&ok);
    if (!ok || !(hz > 0 && hz <= 100)) {  // NaN fails both comparisons: it is no rate
      std::fprintf(stderr, "gpulab: --telemetry-hz must be a number in (0, 100]\n");
      return 2;
    }
    options.telemetry_hz = hz;
  }
  gpulab::ui::MainWindow window(options);
  window.show();
  QObject::connect(&app, &gpulab::ui::GuardedApplication::error_caught, &window,
                   [&window](const QString& what) {
                     window.show_warning(QString("Something went wrong: %1. The window goes on; "
                                                 "what was recorded is kept.")
                                             .arg(what));
                   });
  QObject::connect(&app, &gpulab::ui::GuardedApplication::termination_requested, &window,
                   [&window](const QString& name) { stop_runs_then_quit(window, name); });
  auto fail = [](const QString& text) {
    std::fprintf(stderr, "gpulab: %s\n", qPrintable(text));
    return 2;
  };
  if (parser.isSet(setup)) {  // a file, or a shipped demo by name (race, cpu-threads)
    QString error;
    if (!window.open_setup(parser.value(setup), &error)) return fail(error);
  }
  if (parser.isSet(recent)) {
    bool ok = false;
    const int count = parser.value(recent).toInt(&ok);
    if (!ok || count < 0) return fail("--show-recent must be a whole number, not " + parser.value(recent));
    window.show_recent(count);
  }
  // A lab file with an error is reported on the Labs tab (file, line, problem) and here; the
  // window still opens with the other labs.
  for (const QString& file : parser.values(lab)) {
    if (!window.labs()->open_lab(file.toStdString()))
      std::fprintf(stderr, "gpulab: --lab %s: not loaded:\n%s\n", qPrintable(file),
                   qPrintable(window.labs()->message()));
    window.tabs()->setCurrentWidget(window.labs());
  }
  if (parser.isSet(weights)) {
    // Opened on the Inside tab, which says there what does not fit (a file that is no checkpoint,
    // weights of another model); only a path that is no file at all (missing, a FIFO, a folder)
    // stops the start, saying which.
    const std::filesystem::path file = parser.value(weights).toStdString();
    if (const std::string problem = gpulab::input_file_problem(file, "a checkpoint");
        !problem.empty())
      return fail("--weights " + QString::fromStdString(problem));
    window.inside()->open_weights(file);
    window.show_tab("inside");
  }
  if (parser.isSet(class_folder)) {
    const std::filesystem::path folder = parser.value(class_folder).toStdString();
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error))
      return fail("--class-folder " + parser.value(class_folder) +
                  ": no such folder; give the folder of the class's hand-ins");
    window.open_class_folder(folder);
  }
  if (parser.isSet(tab) && !window.show_tab(parser.value(tab)))
    return fail("--tab must be live, compare, labs or inside, not " + parser.value(tab));
  if (parser.isSet(device)) {
    // A demo asking for a CPU and a GPU runs its CPU half on a machine without one, and says so;
    // only when no device asked for is here does the window refuse.
    QStringList missing;
    bool any = false;
    for (const QString& d : parser.values(device)) {
      const bool here = any ? window.device_picker()->add(d.toStdString())
                            : window.device_picker()->select_only(d.toStdString());
      any |= here;
      if (!here) missing << d;
    }
    if (!any)
      return fail("--device " + missing.join(", --device ") +
                  ": not on this machine (see gpulab-cli devices)");
    if (!missing.isEmpty())
      window.show_warning(QString("Not on this machine: %1; training on the others. %2")
                              .arg(missing.join(", "),
                                   window.device_picker()->has_gpu()
                                       ? QString("See gpulab-cli devices.")
                                       : "No GPU: " +
                                             QString::fromStdString(
                                                 window.device_picker()->devices().no_gpu_reason) +
                                             "."));
  }
  if (parser.isSet(train))
    QTimer::singleShot(0, &window, [&window, chosen = parser.isSet(device)] {
      // A demo's race when it set one up (and no --device chose otherwise), else the ticked
      // devices.
      if (!chosen && window.race()->entries().size() >= 2)
        window.start_race();
      else
        window.start_training();
    });
  return app.exec();
}
