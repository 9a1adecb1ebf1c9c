// Writing a run folder as the run trains: RunRecorder, run.json's pieces, and new run folders.
#include "engine/records/run_record.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/records/record_csv.hpp"
#include "engine/telemetry/energy.hpp"
#include "engine/telemetry/telemetry.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// run.json's text. Bytes that are not UTF-8 (a path or a message naming one, which Linux allows)
// become U+FFFD rather than throwing: dumping them threw, and left a 0-byte run.json that never
// loaded. Names are refused before a run starts (engine/base/text.hpp); this keeps the rest.
std::string record_json_text(const json& info) {
  return info.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::FILE* open_csv(const fs::path& path, const std::string& header) {
  std::FILE* file = std::fopen(path.c_str(), "wx");  // a file already there is another run's
  if (!file) throw RecordError(path.string() + ": cannot create: " + std::strerror(errno));
  std::fprintf(file, "%s\n", header.c_str());
  std::fflush(file);
  return file;
}

void flush_or_throw(std::FILE* file, const char* name) {
  if (std::fflush(file) != 0 || std::ferror(file))
    throw RecordError(std::string(name) + ": write failed: " + std::strerror(errno) +
                      " (is the disk full?)");
}

// Appends `rows` (whole lines) to a CSV and flushes it, so a reader sees every finished row.
void append_rows(std::FILE* file, const std::string& rows, const char* name) {
  std::fputs(rows.c_str(), file);
  flush_or_throw(file, name);
}

}  // namespace

json lr_change_json(const LrChange& change) {
  return {
      {"step", change.step}, {"epoch", change.epoch}, {"time_s", change.time_s}, {"lr", change.lr}};
}

json summary_to_json(const RunSummary& s) {
  json epochs = json::array();
  for (const auto& e : s.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"seconds", e.seconds},
                      {"steps", e.steps},
                      {"images_per_second", e.images_per_second},
                      {"train_loss", number_or_null(e.train_loss)},
                      {"test_loss", number_or_null(e.test_loss)},
                      {"test_accuracy", number_or_null(e.test_accuracy)}});
  json summary = {
      {"steps", s.steps},
      {"images", s.images},
      {"train_seconds", s.train_seconds},
      {"wall_seconds", s.wall_seconds},
      {"images_per_second", s.train_seconds > 0 ? s.images / s.train_seconds : 0.0},
      {"epochs", epochs},
      {"test_loss", number_or_null(s.test_loss)},
      {"test_accuracy", number_or_null(s.test_accuracy)},
      {"target_accuracy", number_or_null(s.target_accuracy)},
      {"time_to_target_s", s.time_to_target_s ? json(*s.time_to_target_s) : json(nullptr)},
      {"step_to_target", s.step_to_target ? json(*s.step_to_target) : json(nullptr)},
      {"diverged", s.diverged}};
  if (s.diverged) summary["divergence"] = s.divergence;
  return summary;
}

RunRecorder::RunRecorder(fs::path dir, json run_info) : dir_(std::move(dir)), info_(std::move(run_info)) {
  std::error_code error;
  const bool made = fs::create_directories(dir_, error);
  if (error) throw RecordError(dir_.string() + ": cannot create the run folder: " + error.message());
  const std::string taken = ": already holds a run; choose another --out folder";
  for (const char* file : kRunFiles)
    if (fs::exists(fs::symlink_status(dir_ / file, error)))
      throw RecordError(dir_.string() + taken);
  info_["format"] = kRunFormat;
  info_["status"] = "running";
  info_["process"] = this_process_json();  // so a reader can tell a run whose process died
  if (!info_.contains("name")) info_["name"] = dir_.filename().string();
  // The claim: run.json appears whole or not at all (a full disk once left it empty, a record
  // no reader could load), and for one run only, however close the others come; it is replaced
  // atomically from then on.
  try {
    if (!create_file_atomically(dir_ / "run.json", record_json_text(info_)))
      throw RecordError(dir_.string() + taken);
  } catch (const RecordError&) {
    if (made) fs::remove(dir_, error);  // the empty folder this run made, never the user's
    throw;
  }
  try {
    metrics_ = open_csv(dir_ / "metrics.csv", metrics_csv_header());
    replicas_ = open_csv(dir_ / "replicas.csv", replicas_csv_header());
    evals_ = open_csv(dir_ / "eval.csv", eval_csv_header());
    telemetry_ = open_csv(dir_ / "telemetry.csv", telemetry_csv_header());
  } catch (const RecordError& e) {
    info_["status"] = "failed";
    info_["message"] = e.what();
    try {
      write_json();
    } catch (const RecordError&) {  // the disk is full: the claim stays, loadable, and e says why
    }
    throw;
  }
}

