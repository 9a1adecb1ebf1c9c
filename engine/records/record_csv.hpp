// The CSV files of a run record (metrics.csv, replicas.csv, eval.csv, telemetry.csv): their
// headers, the rows RunRecorder writes, and reading them back as untrusted input.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// The header line each file is created with (without its newline).
const std::string& metrics_csv_header();
const std::string& replicas_csv_header();
const std::string& eval_csv_header();
const std::string& telemetry_csv_header();

// The lines RunRecorder appends, each ending in a newline. A missing value (NaN) is an empty
// field, so spreadsheets and pandas read it as missing. replicas_csv_rows is one line per
// replica, empty for a step without replicas.
std::string metrics_csv_row(const StepMetrics& step);
std::string replicas_csv_rows(const StepMetrics& step);
std::string eval_csv_row(const EvalMetrics& eval);
std::string telemetry_csv_row(const DeviceSample& sample);

// The rows of each file, empty when it does not exist (records from before it was written).
// The header is checked, also against the older headers records were written with, and every
// field for its number and range; a last line without its newline (cut off by a killed run) is
// skipped. Throws RecordError naming the file and line.
std::vector<StepMetrics> read_metrics_csv(const std::filesystem::path& path);
std::vector<ReplicaStep> read_replicas_csv(const std::filesystem::path& path);
std::vector<EvalMetrics> read_eval_csv(const std::filesystem::path& path);
std::vector<DeviceSample> read_telemetry_csv(const std::filesystem::path& path);

}  // namespace gpulab
