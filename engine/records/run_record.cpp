// Writing and reading run folders.
#include "engine/records/run_record.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/records/record_reader.hpp"
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

// metrics.csv: these columns, then one per step phase (kStepPhases), then the all-reduce hidden
// under the backward pass; replicas.csv: step and replica, then one per replica phase
// (kReplicaPhases), then hidden_ms. Records from before the hidden columns load too.
constexpr const char* kMetricsLeadingColumns =
    "step,epoch,time_s,loss,accuracy,images_per_second,lr,step_ms";
constexpr int kMetricsLeadingCount = 8;

template <typename Phases>
std::string header_with(const char* leading, const Phases& phases) {
  std::string header = leading;
  for (const auto& phase : phases) header.append(",").append(phase.column);
  return header;
}

const std::string& metrics_header_without_hidden() {
  static const std::string header = header_with(kMetricsLeadingColumns, kStepPhases);
  return header;
}
const std::string& metrics_header() {
  static const std::string header = metrics_header_without_hidden() + ",allreduce_hidden_ms";
  return header;
}

const std::string& replicas_header_without_hidden() {
  static const std::string header = header_with("step,replica", kReplicaPhases);
  return header;
}
const std::string& replicas_header() {
  static const std::string header = replicas_header_without_hidden() + ",hidden_ms";
  return header;
}

constexpr const char* kEvalHeader = "step,epoch,time_s,split,loss,accuracy,train_s";
constexpr const char* kEvalHeaderWithoutTrainS = "step,epoch,time_s,split,loss,accuracy";
constexpr const char* kTelemetryHeader =
    "time_s,device,util_percent,mem_util_percent,mem_used_bytes,mem_total_bytes,power_w,"
    "temperature_c,sm_clock_mhz";

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