RunRecorder::~RunRecorder() {
  for (std::FILE* file : {metrics_, replicas_, evals_, telemetry_})
    if (file) std::fclose(file);
}

void RunRecorder::write_json() {
  if (ended_now_) return;  // the record was ended while the run was stuck: it stays so
  write_file_atomically(dir_ / "run.json", record_json_text(info_));
}

bool RunRecorder::end_cancelled_now(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (ended_now_ || info_.value("status", "") != "running") return false;
  info_["status"] = "cancelled";
  info_["message"] = message;
  write_json();
  ended_now_ = true;
  return true;
}

void RunRecorder::on_step(const StepMetrics& m) {
  std::lock_guard lock(mutex_);
  append_rows(metrics_, metrics_csv_row(m), "metrics.csv");
  if (!m.replicas.empty()) append_rows(replicas_, replicas_csv_rows(m), "replicas.csv");
}

void RunRecorder::on_eval(const EvalMetrics& e) {
  std::lock_guard lock(mutex_);
  append_rows(evals_, eval_csv_row(e), "eval.csv");
}

void RunRecorder::on_epoch(const EpochSummary& epoch) {
  std::lock_guard lock(mutex_);
  epochs_.push_back(epoch);
  RunSummary partial;
  partial.epochs = epochs_;
  partial.test_loss = epoch.test_loss;
  partial.test_accuracy = epoch.test_accuracy;
  info_["summary"] = summary_to_json(partial);
  write_json();
}

void RunRecorder::on_lr_change(const LrChange& change) {
  std::lock_guard lock(mutex_);
  json& changes = info_["lr_changes"];
  if (!changes.is_array()) changes = json::array();
  changes.push_back(lr_change_json(change));
  write_json();
}

void RunRecorder::on_sample(const DeviceSample& s) {
  std::lock_guard lock(mutex_);
  if (s.device == kOtherProgramsDevice && std::isfinite(s.util_percent)) {
    others_percent_sum_ += s.util_percent;
    others_percent_max_ = std::max(others_percent_max_, s.util_percent);
    ++others_samples_;
  }
  append_rows(telemetry_, telemetry_csv_row(s), "telemetry.csv");
}

void RunRecorder::update_info(const json& fields) {
  std::lock_guard lock(mutex_);
  info_.update(fields);
  write_json();
}

void RunRecorder::finish(const RunSummary& summary) {
  std::lock_guard lock(mutex_);
  info_["status"] = run_status_name(summary.status);
  info_["message"] = summary.message;
  info_["summary"] = summary_to_json(summary);
  if (others_samples_ > 0)
    info_["outside_load"] =
        outside_load_json(others_percent_sum_ / others_samples_, others_percent_max_,
                          others_samples_, static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
  write_json();
}

json outside_load_json(double mean_percent, double max_percent, int samples, int cores) {
  const double mean_cores = mean_percent / 100.0 * cores;
  return {{"mean_percent", mean_percent},
          {"max_percent", max_percent},
          {"mean_cores", mean_cores},
          {"cores", cores},
          {"samples", samples},
          {"under_load", mean_cores >= kUnderLoadCores}};
}

std::string iso_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

fs::path default_runs_dir() {
  if (const char* env = std::getenv("GPULAB_RUNS"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return fs::path(xdg) / "gpulab" / "runs";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".local" / "share" / "gpulab" / "runs";
}

fs::path new_run_dir(const fs::path& root, const std::string& label) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H%M%S", &local);
  std::string safe_label;
  for (char c : label) safe_label += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  // The folder is made here, so two runs started in the same second (a race) cannot both get
  // it: create_directory reports whether this call made it.
  std::error_code error;
  fs::create_directories(root, error);
  if (error) throw RecordError(root.string() + ": cannot create the runs folder: " + error.message());
  fs::path dir = root / (std::string(stamp) + "_" + safe_label);
  for (int n = 2; !fs::create_directory(dir, error); ++n) {
    if (error) throw RecordError(dir.string() + ": cannot create the run folder: " + error.message());
    dir = root / (std::string(stamp) + "_" + safe_label + "_" + std::to_string(n));
  }
  return dir;
}

}  // namespace gpulab
