// Writing and reading run folders.
#include "engine/run_record.hpp"

#include <fcntl.h>
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
#include <sstream>

#include "engine/errors.hpp"
#include "engine/telemetry.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

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

// The header a record's file has: `current`, or `older` when that is what the file starts with.
std::string header_of(const fs::path& path, const std::string& current, const std::string& older) {
  std::string first;
  std::getline(std::ifstream(path) >> std::ws, first);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  return first == older ? older : current;
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

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

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

// Reads a CSV written by RunRecorder: checks the header, parses each complete row. A final line
// without its newline is what a killed run leaves behind and is skipped.
template <typename Row>
std::vector<Row> read_csv(const fs::path& path, const std::string& header,
                          Row (*parse)(const std::vector<std::string>&)) {
  std::vector<Row> rows;
  std::ifstream in(path, std::ios::binary);
  if (!in) return rows;  // an older or partial record may lack a file
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream lines(text);
  std::string line;
  size_t line_number = 0, consumed = 0;
  const size_t expected_fields = split_csv_line(header).size();
  while (std::getline(lines, line)) {
    ++line_number;
    consumed += line.size() + 1;
    if (consumed > text.size()) break;  // no newline: cut off by a kill
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a file saved with CRLF
    if (line_number == 1) {
      if (line != header)
        throw RecordError(path.string() + ": unexpected header; expected \"" + header + "\"");
      continue;
    }
    const auto fields = split_csv_line(line);
    if (fields.size() != expected_fields)
      throw RecordError(path.string() + ":" + std::to_string(line_number) + ": expected " +
                        std::to_string(expected_fields) + " fields, found " +
                        std::to_string(fields.size()));
    try {
      rows.push_back(parse(fields));
    } catch (const std::invalid_argument& e) {
      throw RecordError(path.string() + ":" + std::to_string(line_number) + ": not a number: \"" +
                        e.what() + "\"");
    }
  }
  return rows;
}

StepMetrics parse_step(const std::vector<std::string>& f) {
  StepMetrics m;
  m.step = static_cast<int64_t>(parse_number(f[0]));
  m.epoch = static_cast<int>(parse_number(f[1]));
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
  r.step = static_cast<int64_t>(parse_number(f[0]));
  r.times.replica = static_cast<int>(parse_number(f[1]));
  for (size_t p = 0; p < kReplicaPhases.size(); ++p)
    r.times.*kReplicaPhases[p].ms = parse_number(f[2 + p]);
  if (const size_t hidden = 2 + kReplicaPhases.size(); f.size() > hidden)
    r.times.hidden_ms = parse_number(f[hidden]);
  return r;
}

EvalMetrics parse_eval(const std::vector<std::string>& f) {
  EvalMetrics e;
  e.step = static_cast<int64_t>(parse_number(f[0]));
  e.epoch = static_cast<int>(parse_number(f[1]));
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

void write_file_atomically(const fs::path& requested, const std::string& text) {
  std::error_code error;
  // Through a symbolic link its target is replaced and the link kept.
  fs::path path = requested;
  if (fs::is_symlink(fs::symlink_status(requested, error))) {
    path = fs::weakly_canonical(requested, error);
    if (error)
      throw RecordError(requested.string() + ": cannot follow the link: " + error.message());
  }
  const fs::file_status status = fs::status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw RecordError(path.string() +
                      ": is not a regular file (a folder, device or FIFO) and is never replaced");
  // Named by process and call, so two writers of one file never share a temporary.
  static std::atomic<int> writes{0};
  const fs::path temporary =
      path.string() + "." + std::to_string(::getpid()) + "-" + std::to_string(writes++) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw RecordError(temporary.string() + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  const bool written = done == text.size() && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ::close(fd);
  if (!written) {
    fs::remove(temporary, error);
    throw RecordError(path.string() + ": write failed: " + std::strerror(saved_errno) +
                      " (is the disk full?)");
  }
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw RecordError(path.string() + ": cannot be replaced: " + error.message());
  }
}

json summary_to_json(const RunSummary& s) {
  json epochs = json::array();
  for (const auto& e : s.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"seconds", e.seconds},
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
  fs::create_directories(dir_, error);
  if (error) throw RecordError(dir_.string() + ": cannot create the run folder: " + error.message());
  const std::string taken = ": already holds a run; choose another --out folder";
  for (const char* file : kRunFiles)
    if (fs::exists(fs::symlink_status(dir_ / file, error)))
      throw RecordError(dir_.string() + taken);
  info_["format"] = kRunFormat;
  info_["status"] = "running";
  if (!info_.contains("name")) info_["name"] = dir_.filename().string();
  // The claim: creating run.json exclusively succeeds for one run only, however close the others
  // come; it is written in place, and replaced atomically from then on.
  const fs::path json_path = dir_ / "run.json";
  const int fd = ::open(json_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) throw RecordError(dir_.string() + taken);
  if (fd < 0) throw RecordError(json_path.string() + ": cannot create: " + std::strerror(errno));
  const std::string text = info_.dump(2) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  try {
    if (!written) throw RecordError(json_path.string() + ": write failed: " + std::strerror(errno));
    metrics_ = open_csv(dir_ / "metrics.csv", metrics_header());
    replicas_ = open_csv(dir_ / "replicas.csv", replicas_header());
    evals_ = open_csv(dir_ / "eval.csv", kEvalHeader);
    telemetry_ = open_csv(dir_ / "telemetry.csv", kTelemetryHeader);
  } catch (const RecordError& e) {
    info_["status"] = "failed";
    info_["message"] = e.what();
    write_json();
    throw;
  }
}

RunRecorder::~RunRecorder() {
  for (std::FILE* file : {metrics_, replicas_, evals_, telemetry_})
    if (file) std::fclose(file);
}

void RunRecorder::write_json() { write_file_atomically(dir_ / "run.json", info_.dump(2) + "\n"); }

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

std::string RunData::status() const {
  if (info.contains("status") && info["status"].is_string()) return info["status"].get<std::string>();
  return "unknown";
}

RunData load_run(const fs::path& dir) {
  RunData run;
  run.dir = dir;
  const fs::path json_path = dir / "run.json";
  std::ifstream in(json_path);
  if (!in) throw RecordError(json_path.string() + ": no such file; is this a gpulab run folder?");
  try {
    run.info = json::parse(in);
  } catch (const json::exception& e) {
    throw RecordError(json_path.string() + ": not valid JSON: " + e.what());
  }
  if (!run.info.is_object() || run.info.value("format", "") != kRunFormat)
    throw RecordError(json_path.string() + ": not a gpulab run record (format \"" + kRunFormat +
                      "\" expected)");
  run.steps = read_csv<StepMetrics>(
      dir / "metrics.csv",
      header_of(dir / "metrics.csv", metrics_header(), metrics_header_without_hidden()),
      parse_step);
  run.replica_steps = read_csv<ReplicaStep>(
      dir / "replicas.csv",
      header_of(dir / "replicas.csv", replicas_header(), replicas_header_without_hidden()),
      parse_replica_step);
  // Records from before train_s was kept have one column less.
  run.evals = read_csv<EvalMetrics>(
      dir / "eval.csv", header_of(dir / "eval.csv", kEvalHeader, kEvalHeaderWithoutTrainS),
      parse_eval);
  run.samples = read_csv<DeviceSample>(dir / "telemetry.csv", kTelemetryHeader, parse_sample);
  return run;
}

std::vector<RunData> load_runs(const fs::path& root, std::vector<std::string>* problems) {
  std::vector<RunData> runs;
  std::error_code error;
  if (!fs::is_directory(root, error)) return runs;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "run.json")) continue;
    try {
      runs.push_back(load_run(entry.path()));
    } catch (const RecordError& e) {
      if (problems) problems->push_back(e.what());
    }
  }
  std::sort(runs.begin(), runs.end(), [](const RunData& a, const RunData& b) {
    return a.info.value("created", "") > b.info.value("created", "");
  });
  return runs;
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
