// The CSV files of a run record: headers, the rows RunRecorder writes, and reading them back.
#include "engine/records/record_csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "engine/base/errors.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/training/setting_bounds.hpp"

namespace gpulab {
namespace fs = std::filesystem;

namespace {

// metrics.csv: these columns, then one per step phase (kStepPhases), then the all-reduce hidden
// under the backward pass, then the matrix products' share of forward and backward (matmul_ms);
// replicas.csv: step and replica, then one per replica phase (kReplicaPhases), then hidden_ms.
// Records from before the hidden and the matmul columns load too.
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
const std::string& metrics_header_without_matmul() {
  static const std::string header = metrics_header_without_hidden() + ",allreduce_hidden_ms";
  return header;
}
const std::string& replicas_header_without_hidden() {
  static const std::string header = header_with("step,replica", kReplicaPhases);
  return header;
}
constexpr const char* kEvalHeader = "step,epoch,time_s,split,loss,accuracy,train_s";
constexpr const char* kEvalHeaderWithoutTrainS = "step,epoch,time_s,split,loss,accuracy";
constexpr const char* kTelemetryHeader =
    "time_s,device,util_percent,mem_util_percent,mem_used_bytes,mem_total_bytes,power_w,"
    "temperature_c,sm_clock_mhz";

// Empty for a missing value, so spreadsheets and pandas read it as missing.
std::string number(double value) {
  if (std::isnan(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// Splits `line` at its commas into `fields`, whose strings are reused from line to line: a
// record of a million rows allocates its fields once, not a vector and its strings per row. An
// empty line has no field; "a,,b," has four.
void split_csv_line(std::string_view line, std::vector<std::string>* fields) {
  size_t count = 0;
  for (size_t start = 0; !line.empty();) {
    const size_t comma = line.find(',', start);
    if (count == fields->size()) fields->emplace_back();
    (*fields)[count++].assign(line.substr(start, comma == line.npos ? line.npos : comma - start));
    if (comma == line.npos) break;
    start = comma + 1;
  }
  fields->resize(count);
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

// Reads a CSV written by RunRecorder: checks the header (`current`, or one of `older` for records
// from before a column was added), parses each complete row. A final line without its newline is
// what a killed run leaves behind and is skipped. Lines may end in CRLF (a file saved on Windows).
template <typename Row>
std::vector<Row> read_csv(const fs::path& path, const std::string& current,
                          std::initializer_list<std::string> older,
                          Row (*parse)(const std::vector<std::string>&)) {
  std::vector<Row> rows;
  std::string text;
  if (!read_record_file(path, kMaxRecordCsvBytes, &text)) return rows;  // older or partial
  // NUL bytes are what a crash or a full disk leaves where a file's last blocks were never
  // written: after the last whole line, a cut-off tail; in the header, no record at all (a file of
  // them read as a run with no steps).
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t header_end = text.find('\n');
    if (header_end == std::string::npos || nul < header_end)
      throw RecordError(path.string() +
                        ": holds NUL bytes where its header belongs (a crash or a full disk left "
                        "it unwritten); the run cannot be read");
    text.resize(text.rfind('\n', nul) + 1);
  }
  size_t line_number = 0, expected_fields = 0;
  std::vector<std::string> fields;
  const auto where = [&] { return path.string() + ":" + std::to_string(line_number) + ": "; };
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // no newline: cut off by a kill
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_number;
    if (line_number == 1) {
      const size_t first = line.find_first_not_of(" \t");
      line.remove_prefix(first == line.npos ? line.size() : first);
      const auto known = std::find(older.begin(), older.end(), line);
      const std::string& header = known != older.end() ? *known : current;
      if (line != header)
        throw RecordError(path.string() + ": unexpected header; expected \"" + current + "\"");
      split_csv_line(header, &fields);
      expected_fields = fields.size();
      continue;
    }
    split_csv_line(line, &fields);
    if (fields.size() != expected_fields)
      throw RecordError(where() + "expected " + std::to_string(expected_fields) +
                        " fields, found " + std::to_string(fields.size()));
    try {
      rows.push_back(parse(fields));
    } catch (const OutOfRange& e) {
      throw RecordError(where() + e.what());
    } catch (const std::invalid_argument& e) {
      throw RecordError(where() + "not a number: \"" + e.what() + "\"");
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
  if (const size_t matmul = kMetricsLeadingCount + kStepPhases.size() + 1; f.size() > matmul)
    m.times.matmul_ms = parse_number(f[matmul]);
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

const std::string& metrics_csv_header() {
  static const std::string header = metrics_header_without_matmul() + ",matmul_ms";
  return header;
}
const std::string& replicas_csv_header() {
  static const std::string header = replicas_header_without_hidden() + ",hidden_ms";
  return header;
}
const std::string& eval_csv_header() {
  static const std::string header = kEvalHeader;
  return header;
}
const std::string& telemetry_csv_header() {
  static const std::string header = kTelemetryHeader;
  return header;
}

std::string metrics_csv_row(const StepMetrics& m) {
  std::string row = std::to_string(m.step);
  row.append(",").append(std::to_string(m.epoch));
  for (double value : {m.time_s, m.loss, m.accuracy, m.images_per_second, double(m.lr), m.step_ms})
    row.append(",").append(number(value));
  for (const StepPhase& phase : kStepPhases) row.append(",").append(number(m.times.*phase.ms));
  row.append(",").append(number(m.times.allreduce_hidden_ms));
  row.append(",").append(number(m.times.matmul_ms));
  return row.append("\n");
}

std::string replicas_csv_rows(const StepMetrics& m) {
  std::string rows;
  for (const ReplicaTimes& r : m.replicas) {
    rows.append(std::to_string(m.step));
    rows.append(",").append(std::to_string(r.replica));
    for (const ReplicaPhase& phase : kReplicaPhases) rows.append(",").append(number(r.*phase.ms));
    rows.append(",").append(number(r.hidden_ms)).append("\n");
  }
  return rows;
}

std::string eval_csv_row(const EvalMetrics& e) {
  std::string row = std::to_string(e.step);
  row.append(",").append(std::to_string(e.epoch));
  row.append(",").append(number(e.time_s));
  row.append(",").append(split_name(e.split));
  for (double value : {e.loss, e.accuracy, e.train_s}) row.append(",").append(number(value));
  return row.append("\n");
}

std::string telemetry_csv_row(const DeviceSample& s) {
  std::string row = number(s.time_s);
  row.append(",").append(s.device);
  for (double value : {s.util_percent, s.mem_util_percent, s.mem_used_bytes, s.mem_total_bytes,
                       s.power_w, s.temperature_c, s.sm_clock_mhz})
    row.append(",").append(number(value));
  return row.append("\n");
}

std::vector<StepMetrics> read_metrics_csv(const fs::path& path) {
  return read_csv<StepMetrics>(path, metrics_csv_header(),
                               {metrics_header_without_matmul(), metrics_header_without_hidden()},
                               parse_step);
}

std::vector<ReplicaStep> read_replicas_csv(const fs::path& path) {
  return read_csv<ReplicaStep>(path, replicas_csv_header(), {replicas_header_without_hidden()},
                               parse_replica_step);
}

// Records from before train_s was kept have one column less.
std::vector<EvalMetrics> read_eval_csv(const fs::path& path) {
  return read_csv<EvalMetrics>(path, kEvalHeader, {kEvalHeaderWithoutTrainS}, parse_eval);
}

std::vector<DeviceSample> read_telemetry_csv(const fs::path& path) {
  return read_csv<DeviceSample>(path, kTelemetryHeader, {}, parse_sample);
}

}  // namespace gpulab
