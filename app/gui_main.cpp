// gpulab: the window.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "app/blas_select.hpp"
#include "ui/device_picker.hpp"
#include "ui/experiment_panel.hpp"

#include "gpulab/build_config.hpp"
#include "ui/main_window.hpp"

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
  QApplication app(argc, argv);
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
  const QCommandLineOption tab("tab", "open on this tab: live or compare", "TAB");
  parser.addOptions({presenter, runs_dir, data_dir, telemetry, setup, train, device, recent, tab});
  parser.process(app);

  gpulab::ui::WindowOptions options;
  options.presenter = parser.isSet(presenter);
  if (parser.isSet(runs_dir)) options.runs_dir = parser.value(runs_dir).toStdString();
  if (parser.isSet(data_dir)) options.data_dir = parser.value(data_dir).toStdString();
  if (parser.isSet(telemetry)) {
    bool ok = false;
    const double hz = parser.value(telemetry).toDouble(&ok);
    if (!ok || hz <= 0 || hz > 100) {
      std::fprintf(stderr, "gpulab: --telemetry-hz must be a number in (0, 100]\n");
      return 2;
    }
    options.telemetry_hz = hz;
  }
  gpulab::ui::MainWindow window(options);
  window.show();
  auto fail = [](const QString& text) {
    std::fprintf(stderr, "gpulab: %s\n", qPrintable(text));
    return 2;
  };
  if (parser.isSet(setup)) {
    QString error;
    if (!window.experiment()->load_file(parser.value(setup), &error)) return fail(error);
  }
  if (parser.isSet(recent)) {
    bool ok = false;
    const int count = parser.value(recent).toInt(&ok);
    if (!ok || count < 0) return fail("--show-recent must be a whole number, not " + parser.value(recent));
    window.show_recent(count);
  }
  if (parser.isSet(tab) && !window.show_tab(parser.value(tab)))
    return fail("--tab must be live or compare, not " + parser.value(tab));
  if (parser.isSet(device)) {
    const QStringList devices = parser.values(device);
    if (!window.device_picker()->select_only(devices.first().toStdString()))
      return fail("--device " + devices.first() + ": not on this machine (see gpulab-cli devices)");
    for (const QString& d : devices.mid(1))
      if (!window.device_picker()->add(d.toStdString()))
        return fail("--device " + d + ": not on this machine (see gpulab-cli devices)");
  }
  if (parser.isSet(train)) QTimer::singleShot(0, &window, [&window] { window.start_training(); });
  return app.exec();
}
