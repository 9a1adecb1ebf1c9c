// gpulab-cli lab list|check|run|hand-in|verify (grade: app/cli_lab_grade.cpp).
#include "app/cli_lab.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "app/cli_export.hpp"
#include "app/cli_progress.hpp"
#include "datasets/mnist.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/text.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/hand_in_verify.hpp"
#include "engine/classkit/hand_in_zip.hpp"
#include "engine/classkit/run_consistency.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_charts.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/matmul_chart.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/outside_load.hpp"
#include "engine/session/session.hpp"
#include "engine/training/backend_factory.hpp"

namespace gpulab::cli {
namespace {

namespace fs = std::filesystem;

// A hand-in packed by write_hand_in_zip: a zip whose entries hold a hand-in's manifest.json
// (hand-ins are small: their runs' records and a few charts).
const OutputKind& hand_in_zip_kind() {
  static const OutputKind kind{"a hand-in's zip", [](const fs::path& path) {
                                 const std::string bytes = file_start(path, size_t(64) << 20);
                                 return bytes.starts_with("PK\x03\x04") &&
                                        bytes.find("/manifest.json") != std::string::npos;
                               }};
  return kind;
}

// A lab run's pace as its row in the lab's table gives it: "N images/s", at the median step.
std::string lab_pace_text(const LabRunResult& result) {
  const RunSummary& s = *result.summary;
  const double ms = result.readings.median_step_ms;
  const double pace = pace_images_per_second(double(s.images), double(s.steps), ms);
  char text[96];
  if (std::isfinite(pace))
    std::snprintf(text, sizeof text, "%.0f images/s", pace);
  else
    std::snprintf(text, sizeof text, "%.0f images/s over the whole run",
                  s.train_seconds > 0 ? double(s.images) / s.train_seconds : 0.0);
  return text;
}

// --quick: a smoke test of every experiment, a few steps each and the small matrices only.
constexpr int64_t kQuickSteps = 3;
// What every figure of a --quick run carries (run.json's "not_for_comparison", so ⚠ marks it in
// every table, chart and hand-in).
constexpr const char* kQuickMark = "quick: a few steps each, not for comparison";
constexpr int kQuickLargestMatrix = 256;

// The lab's charts from the runs that finished, drawn as `gpulab-cli export` draws them (its
// options are lab_chart's), into the hand-in's chart files; a reference run among them is marked
// in the chart as recorded elsewhere. Returns, per chart, why it is not there ("" when drawn).
std::vector<std::string> write_charts(const Lab& lab, const std::vector<LabRunResult>& results,
                                      const fs::path& out, int argc, char** argv) {
  std::vector<std::string> missing(lab.charts.size());
  for (size_t i = 0; i < lab.charts.size(); ++i) {
    const LabChart& chart = lab.charts[i];
    std::vector<RunData> loaded;
    try {
      for (size_t r : lab_chart_results(lab, i, results)) {
        loaded.push_back(load_run(results[r].run_dir));
        loaded.back().recorded_on = results[r].recorded_on;
      }
    } catch (const RecordError& error) {
      std::printf("chart %s: not drawn: %s\n", chart.kind.c_str(), error.what());
      missing[i] = error.what();
      continue;
    }
    if (loaded.empty()) {
      std::printf("chart %s: no runs to draw\n", chart.kind.c_str());
      missing[i] = "no finished runs to draw";
      continue;
    }
    std::vector<const RunData*> runs;
    for (const RunData& run : loaded) runs.push_back(&run);
    const Chart drawn = lab_chart(lab, i, runs);
    for (const char* format : {"png", "svg"}) {
      const fs::path file = out / hand_in_chart_file(lab, i, format);
      try {
        write_chart_file(drawn, file.string(), argc, argv);
        std::printf("wrote %s (%s chart of %zu run%s)\n", file.string().c_str(), chart.kind.c_str(),
                    runs.size(), runs.size() == 1 ? "" : "s");
      } catch (const std::runtime_error& error) {  // ConfigError without Qt, RecordError on write
        // A build without Qt draws no charts; the table is still there.
        std::printf("chart %s: not drawn: %s\n", chart.kind.c_str(), error.what());
        missing[i] = error.what();
        break;
      }
    }
  }
  return missing;
}

// The matrix-multiply benchmarks' chart (engine/labs/matmul_chart) beside the table: not a
// ```chart block, which draws runs' records, and a benchmark keeps none. A chart that cannot be
// drawn is said, and the table is still there. Returns whether both files were drawn.
bool write_matmul_chart(const Lab& lab, const std::vector<LabRunResult>& results,
                        const fs::path& out, int argc, char** argv) {
  const Chart chart = matmul_chart(lab, results);
  if (chart.runs.empty()) return false;
  for (const char* format : {"png", "svg"}) {
    const fs::path file = out / (std::string(kMatmulChartStem) + "." + format);
    try {
      write_chart_file(chart, file.string(), argc, argv);
      std::printf("chart: %s\n", file.string().c_str());
    } catch (const std::runtime_error& error) {  // ConfigError without Qt, RecordError on write
      std::printf("matrix-multiply chart not drawn: %s\n", error.what());
      return false;
    }
  }
  return true;
}

// The hand-in as it stands, from the machine this runs on.
LabHandIn hand_in_here(std::vector<LabRunResult> results, std::vector<int> answers,
                       const std::string& made_by) {
  LabHandIn h;
  h.results = std::move(results);
  h.answers = std::move(answers);
  h.machine = list_devices();
  h.host = this_process_json().value("host", "");
  h.date = iso_time_now();
  h.made_by = made_by;
  return h;
}

// A benchmark timed on a GPU, as a reference the lab's output folder ships with (runs/LAB.
// EXPERIMENT.matmul.json beside the run folders, which ship as they are): on a machine without
// a GPU its row then shows these timings, marked "recorded on ...". Not for timings taken under
// outside load, which would stand in for a GPU's figures with a busy machine's.
void write_gpu_bench_reference(const Lab& lab, const LabExperiment& e, const LabRunResult& result,
                               const DeviceList& devices, const fs::path& runs, int argc,
                               char** argv) {
  if (result.matmul.empty()) return;
  const fs::path file = runs / bench_reference_file_name(lab.name, e.name);
  if (!result.flags.empty()) {
    std::printf("  no reference written: %s\n", result.flags.front().c_str());
    return;
  }
  const int index = cuda_device_index(e.experiment.backend.device);
  const auto gpu = std::find_if(devices.gpus.begin(), devices.gpus.end(),
                                [&](const GpuInfo& g) { return g.index == index; });
  if (gpu == devices.gpus.end()) return;
  BenchReference r;
  r.lab = lab.name;
  r.experiment = e.name;
  r.gpu = gpu->name;
  r.driver = gpu->driver_version;
  r.cuda = gpu->runtime_version;
  r.recorded = iso_time_now().substr(0, 10);
  for (int i = 0; i < argc; ++i) r.command += (i ? " " : "") + std::string(argv[i]);
  const char* commit = std::getenv("GPULAB_COMMIT");
  r.commit = commit && *commit ? commit : std::string("gpulab ") + GPULAB_VERSION;
  r.timings = result.matmul;
  try {
    fs::create_directories(runs);
    write_bench_reference(file, r, "gpulab-cli lab run " + lab.name + " on " + r.gpu);
    std::printf("  reference: %s (beside the run folders: ships as they do)\n",
                file.string().c_str());
  } catch (const std::exception& error) {
    std::printf("  no reference written: %s\n", error.what());
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

// The reference runs for a lab with a GPU experiment (none for a CPU lab, which needs none), read
// before anything runs: a GPULAB_REFERENCE_RUNS that names no folder stops the command in one
// line, and a folder left out is said, one line each.
ReferenceRuns references_for(const Lab& lab) {
  if (std::none_of(lab.experiments.begin(), lab.experiments.end(),
                   [](const LabExperiment& e) { return e.needs_gpu(); }))
    return {};
  ReferenceRuns references = load_reference_runs(reference_runs_dir());
  for (const std::string& problem : references.problems)
    std::printf("reference run left out: %s\n", problem.c_str());
  return references;
}

// Whether FILE (already read by read_given_written) holds quiz answers ("answers").
bool given_quiz_answers(const fs::path& file) {
  std::string text;
  try {
    if (!read_record_file(file, kMaxRunJsonBytes, &text)) return false;
    const nlohmann::json given = nlohmann::json::parse(text);
    return given.is_object() && given.contains("answers");
  } catch (const std::exception&) {
    return false;
  }
}

// --replay and --data-dir, as verify and grade both take them (grade passes them to verify).
void add_replay_options(CLI::App* command, LabFlags& f) {
  command
      ->add_option("--replay", f.replay,
                   "train the first STEPS steps of each CPU run again and compare the losses")
      ->check(CLI::Range(int64_t(1), int64_t(100000)));
  command->add_option("--data-dir", f.data_dir, "folder with the MNIST files (for --replay)");
}

}  // namespace

LabCommands add_lab_command(CLI::App& app, LabFlags& f) {
  CLI::App* lab =
      app.add_subcommand("lab", "guided labs: list, check a lab file, run a lab, hand it in");
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
  c.run->add_option("--answers", f.answers,
                    "the quiz's answers for the hand-in: a hand-in's answers.json, or "
                    "{\"answers\": [{\"question\": ..., \"answer\": ...}]}");
  c.hand_in = lab->add_subcommand(
      "hand-in", "write a lab's hand-in folder from the window's runs and quiz answers");
  c.hand_in->add_option("lab", f.hand_in, "a built-in lab's name or FILE.md")->required();
  c.hand_in->add_option("--runs-dir", f.runs_dir,
                        "the runs folder the window used (default: $GPULAB_RUNS, else "
                        "~/.local/share/gpulab/runs), or a `lab run`'s --out folder");
  c.hand_in->add_option("--out", f.out, "folder for the hand-in")->required();
  c.hand_in
      ->add_option("--learner", f.learner,
                   "the learner's name, as manifest.json and the report give it")
      ->required();
  c.hand_in->add_option(
      "--answers", f.answers,
      "your answers, for a lab worked headless: a JSON file with \"written\": [{\"question\": "
      "..., \"answer\": ...}] for the lab's questions and, optionally, the quiz's \"answers\" "
      "as lab run --answers takes them (an answers.json serves)");
  c.hand_in->add_flag("--zip", f.zip,
                      "also pack the hand-in into LEARNER-LAB.zip beside the --out folder (the "
                      "folder its one top-level entry), the file a course platform takes");
  c.hand_in->add_flag("--force", f.force,
                      "let --zip replace a file there that is no hand-in zip of gpulab's");
  c.run->add_option("--learner", f.learner,
                    "the learner's name for the hand-in's manifest.json (lab verify wants one)");
  c.verify = lab->add_subcommand(
      "verify",
      "check a hand-in: its manifest, its tables and charts against its runs, each run, replays");
  c.verify->add_option("handin", f.verify, "the hand-in folder, or its .zip")->required();
  c.verify->add_option("--lab", f.lab_file,
                       "the instructor's copy of the lab (FILE.md or a built-in lab's name): its "
                       "SHA-256 must be the manifest's");
  add_replay_options(c.verify, f);
  c.grade = lab->add_subcommand(
      "grade",
      "grade a class: verify every hand-in (folders, .zip files, or a folder of them) "
      "into class.csv, class.md and charts of what the class measured");
  c.grade->add_option("paths", f.grade, "hand-in folders, .zip files, or folders holding them")
      ->required()
      ->expected(1, -1);
  c.grade->add_option("--out", f.out, "folder for class.csv, class.md and the class charts")
      ->required();
  c.grade->add_option("--roster", f.roster,
                      "the class: a CSV with the columns id,name (and optionally email); hand-ins "
                      "are matched to its learners, and each learner without one gets a row");
  c.grade->add_option("--lab", f.lab_file,
                      "the instructor's copy of the lab (FILE.md or a built-in lab's name): "
                      "every hand-in's lab SHA-256 must be its");
  c.grade->add_flag("--force", f.force,
                    "let the report replace files in --out that are not an earlier report's");
  add_replay_options(c.grade, f);
  return c;
}

int run_lab_hand_in(const LabFlags& f, int argc, char** argv) {
  const std::string learner = checked_learner(f.learner, "--learner");
  const Lab lab = load_lab(f.hand_in);
  if (!lab.ok()) {
    for (const LabProblem& p : lab.problems)
      std::fprintf(stderr, "%s\n", terminal_text(p.to_string()).c_str());
    return 1;
  }
  const fs::path out = f.out;
  const fs::path runs_dir = f.runs_dir.empty() ? default_runs_dir() : fs::path(f.runs_dir);
  std::error_code error;
  if (!fs::is_directory(runs_dir, error))
    throw ConfigError("--runs-dir " + runs_dir.string() +
                      ": not a folder; name the runs folder the window used (gpulab --runs-dir, "
                      "else $GPULAB_RUNS, else ~/.local/share/gpulab/runs), or the --out "
                      "folder of a `lab run`");
  // Held to the end: a second hand-in into --out is refused, never mixed with this one.
  const FolderWriteLock out_lock(out, "--out");
  check_hand_in_folder(out, lab, "--out");
  // The hand-in replaces --out whole: inside the runs it reads it would be read as theirs and
  // break their folder, and around them it would take them away.
  const fs::path out_at = fs::weakly_canonical(fs::absolute(out, error), error);
  const fs::path runs_at = fs::weakly_canonical(fs::absolute(runs_dir, error), error);
  const auto within = [](const fs::path& inner, const fs::path& outer) {
    const fs::path rest = inner.lexically_relative(outer);
    return !rest.empty() && *rest.begin() != "..";
  };
  if (within(out_at, runs_at))
    throw OutputRefused("--out " + out.string() + ": is inside --runs-dir " + runs_dir.string() +
                        ", whose runs the hand-in reads; give a folder outside it");
  if (within(runs_at, out_at))
    throw OutputRefused("--out " + out.string() + ": holds --runs-dir " + runs_dir.string() +
                        ", and a hand-in replaces its folder whole; give a folder outside it");
  // The zip goes beside the folder, never in it: the folder is the zip's one top-level entry.
  fs::path folder = out.lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  const fs::path zip = folder.parent_path() / hand_in_zip_name(learner, lab.name);
  if (f.zip) check_output_file(zip, "--zip", hand_in_zip_kind(), f.force);
  // A `lab run` output folder (its runs/ and answers.json beside its report) rebuilds its
  // hand-in: the runs from runs/, the quiz from answers.json. Else the window's runs folder, with
  // the lab's record in its progress file.
  const bool lab_run_output = fs::is_directory(runs_dir / "runs", error) &&
                              fs::is_regular_file(runs_dir / "answers.json", error) &&
                              !fs::exists(lab_progress_path(runs_dir), error);
  LabProgress progress;
  const LabRecord* record = nullptr;
  if (lab_run_output) {
    std::printf("%s: a `lab run` folder: its runs/ and answers.json\n", runs_dir.c_str());
  } else {
    std::string problem;
    progress = load_lab_progress(runs_dir, &problem);
    if (!problem.empty()) std::fprintf(stderr, "gpulab-cli: %s\n", problem.c_str());
    // The window keeps a lab by its source: a built-in lab's name, or the file's absolute path,
    // which may be spelt otherwise than here ("labs/../x.md").
    if (const auto found = progress.labs.find(lab.source); found != progress.labs.end())
      record = &found->second;
    std::error_code ignored;  // a path that cannot be resolved matches nothing
    const fs::path file = fs::weakly_canonical(lab.source, ignored);
    for (const auto& [source, kept] : progress.labs)
      if (!record && !file.empty() && source.rfind(":/", 0) != 0 &&
          fs::weakly_canonical(source, ignored) == file)
        record = &kept;
  }
  std::vector<std::string> problems;
  const std::vector<RunData> runs =
      load_runs(lab_run_output ? runs_dir / "runs" : runs_dir, &problems);
  for (const std::string& p : problems) std::printf("skipped %s\n", terminal_text(p).c_str());
  const ReferenceRuns references = references_for(lab);
  const DeviceList devices = list_devices();
  const std::vector<LabRunResult> results =
      lab_results_from(lab, record, runs, devices, references);
  // A shipped reference run copied into the runs is refused before anything is written: a
  // reference run is only ever shown marked as recorded elsewhere.
  std::vector<std::string> gpus;
  for (const GpuInfo& gpu : devices.gpus) gpus.push_back(gpu.name);
  if (const std::string problem = shipped_run_problem(results, runs, gpus); !problem.empty())
    throw ConfigError("--runs-dir " + runs_dir.string() + ": " + problem);
  for (const std::string& warning : setting_warnings(lab, results, runs))
    std::printf("warning: %s\n", warning.c_str());
  LabHandIn h = hand_in_here(results, {}, "gpulab-cli lab hand-in");
  add_record_answers(h, lab, record);
  if (lab_run_output) h.answers = read_given_answers(runs_dir / "answers.json", lab, "--runs-dir");
  if (!f.answers.empty()) {
    // Answers given on the command line win: a learner working headless has no window's record.
    const std::map<std::string, std::string> written =
        read_given_written(f.answers, lab, "--answers");
    for (const auto& [question, answer] : written) h.written[question] = answer;
    if (given_quiz_answers(f.answers)) {
      h.answers = read_given_answers(f.answers, lab, "--answers");
      h.attempts.clear();  // the answers given are the only attempts
    }
  }
  h.learner = learner;
  // Written beside --out and swapped in whole: a reader finds the earlier hand-in or this one.
  replace_folder_atomically(out, [&](const fs::path& staging) {
    h.charts_missing = write_charts(lab, results, staging, argc, argv);
    write_hand_in(staging, lab, h);
  });
  if (f.zip) {
    write_hand_in_zip(folder, zip);
    std::printf("zip: %s\n", zip.string().c_str());
  }
  int ran = 0;
  for (const LabRunResult& r : results)
    ran += r.recorded_on.empty() && (r.summary || !r.matmul.empty());
  std::printf(
      "hand-in of \"%s\" by %s: %d of %zu experiments with results, quiz %d of %zu "
      "right (%d at the first attempt), %zu of %zu questions answered in words; %s\n",
      terminal_text(lab.title).c_str(), terminal_text(h.learner).c_str(), ran,
      lab.experiments.size(), quiz_score(lab, h.answers), lab.quiz.size(),
      first_attempt_score(lab, h),
      size_t(std::count_if(h.written.begin(), h.written.end(),
                           [](const auto& w) { return !w.second.empty(); })),
      lab.questions.size(), (out / "README.md").string().c_str());
  if (lab_run_output)
    for (const LabExperiment& e : lab.experiments)
      if (!e.bench.empty())
        std::printf(
            "%s: a benchmark keeps no run folder, so its timings are not in %s; run the "
            "lab again to measure them\n",
            terminal_text(e.name).c_str(), runs_dir.c_str());
  return 0;
}

// A folder made for one command and removed when it ends: a zip given to `lab verify` is
// unpacked there, through the checks `lab grade` makes.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string made = (fs::temp_directory_path() / "gpulab-verify-XXXXXX").string();
    if (!mkdtemp(made.data()))
      throw ConfigError("cannot make a folder under " + fs::temp_directory_path().string() +
                        " to unpack the zip in; set TMPDIR to a folder you can write");
    path_ = made;
  }
  ~ScratchFolder() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

int run_lab_verify(const LabFlags& f, RunControl& control) {
  VerifyOptions options;
  options.lab = f.lab_file;
  options.replay_steps = f.replay;
  if (!f.data_dir.empty()) options.data_dir = fs::path(f.data_dir);
  // A .zip (`lab hand-in --zip`, or as a course platform gives it) is opened as `lab grade` opens
  // it: unpacked through the same checks, its problems named inside it ("ada.zip:ada/run.json").
  fs::path dir = f.verify;
  std::string shown = f.verify;
  std::optional<ScratchFolder> scratch;
  std::error_code error;
  std::string ext = fs::path(f.verify).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".zip" && fs::is_regular_file(f.verify, error)) {
    scratch.emplace();
    std::string problem;
    dir = open_hand_in(f.verify, scratch->path() / "unpacked", ZipLimits{}, &problem);
    if (dir.empty()) {
      std::printf("%s: %s\n%s: the zip holds no hand-in that can be checked: it does not verify\n",
                  f.verify.c_str(), terminal_text(problem).c_str(), f.verify.c_str());
      return 1;
    }
    shown = f.verify + ":" + dir.lexically_relative(scratch->path() / "unpacked").string();
    if (shown.ends_with(":.")) shown.resize(shown.size() - 2);
  }
  const HandInVerdict verdict = verify_hand_in(dir, options, &control);
  // Each problem names its file as a path the instructor can open (inside a zip: ZIP:FOLDER/FILE).
  for (const HandInProblem& p : verdict.problems)
    std::printf("%s: %s\n",
                (scratch ? shown + "/" + p.file : (fs::path(shown) / p.file).string()).c_str(),
                terminal_text(p.message).c_str());
  for (const std::string& note : verdict.notes) std::printf("%s\n", terminal_text(note).c_str());
  // Flags are for the instructor to look at: they never decide the verdict.
  for (const std::string& flag : verdict.flags) std::printf("⚠ %s\n", terminal_text(flag).c_str());
  const std::string learner = verdict.learner.empty()
                                  ? std::string("an unnamed learner")
                                  : "\"" + terminal_text(verdict.learner) + "\"";
  if (!verdict.problems.empty()) {
    std::printf("%s: %zu problem%s: the hand-in of %s does not verify\n", f.verify.c_str(),
                verdict.problems.size(), verdict.problems.size() == 1 ? "" : "s", learner.c_str());
    return 1;
  }
  // Nothing wrong was found, but the tables and settings were not held to any copy of the lab: no
  // verdict of "verified" (the notes above say why).
  if (!verdict.lab_checked) {
    std::printf(
        "%s: not verified: the hand-in of %s for \"%s\": its results were not recomputed and its "
        "settings not checked, since this gpulab has no built-in lab of that name and SHA-256; "
        "give the lab's file with --lab FILE.md\n",
        f.verify.c_str(), learner.c_str(), terminal_text(verdict.lab).c_str());
    return 1;
  }
  std::printf("%s: verified: the hand-in of %s for \"%s\"\n", f.verify.c_str(), learner.c_str(),
              terminal_text(verdict.lab).c_str());
  return 0;
}

int run_lab_list() {
  for (const Lab& lab : builtin_labs())
    std::printf("%-22s  %-42s  %3d min  %s\n", lab.name.c_str(), terminal_text(lab.title).c_str(),
                lab.minutes, lab.hardware_text().c_str());
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
    for (const LabProblem& p : lab.problems)
      std::fprintf(stderr, "%s\n", terminal_text(p.to_string()).c_str());
    if (!lab.ok()) {
      status = 1;
      continue;
    }
    std::printf("%s: ok: \"%s\"; experiments: %zu, tables: %zu, charts: %zu, quiz questions: %zu\n",
                lab.source.c_str(), terminal_text(lab.title).c_str(), lab.experiments.size(),
                lab.tables.size(), lab.charts.size(), lab.quiz.size());
  }
  return status;
}

