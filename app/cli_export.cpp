// gpulab-cli export.
#include "app/cli_export.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include "engine/analysis/chart_builder.hpp"
#include "engine/analysis/chart_csv.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/run_names.hpp"

#ifdef GPULAB_HAVE_CHARTS
#include <QApplication>
#include <QFileInfo>

#include "ui/charts/chart_export.hpp"
#endif

namespace gpulab::cli {
namespace fs = std::filesystem;

namespace {

#ifdef GPULAB_HAVE_CHARTS
// Qt warns at every start where XDG_RUNTIME_DIR is unset (a headless login, su, cron, CI), a
// line that reads like a problem with the export. Drawing offscreen never uses that folder, so an
// export without one gets a private folder (mkdtemp: mode 0700, as Qt requires) for its run.
// An export ended by a signal while it draws removes the folder too (it is empty: drawing offscreen
// never writes there); interrupted exports left an empty gpulab-runtime-* folder in /tmp each.
char g_runtime_dir[4096];
void (*g_previous[3])(int) = {SIG_DFL, SIG_DFL, SIG_DFL};
constexpr int kEndingSignals[3] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_runtime_dir_on_signal(int signal) {
  if (g_runtime_dir[0]) ::rmdir(g_runtime_dir);  // async-signal-safe
  for (int i = 0; i < 3; ++i)
    if (kEndingSignals[i] == signal) {
      void (*previous)(int) = g_previous[i];
      std::signal(signal, previous);
      if (previous == SIG_DFL)
        std::raise(signal);  // ends the process as the signal would have
      else if (previous != SIG_IGN)
        previous(signal);
    }
}

class PrivateRuntimeDir {
 public:
  PrivateRuntimeDir() {
    if (std::getenv("XDG_RUNTIME_DIR")) return;
    std::string pattern = (fs::temp_directory_path() / "gpulab-runtime-XXXXXX").string();
    if (pattern.size() >= sizeof g_runtime_dir) return;
    if (!::mkdtemp(pattern.data())) return;  // Qt then says what it says
    dir_ = pattern;
    std::memcpy(g_runtime_dir, dir_.c_str(), dir_.size() + 1);
    for (int i = 0; i < 3; ++i)
      g_previous[i] = std::signal(kEndingSignals[i], remove_runtime_dir_on_signal);
    ::setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
  }
  ~PrivateRuntimeDir() {
    if (dir_.empty()) return;
    for (int i = 0; i < 3; ++i) std::signal(kEndingSignals[i], g_previous[i]);
    g_runtime_dir[0] = '\0';
    ::unsetenv("XDG_RUNTIME_DIR");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  PrivateRuntimeDir(const PrivateRuntimeDir&) = delete;
  PrivateRuntimeDir& operator=(const PrivateRuntimeDir&) = delete;

 private:
  std::string dir_;
};
#endif

// Every readable run of the folders given; a run that cannot be read is skipped with its reason.
std::vector<RunData> load_all(const std::vector<std::string>& folders) {
  std::vector<RunData> runs;
  auto skipped = [](const std::string& problem) {
    std::fprintf(stderr, "gpulab-cli: skipped %s\n", terminal_text(problem).c_str());
  };
  int unreadable = 0;
  for (const std::string& folder : folders) {
    if (holds_run(folder)) {
      try {
        runs.push_back(load_run(folder));
      } catch (const RecordError& e) {
        skipped(e.what());
        ++unreadable;
      }
      continue;
    }
    std::error_code error;
    if (!fs::is_directory(folder, error))
      throw ConfigError("--runs " + folder + ": " +
                        (error == std::errc::too_many_symbolic_link_levels
                             ? std::string("a symbolic link that loops")
                         : error && error != std::errc::no_such_file_or_directory
                             ? "cannot be read: " + error.message()
                             : std::string("no such folder")));
    std::vector<std::string> problems;
    std::vector<RunData> found = load_runs(folder, &problems);
    for (const auto& p : problems) skipped(p);
    unreadable += int(problems.size());
    if (found.empty() && problems.empty())
      throw ConfigError("--runs " + folder + ": no gpulab runs here (a run folder holds run.json)");
    // Oldest first, so colours and the default baseline follow the order the runs were made in.
    for (auto it = found.rbegin(); it != found.rend(); ++it) runs.push_back(std::move(*it));
  }
  if (runs.empty())
    throw RecordError("no run could be read (" + std::to_string(unreadable) +
                      " skipped, see above): nothing to export");
  return runs;
}

int baseline_index(const std::string& flag, const std::vector<const RunData*>& runs) {
  if (flag.empty()) return 0;
  const auto names = display_run_names(runs);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == flag || runs[i]->name() == flag) return int(i);
  char* end = nullptr;
  const long position = std::strtol(flag.c_str(), &end, 10);
  if (end && *end == '\0' && position >= 1 && position <= long(runs.size())) return int(position - 1);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("--baseline " + flag + ": not one of the runs (" + list +
                    ") nor a position from 1 to " + std::to_string(runs.size()));
}

#ifdef GPULAB_HAVE_CHARTS
// Runs `draw` with a QApplication on Qt's offscreen platform: drawing needs one but never a
// screen. Throws RecordError with the message `draw` gives when it returns false.
void draw_offscreen(int argc, char** argv, const std::function<bool(QString*)>& draw) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  const PrivateRuntimeDir runtime_dir;
  QApplication app(argc, argv);
  QString error;
  if (!draw(&error)) throw RecordError(error.toStdString());
}
#else
// Why a build without Qt draws nothing, naming `what` asked for a drawing.
ConfigError no_drawing(const std::string& what) {
  return ConfigError(what +
                     ": this gpulab-cli was built without Qt 6, so it writes only --format csv "
                     "(install qt6-base-dev, qt6-svg-dev and libqcustomplot-dev, then rebuild)");
}
#endif

}  // namespace

