// gpulab-cli lab list|check|run.
#include "app/cli_lab.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "app/cli_export.hpp"
#include "app/cli_progress.hpp"
#include "datasets/mnist.hpp"
#include "engine/base/errors.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/session/session.hpp"
#include "engine/training/backend_factory.hpp"

namespace gpulab::cli {
namespace {

namespace fs = std::filesystem;

// --quick: a smoke test of every experiment, a few steps each and the small matrices only.
constexpr int64_t kQuickSteps = 3;
constexpr int kQuickLargestMatrix = 256;

// "lenet5 cpu" -> "lenet5-cpu", for a run folder's name.
std::string folder_name(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '-';
  return out;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw RecordError(path.string() + ": could not be written (is the disk full?)");
}

bool skipped_gpu(const Lab& lab, const std::vector<LabRunResult>& results) {
  for (const auto& r : results)
    if (const LabExperiment* e = lab.experiment(r.experiment);
        e && e->needs_gpu() && !r.skipped.empty())
      return true;
  return false;
}

// Writes every table of the lab as it stands: after each experiment, so a run cut short keeps
// the rows it finished.
std::vector<fs::path> write_tables(const Lab& lab, const std::vector<LabRunResult>& results,
                                   const fs::path& out) {
  std::vector<fs::path> written;
  for (size_t i = 0; i < lab.tables.size(); ++i) {
    const LabResultsTable table = lab_results_table(lab, lab.tables[i], results);
    const std::string stem = i == 0 ? "results" : "results-" + std::to_string(i + 1);
    write_text(out / (stem + ".csv"), to_csv(table));
    std::string markdown = "# " + lab.title + "\n\n" + to_markdown(table);
    if (skipped_gpu(lab, results))
      markdown +=
          "\nThe GPU experiments were skipped: this machine has no usable GPU, and no "
          "recorded GPU runs ship with gpulab yet. Run the lab on a machine with an NVIDIA "
          "GPU to fill those rows.\n";
    write_text(out / (stem + ".md"), markdown);
    written.push_back(out / (stem + ".csv"));
    written.push_back(out / (stem + ".md"));
  }
  return written;
}

// The lab's charts from the runs that finished, drawn as `gpulab-cli export` draws them.
void write_charts(const Lab& lab, const std::vector<LabRunResult>& results, const fs::path& out,
                  int argc, char** argv) {
  for (size_t i = 0; i < lab.charts.size(); ++i) {
    const LabChart& chart = lab.charts[i];
    ExportFlags x;
    x.chart = chart.kind;
    for (const auto& r : results) {
      const LabExperiment* e = lab.experiment(r.experiment);
      const bool wanted =
          chart.experiments.empty() || std::find(chart.experiments.begin(), chart.experiments.end(),
                                                 r.experiment) != chart.experiments.end();
      if (wanted && e && e->bench.empty() && r.summary && !r.run_dir.empty())
        x.runs.push_back(r.run_dir.string());
    }
    if (x.runs.empty()) {
      std::printf("chart %s: no runs to draw\n", chart.kind.c_str());
      continue;
    }
    const std::string stem = "chart-" + std::to_string(i + 1) + "-" + chart.kind;
    for (const char* format : {"png", "svg"}) {
      x.format = format;
      x.out = (out / (stem + "." + format)).string();
      try {
        run_export(x, argc, argv);  // says what it wrote
      } catch (const ConfigError& error) {
        // A build without Qt draws no charts; the table is still there.
        std::printf("chart %s: not drawn: %s\n", chart.kind.c_str(), error.what());
        break;
      }
    }
  }
}

// Why this machine cannot run `e`, or "" when it can.
std::string missing_hardware(const LabExperiment& e) {
  if (!e.needs_gpu()) return {};
  try {
    validate(e.experiment.backend);
    require_gpus(e.experiment.backend.device);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return {};
}

}  // namespace

LabCommands add_lab_command(CLI::App& app, LabFlags& f) {
  CLI::App* lab = app.add_subcommand("lab", "guided labs: list, check a lab file, run a lab");
  lab->require_subcommand(1);
  LabCommands c;
  c.list = lab->add_subcommand("list", "the built-in labs: name, title, minutes, hardware");
  c.check = lab->add_subcommand("check", "check lab files; exits non-zero naming file:line");
  c.check->add_option("files", f.check, "FILE.md (or a built-in lab's name)")
      ->required()
      ->expected(1, -1);
  c.run = lab->add_subcommand("run", "run a lab's experiments and write its results");
  c.run->add_option("lab", f.run, "a built-in lab's name or FILE.md")->required();
  c.run->add_option("--out", f.out, "folder for the results table, charts and runs")->required();
  c.run->add_flag("--quick", f.quick,
                  "a few steps per experiment and small matrices: a smoke test");
  c.run->add_option("--data-dir", f.data_dir, "folder with the MNIST files");
  c.run->add_flag("--quiet", f.quiet, "no progress bars, only a line per experiment");
  return c;
}

int run_lab_list() {
  for (const Lab& lab : builtin_labs())
    std::printf("%-22s  %-42s  %3d min  %s\n", lab.name.c_str(), lab.title.c_str(), lab.minutes,
                lab.hardware_text().c_str());
  return 0;
}

int run_lab_check(const LabFlags& f) {
  int status = 0;
  for (const auto& file : f.check) {
    Lab lab;
    try {
      lab = load_lab(file);
    } catch (const ConfigError& error) {
      std::fprintf(stderr, "gpulab-cli: %s\n", error.what());
      status = 1;
      continue;
    }
    for (const LabProblem& p : lab.problems) std::fprintf(stderr, "%s\n", p.to_string().c_str());
    if (!lab.ok()) {
      status = 1;
      continue;
    }
    std::printf("%s: ok: \"%s\"; experiments: %zu, tables: %zu, charts: %zu, quiz questions: %zu\n",
                lab.source.c_str(), lab.title.c_str(), lab.experiments.size(), lab.tables.size(),
                lab.charts.size(), lab.quiz.size());
  }
  return status;
}

int run_lab(const LabFlags& f, RunControl& control, int argc, char** argv) {
  const Lab lab = load_lab(f.run);
  if (!lab.ok()) {
    for (const LabProblem& p : lab.problems) std::fprintf(stderr, "%s\n", p.to_string().c_str());
    return 1;
  }
  const fs::path out = f.out;
  fs::create_directories(out);
  std::printf("lab \"%s\": %zu experiments%s; results in %s\n", lab.title.c_str(),
              lab.experiments.size(), f.quick ? " (quick: a few steps each)" : "",
              out.string().c_str());
  // The data is read before anything runs, as for `train`: a missing MNIST is one line, not a
  // failure halfway through the lab.
  std::optional<data::MnistData> mnist;
  for (const LabExperiment& e : lab.experiments)
    if (e.bench.empty() && missing_hardware(e).empty() && !mnist)
      mnist = data::load_mnist(data::default_data_dir(
          f.data_dir.empty() ? std::nullopt : std::optional<fs::path>(f.data_dir)));
  std::vector<LabRunResult> results;
  bool failed = false;
  size_t number = 0;
  for (const LabExperiment& e : lab.experiments) {
    if (control.cancel.load()) break;
    LabRunResult result;
    result.experiment = e.name;
    std::printf("[%zu/%zu] %s (%s): ", ++number, lab.experiments.size(), e.name.c_str(),
                e.experiment.backend.device.c_str());
    if (const std::string why = missing_hardware(e); !why.empty()) {
      result.skipped = why;
      std::printf("skipped: %s\n", why.c_str());
    } else if (!e.bench.empty()) {
      std::vector<int> sizes;
      for (int n : e.sizes)
        if (!f.quick || n <= kQuickLargestMatrix) sizes.push_back(n);
      std::printf("matrix multiply of %zu sizes\n", sizes.size());
      std::fflush(stdout);
      result.matmul = bench_matmul(e.experiment.backend.device, sizes);
    } else {
      std::printf("training %s\n", e.model_name.c_str());
      std::fflush(stdout);
      RunRequest request = lab_run_request(e);
      if (f.quick) {
        request.train.epochs = 0;
        request.train.max_steps = request.train.max_steps > 0
                                      ? std::min(request.train.max_steps, kQuickSteps)
                                      : kQuickSteps;
        request.train.eval_every = 0;
      }
      request.out_dir = out / "runs" / folder_name(e.name);
      ProgressPrinter progress(stdout, f.quiet);
      const RunSummary summary = execute_run(request, progress, control, &*mnist);
      progress.finish_line();
      result.summary = summary;
      result.run_dir = request.out_dir;
      // Telemetry, step phases and energy for the table's hardware columns, as the window reads
      // them; a record that cannot be read leaves those cells empty, not the run failed.
      try {
        result.readings = lab_run_readings(load_run(request.out_dir));
      } catch (const RecordError& error) {
        std::printf("  its record cannot be read: %s\n", error.what());
      }
      if (summary.status == RunStatus::Failed) {
        failed = true;
        std::printf("  failed: %s\n", summary.message.c_str());
      } else {
        std::printf("  %s after %lld steps in %.1f s (%.0f images/s)\n",
                    run_status_name(summary.status), static_cast<long long>(summary.steps),
                    summary.train_seconds,
                    summary.train_seconds > 0 ? summary.images / summary.train_seconds : 0.0);
      }
    }
    std::fflush(stdout);
    results.push_back(std::move(result));
    write_tables(lab, results, out);
  }
  for (const fs::path& file : write_tables(lab, results, out))
    std::printf("table: %s\n", file.string().c_str());
  write_charts(lab, results, out, argc, argv);
  if (control.cancel.load()) return 130;
  return failed ? 1 : 0;
}

}  // namespace gpulab::cli