// Empty for a missing value, so spreadsheets and pandas read it as missing.
std::string number(double value) {
  if (std::isnan(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

double parse_number(const std::string& text) {
  if (text.empty()) return kNoValue;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') throw std::invalid_argument(text);
  return value;
}

// A value of a record that is out of what a run can write (a step of 1e30, replica 1e8).
struct OutOfRange : std::out_of_range {
  using std::out_of_range::out_of_range;
};

// A whole number from a CSV field, within [min, max].
int64_t whole_field(const std::string& text, const char* what, int64_t min, int64_t max) {
  const double value = parse_number(text);
  if (!(value >= double(min) && value <= double(max)) || std::floor(value) != value)
    throw OutOfRange(std::string(what) + " " + text + " is out of range (a whole number from " +
                     std::to_string(min) + " to " + std::to_string(max) + ")");
  return int64_t(value);
}

int64_t step_field(const std::string& text) {
  try {
    return record_step(parse_number(text), text);
  } catch (const std::out_of_range& e) {
    throw OutOfRange(e.what());
  }
}

int epoch_field(const std::string& text) {
  return int(whole_field(text, "epoch", 0, std::numeric_limits<int>::max()));
}

// Reads a CSV written by RunRecorder: checks the header (`current`, or `older` for records from
// before a column was added), parses each complete row. A final line without its newline is what
// a killed run leaves behind and is skipped. Lines may end in CRLF (a file saved on Windows).
template <typename Row>
std::vector<Row> read_csv(const fs::path& path, const std::string& current,
                          const std::string& older, Row (*parse)(const std::vector<std::string>&)) {
  std::vector<Row> rows;
  std::string text;
  if (!read_record_file(path, kMaxRecordCsvBytes, &text)) return rows;  // older or partial
  size_t line_number = 0, expected_fields = 0;
  std::string header;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // no newline: cut off by a kill
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_number;
    if (line_number == 1) {
      const size_t first = line.find_first_not_of(" \t");
      line.erase(0, first == std::string::npos ? line.size() : first);
      header = !older.empty() && line == older ? older : current;
      if (line != header)
        throw RecordError(path.string() + ": unexpected header; expected \"" + current + "\"");
      expected_fields = split_csv_line(header).size();
      continue;
    }
    const auto fields = split_csv_line(line);
    const std::string where = path.string() + ":" + std::to_string(line_number) + ": ";
    if (fields.size() != expected_fields)
      throw RecordError(where + "expected " + std::to_string(expected_fields) + " fields, found " +
                        std::to_string(fields.size()));
    try {
      rows.push_back(parse(fields));
    } catch (const OutOfRange& e) {
      throw RecordError(where + e.what());
    } catch (const std::invalid_argument& e) {
      throw RecordError(where + "not a number: \"" + e.what() + "\"");
    }
  }
  return rows;
}

StepMetrics parse_step(const std::vector<std::string>& f) {
  StepMetrics m;
  m.step = step_field(f[0]);
  m.epoch = epoch_field(f[1]);
  m.time_s = parse_number(f[2]);
  m.loss = parse_number(f[3]);
  m.accuracy = parse_number(f[4]);
  m.images_per_second = parse_number(f[5]);
  m.lr = static_cast<float>(parse_number(f[6]));
  m.step_ms = parse_number(f[7]);
  for (size_t p = 0; p < kStepPhases.size(); ++p)
    m.times.*kStepPhases[p].ms = parse_number(f[kMetricsLeadingCount + p]);
  if (const size_t hidden = kMetricsLeadingCount + kStepPhases.size(); f.size() > hidden)
    m.times.allreduce_hidden_ms = parse_number(f[hidden]);
  return m;
}

ReplicaStep parse_replica_step(const std::vector<std::string>& f) {
  ReplicaStep r;
  r.step = step_field(f[0]);
  r.times.replica = int(whole_field(f[1], "replica", 0, kMaxBatch - 1));
  for (size_t p = 0; p < kReplicaPhases.size(); ++p)
    r.times.*kReplicaPhases[p].ms = parse_number(f[2 + p]);
  if (const size_t hidden = 2 + kReplicaPhases.size(); f.size() > hidden)
    r.times.hidden_ms = parse_number(f[hidden]);
  return r;
}

EvalMetrics parse_eval(const std::vector<std::string>& f) {
  EvalMetrics e;
  e.step = step_field(f[0]);
  e.epoch = epoch_field(f[1]);
  e.time_s = parse_number(f[2]);
  e.split = f[3] == "train" ? Split::Train : f[3] == "validation" ? Split::Validation : Split::Test;
  e.loss = parse_number(f[4]);
  e.accuracy = parse_number(f[5]);
  if (f.size() > 6) e.train_s = parse_number(f[6]);
  return e;
}

DeviceSample parse_sample(const std::vector<std::string>& f) {
  DeviceSample s;
  s.time_s = parse_number(f[0]);
  s.device = f[1];
  s.util_percent = parse_number(f[2]);
  s.mem_util_percent = parse_number(f[3]);
  s.mem_used_bytes = parse_number(f[4]);
  s.mem_total_bytes = parse_number(f[5]);
  s.power_w = parse_number(f[6]);
  s.temperature_c = parse_number(f[7]);
  s.sm_clock_mhz = parse_number(f[8]);
  return s;
}

}  // namespace

json lr_change_json(const LrChange& change) {
  return {
      {"step", change.step}, {"epoch", change.epoch}, {"time_s", change.time_s}, {"lr", change.lr}};
}

std::vector<LrChange> lr_changes_from(const json& info) {
  std::vector<LrChange> changes;
  const auto list = info.find("lr_changes");
  if (list == info.end() || !list->is_array()) return changes;
  for (const json& entry : *list) {
    LrChange change;
    change.step = entry.value("step", int64_t(0));
    change.epoch = entry.value("epoch", 0);
    change.time_s = entry.value("time_s", kNoValue);
    change.lr = entry.value("lr", kNoValue);
    changes.push_back(change);
  }
  return changes;
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
    metrics_ = open_csv(dir_ / "metrics.csv", metrics_header());
    replicas_ = open_csv(dir_ / "replicas.csv", replicas_header());
    evals_ = open_csv(dir_ / "eval.csv", kEvalHeader);
    telemetry_ = open_csv(dir_ / "telemetry.csv", kTelemetryHeader);
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
  write_file_atomically(dir_ / "run.json", record_json_text(info_));
}

void RunRecorder::on_step(const StepMetrics& m) {
  std::lock_guard lock(mutex_);
  std::string row = std::to_string(m.step);
  row.append(",").append(std::to_string(m.epoch));
  for (double value : {m.time_s, m.loss, m.accuracy, m.images_per_second, double(m.lr), m.step_ms})
    row.append(",").append(number(value));
  for (const StepPhase& phase : kStepPhases) row.append(",").append(number(m.times.*phase.ms));
  row.append(",").append(number(m.times.allreduce_hidden_ms));
  std::fprintf(metrics_, "%s\n", row.c_str());
  flush_or_throw(metrics_, "metrics.csv");
  if (m.replicas.empty()) return;
  for (const ReplicaTimes& r : m.replicas) {
    std::string line = std::to_string(m.step);
    line.append(",").append(std::to_string(r.replica));
    for (const ReplicaPhase& phase : kReplicaPhases) line.append(",").append(number(r.*phase.ms));
    line.append(",").append(number(r.hidden_ms));
    std::fprintf(replicas_, "%s\n", line.c_str());
  }
  flush_or_throw(replicas_, "replicas.csv");
}

void RunRecorder::on_eval(const EvalMetrics& e) {
  std::lock_guard lock(mutex_);
  std::fprintf(evals_, "%lld,%d,%s,%s,%s,%s,%s\n", static_cast<long long>(e.step), e.epoch,
               number(e.time_s).c_str(), split_name(e.split), number(e.loss).c_str(),
               number(e.accuracy).c_str(), number(e.train_s).c_str());
  flush_or_throw(evals_, "eval.csv");
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
  std::fprintf(telemetry_, "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", number(s.time_s).c_str(),
               s.device.c_str(), number(s.util_percent).c_str(), number(s.mem_util_percent).c_str(),
               number(s.mem_used_bytes).c_str(), number(s.mem_total_bytes).c_str(),
               number(s.power_w).c_str(), number(s.temperature_c).c_str(),
               number(s.sm_clock_mhz).c_str());
  flush_or_throw(telemetry_, "telemetry.csv");
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

std::string RunData::name() const {
  if (info.contains("name") && info["name"].is_string()) return info["name"].get<std::string>();
  return dir.filename().string();
}

namespace {

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

enum class Writer { Unknown, Alive, Gone };

// The process that wrote a record, where run.json names it.
Writer record_writer(const json& info) {
  const auto process = info.find("process");
  if (process == info.end() || !process->is_object()) return Writer::Unknown;
  const auto host = process->find("host"), pid = process->find("pid");
  if (host == process->end() || !host->is_string() || pid == process->end() ||
      !pid->is_number_integer())
    return Writer::Unknown;
  if (host->get<std::string>() != this_host()) return Writer::Unknown;
  const long id = pid->get<long>();
  if (id <= 0) return Writer::Unknown;
  // Signal 0 only asks: EPERM means a process of another user has the id, so it lives.
  return ::kill(pid_t(id), 0) == 0 || errno == EPERM ? Writer::Alive : Writer::Gone;
}

std::string recorded_status(const json& info) {
  const auto status = info.find("status");
  return status != info.end() && status->is_string() ? status->get<std::string>() : "unknown";
}

}  // namespace

json this_process_json() { return {{"host", this_host()}, {"pid", int(::getpid())}}; }

std::string RunData::status() const {
  const std::string status = recorded_status(info);
  if (status == "running" && record_writer(info) == Writer::Gone) return "interrupted";
  return status;
}

bool RunData::written_elsewhere() const {
  if (recorded_status(info) != "running") return false;
  const Writer writer = record_writer(info);
  if (writer == Writer::Gone) return false;
  // A record from before the process was kept: nothing says anyone writes it.
  return writer == Writer::Alive || info.contains("process");
}

bool holds_run(const fs::path& dir) {
  std::error_code error;
  return fs::exists(fs::symlink_status(dir / "run.json", error));
}

nlohmann::json load_run_info(const fs::path& dir) {
  json info;
  const fs::path json_path = dir / "run.json";
  std::string text;
  if (!read_record_file(json_path, kMaxRunJsonBytes, &text))
    throw RecordError(json_path.string() + ": no such file; is this a gpulab run folder?");
  try {
    info = json::parse(text);
  } catch (const json::exception& e) {
    throw RecordError(json_path.string() + ": not valid JSON: " + e.what());
  }
  // A record of another format is no run; a format of the wrong type is a damaged field.
  const auto format = info.is_object() ? info.find("format") : info.end();
  if (!info.is_object() || format == info.end() || (format->is_string() && *format != kRunFormat))
    throw RecordError(json_path.string() + ": not a gpulab run record (format \"" + kRunFormat +
                      "\" expected)");
  check_run_info(info, json_path);
  return info;
}

RunData load_run(const fs::path& dir) {
  RunData run;
  run.dir = dir;
  run.info = load_run_info(dir);
  run.lr_changes = lr_changes_from(run.info);
  run.steps = read_csv<StepMetrics>(dir / "metrics.csv", metrics_header(),
                                    metrics_header_without_hidden(), parse_step);
  run.replica_steps = read_csv<ReplicaStep>(dir / "replicas.csv", replicas_header(),
                                            replicas_header_without_hidden(), parse_replica_step);
  // Records from before train_s was kept have one column less.
  run.evals =
      read_csv<EvalMetrics>(dir / "eval.csv", kEvalHeader, kEvalHeaderWithoutTrainS, parse_eval);
  run.samples = read_csv<DeviceSample>(dir / "telemetry.csv", kTelemetryHeader, "", parse_sample);
  return run;
}

std::vector<fs::path> run_folders(const fs::path& root, std::vector<std::string>* problems) {
  std::vector<fs::path> folders;
  auto problem = [&](const std::string& text) {
    if (problems) problems->push_back(text);
  };
  std::error_code error;
  const fs::file_status root_status = fs::status(root, error);
  if (error && error != std::errc::no_such_file_or_directory)
    problem(root.string() + ": cannot be read: " +
            (error == std::errc::too_many_symbolic_link_levels ? "a symbolic link that loops"
                                                               : error.message()));
  if (!fs::is_directory(root_status)) return folders;
  fs::directory_iterator entries(root, error);
  if (error) {
    problem(root.string() + ": cannot be read: " + error.message());
    return folders;
  }
  for (; entries != fs::directory_iterator(); entries.increment(error)) {
    if (error) {
      problem(root.string() + ": cannot be listed further: " + error.message());
      break;
    }
    const fs::path path = entries->path();
    std::error_code entry_error;
    const fs::file_status status = fs::status(path, entry_error);
    if (entry_error == std::errc::too_many_symbolic_link_levels) {
      problem(path.string() + ": cannot be read: a symbolic link that loops");
      continue;
    }
    if (entry_error || !fs::is_directory(status)) continue;  // a file, or a link to nothing
    if (holds_run(path)) folders.push_back(path);
  }
  return folders;
}

std::uintmax_t record_bytes(const fs::path& dir) {
  std::uintmax_t bytes = 0;
  for (const char* file : {"metrics.csv", "replicas.csv", "eval.csv", "telemetry.csv"}) {
    std::error_code error;
    if (fs::is_regular_file(dir / file, error)) {
      const std::uintmax_t size = fs::file_size(dir / file, error);
      if (!error) bytes += size;
    }
  }
  return bytes;
}

std::vector<RunData> load_runs(const fs::path& root, std::vector<std::string>* problems) {
  std::vector<RunData> runs;
  for (const fs::path& folder : run_folders(root, problems)) {
    try {
      runs.push_back(load_run(folder));
    } catch (const RecordError& e) {
      if (problems) problems->push_back(e.what());
    }
  }
  sort_newest_first(runs);
  return runs;
}

void sort_newest_first(std::vector<RunData>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const RunData& a, const RunData& b) {
    return a.info.value("created", "") > b.info.value("created", "");
  });
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