int run_lab(const LabFlags& f, RunControl& control, int argc, char** argv) {
  const std::string learner = f.learner.empty() ? "" : checked_learner(f.learner, "--learner");
  const Lab lab = load_lab(f.run);
  if (!lab.ok()) {
    for (const LabProblem& p : lab.problems)
      std::fprintf(stderr, "%s\n", terminal_text(p.to_string()).c_str());
    return 1;
  }
  const fs::path out = f.out;
  // Before anything runs: the folder is this run's alone, it takes a hand-in, and no run of an
  // earlier `lab run` is in the way of this one's.
  const FolderWriteLock out_lock(out, "--out");
  check_hand_in_folder(out, lab, "--out");
  for (const LabExperiment& e : lab.experiments)
    if (e.bench.empty()) check_run_folder(out / "runs" / experiment_folder(e.name), "--out");
  std::vector<int> answers(lab.quiz.size(), -1);  // a headless run has none unless given
  if (!f.answers.empty()) answers = read_given_answers(f.answers, lab, "--answers");
  const ReferenceRuns references = references_for(lab);
  fs::create_directories(out);
  LabHandIn here =
      hand_in_here({}, answers,
                   f.quick ? std::string("gpulab-cli lab run --quick (") + kQuickMark + ")"
                           : "gpulab-cli lab run");
  here.learner = learner;
  auto write = [&](const std::vector<LabRunResult>& results, std::vector<std::string> charts,
                   bool matmul_chart = false) {
    LabHandIn h = here;
    h.date = iso_time_now();  // when this write is: after the runs it holds were made
    h.results = results;
    h.charts_missing = std::move(charts);
    h.matmul_chart = matmul_chart;
    return write_hand_in(out, lab, h);
  };
  std::printf("lab \"%s\": %zu experiments%s; results in %s\n", terminal_text(lab.title).c_str(),
              lab.experiments.size(), f.quick ? " (quick: a few steps each)" : "",
              out.string().c_str());
  // The data is read before anything runs, as for `train`: a missing MNIST is one line, not a
  // failure halfway through the lab.
  std::optional<data::MnistData> mnist;
  for (const LabExperiment& e : lab.experiments)
    if (e.bench.empty() && missing_hardware(e).empty() && !mnist)
      mnist = data::load_mnist(data::default_data_dir(
          f.data_dir.empty() ? std::nullopt : std::optional<fs::path>(f.data_dir)));
  // The folder says whose hand-in it is before the first run starts: a lab cut short leaves a
  // hand-in with the rows it finished, never an unmarked folder.
  const std::vector<std::string> charts_later(lab.charts.size(),
                                              "drawn when every experiment has run");
  write({}, charts_later);
  // Said before the first experiment, so the learner can wait rather than hand in marked figures.
  if (const std::string busy = busy_machine_notice(outside_load_now()); !busy.empty())
    std::printf("%s\n", busy.c_str());
  std::vector<LabRunResult> results;
  bool failed = false;
  size_t number = 0;
  for (const LabExperiment& e : lab.experiments) {
    if (control.cancel.load()) break;
    LabRunResult result;
    result.experiment = e.name;
    std::printf("[%zu/%zu] %s (%s): ", ++number, lab.experiments.size(),
                terminal_text(e.name).c_str(), e.experiment.backend.device.c_str());
    if (const std::string why = missing_hardware(e); !why.empty()) {
      if (auto reference = reference_result(lab, e, references); reference && !reference->summary) {
        result = std::move(*reference);  // a benchmark's timings, recorded on a GPU elsewhere
        std::printf(
            "not run here: %s\n  reference timings, recorded on %s (not measured on this "
            "machine): %zu sizes, n = %d to %d\n",
            why.c_str(), result.recorded_on.c_str(), result.matmul.size(),
            result.matmul.front().size, result.matmul.back().size);
      } else if (reference) {
        result = std::move(*reference);
        const RunSummary& s = *result.summary;
        char accuracy[48] = "";
        if (std::isfinite(s.test_accuracy))
          std::snprintf(accuracy, sizeof accuracy, ", test accuracy %.2f%%",
                        100.0 * s.test_accuracy);
        std::printf(
            "not run here: %s\n  reference run, recorded on %s (not measured on this "
            "machine): %lld steps in %.1f s (%s)%s\n",
            why.c_str(), result.recorded_on.c_str(), static_cast<long long>(s.steps),
            s.train_seconds, lab_pace_text(result).c_str(), accuracy);
      } else {
        result.skipped = why;
        std::printf("skipped: %s\n", why.c_str());
      }
    } else if (!e.bench.empty()) {
      std::vector<int> sizes;
      for (int n : e.sizes)
        if (!f.quick || n <= kQuickLargestMatrix) sizes.push_back(n);
      if (e.bench == "inference")
        std::printf("inference of %s at %zu batch sizes\n", terminal_text(e.model_name).c_str(),
                    sizes.size());
      else
        std::printf("matrix multiply of %zu sizes\n", sizes.size());
      std::fflush(stdout);
      result = run_lab_bench(e, sizes);
      for (const std::string& flag : result.flags) std::printf("  ⚠ %s\n", flag.c_str());
      if (e.needs_gpu() && !f.quick)
        write_gpu_bench_reference(lab, e, result, here.machine, out / "runs", argc, argv);
    } else {
      std::printf("training %s\n", e.model_name.c_str());
      std::fflush(stdout);
      RunRequest request = lab_run_request(e);
      // Named as the window names a lab's runs, so that experiment_run finds this run (or, from
      // a GPU machine, this run shipped as a reference run) as it finds the window's.
      request.name = lab_run_name(lab, e);
      if (f.quick) {
        request.train.epochs = 0;
        request.train.max_steps = request.train.max_steps > 0
                                      ? std::min(request.train.max_steps, kQuickSteps)
                                      : kQuickSteps;
        request.train.eval_every = 0;
        request.not_for_comparison = kQuickMark;
      }
      request.out_dir = out / "runs" / experiment_folder(e.name);
      ProgressPrinter progress(stdout, f.quiet);
      const RunSummary summary = execute_run(request, progress, control, &*mnist);
      progress.finish_line();
      result.summary = summary;
      result.run_dir = request.out_dir;
      // Its flags and devices, and the telemetry, step phases and energy of the table's hardware
      // columns, as the window reads them; a record that cannot be read leaves those cells empty,
      // not the run failed.
      try {
        const RunData run = load_run(request.out_dir);
        add_run_facts(result, run);
        result.readings = lab_run_readings(run);
      } catch (const RecordError& error) {
        std::printf("  its record could not be read back: %s\n", error.what());
      }
      if (summary.status == RunStatus::Failed) {
        failed = true;
        std::printf("  failed: %s\n", summary.message.c_str());
      } else {
        std::printf("  %s after %lld steps in %.1f s (%s)\n", run_status_name(summary.status),
                    static_cast<long long>(summary.steps), summary.train_seconds,
                    lab_pace_text(result).c_str());
      }
    }
    std::fflush(stdout);
    results.push_back(std::move(result));
    // After each experiment, so a lab cut short keeps the rows it finished.
    write(results, charts_later);
  }
  const std::vector<std::string> charts = write_charts(lab, results, out, argc, argv);
  const bool matmul_chart = write_matmul_chart(lab, results, out, argc, argv);
  for (const fs::path& file : write(results, charts, matmul_chart)) {
    const std::string name = file.filename().string();
    if (name.rfind("results", 0) == 0) std::printf("table: %s\n", file.string().c_str());
  }
  std::printf(
      "hand-in: %s (the report, with answers.json, machine.json and manifest.json beside "
      "it)\n",
      (out / "README.md").string().c_str());
  if (learner.empty())
    std::printf(
        "no --learner given: the hand-in names no learner, and `lab verify` wants one; "
        "run again with --learner NAME, or hand it in with gpulab-cli lab hand-in %s "
        "--learner NAME --runs-dir %s --out HANDIN\n",
        f.run.c_str(), out.string().c_str());
  if (control.cancel.load()) return 130;
  return failed ? 1 : 0;
}

}  // namespace gpulab::cli