const OutputKind& chart_file_kind(const std::string& format) {
  if (format == "png") return png_picture_kind();
  if (format == "pdf") return pdf_picture_kind();
  if (format == "svg") return svg_picture_kind();
  return chart_csv_kind();
}

void write_chart_file(const Chart& chart, const std::string& path, int argc, char** argv,
                      bool force) {
  std::string format = fs::path(path).extension().string();
  if (!format.empty()) format.erase(0, 1);  // the dot
  check_output_file(path, "--out", chart_file_kind(format), force);
#ifdef GPULAB_HAVE_CHARTS
  draw_offscreen(argc, argv, [&](QString* error) {
    const QString file = QString::fromStdString(path);
    std::optional<ui::ForceReplace> forced;
    if (force) forced.emplace(file);
    const auto format = ui::export_format_from_name(QFileInfo(file).suffix());
    return ui::export_built_chart(chart, file, format.value_or(ui::ExportFormat::Csv), error);
  });
#else
  (void)chart;
  (void)force;
  (void)argc;
  (void)argv;
  throw no_drawing(path);
#endif
}

int run_export(const ExportFlags& f, int argc, char** argv) {
  const ChartKind kind = parse_chart_kind(f.chart);
  std::string format = f.format;
  if (format.empty()) format = fs::path(f.out).extension().string().substr(std::min<size_t>(1, fs::path(f.out).extension().string().size()));
  if (format != "png" && format != "pdf" && format != "svg" && format != "csv")
    throw ConfigError("--format must be png, pdf, svg or csv (or give --out a file name ending in one)");
  check_output_file(f.out, "--out", chart_file_kind(format), f.force);  // before any run is read
  const std::vector<RunData> loaded = load_all(f.runs);
  std::vector<const RunData*> runs;
  for (const RunData& run : loaded) runs.push_back(&run);
  ChartOptions options;
  options.x = parse_x_axis(f.x);
  options.smoothing = f.smoothing;
  options.baseline = baseline_index(f.baseline, runs);
  options.target_accuracy = f.target_accuracy > 1 ? f.target_accuracy / 100 : f.target_accuracy;

  if (format == "csv") {
    std::ostringstream out;
    if (kind == ChartKind::Speedup)
      write_comparison_csv(compare_runs(runs, options.baseline, options.target_accuracy), out);
    else
      write_chart_csv(build_chart(kind, runs, options), out);
    write_file_atomically(f.out, out.str());
  } else {
#ifdef GPULAB_HAVE_CHARTS
    draw_offscreen(argc, argv, [&](QString* error) {
      const auto qformat = ui::export_format_from_name(QString::fromStdString(format));
      std::optional<ui::ForceReplace> forced;
      if (f.force) forced.emplace(QString::fromStdString(f.out));
      return ui::export_chart(kind, runs, {}, options, QString::fromStdString(f.out), *qformat,
                              error, f.width, f.height);
    });
#else
    (void)argc;
    (void)argv;
    throw no_drawing("--format " + format);
#endif
  }
  std::printf("wrote %s (%s chart of %zu run%s)\n", f.out.c_str(), chart_kind_name(kind), runs.size(),
              runs.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace gpulab::cli
