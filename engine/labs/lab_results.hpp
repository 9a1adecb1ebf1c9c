// A lab's results table, filled from the runs of its experiments as they finish: the same rows
// for the CLI's CSV and Markdown and for the window.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/metrics.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/labs/lab.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {

// What a run's record says about its hardware: telemetry.csv's samples of the devices it computed
// on, metrics.csv's step phases, and run.json's energy. kNoValue where the record has no reading.
struct LabRunReadings {
  double mean_util_percent = kNoValue;   // over every sample of the compute devices
  // Why there is no utilization where samples were taken: NVML reports a GPU's utilization over
  // its own sample period (up to a second), so a run whose samples span less reads as idle (1 %
  // for a 0.22 s run at 99 % load). Empty when measured.
  std::string util_unmeasured;
  // A GPU's memory controller: the mean share of NVML's sample periods in which device memory
  // was read or written, %, over the GPUs' samples; unmeasured when utilization is.
  double mean_mem_busy_percent = kNoValue;
  // The GPUs' SM clock, MHz: the median of their samples (half the run at or above it) and the
  // highest; a median well under the highest is a clock that dropped (heat, power cap).
  double median_sm_clock_mhz = kNoValue, max_sm_clock_mhz = kNoValue;
  std::string cuda_graphs;               // run.json's "cuda_graphs" ("on", "off: ..."); or empty
  double peak_mem_bytes = kNoValue;      // the most any one of them held
  double mean_power_w = kNoValue;        // the devices together: the sum of each one's mean
  double peak_temperature_c = kNoValue;  // the hottest of them
  double data_ms = kNoValue, copy_ms = kNoValue, allreduce_ms = kNoValue;  // mean per step
  // Of forward and backward, the share in matrix products, % (run_figures' matmul_share): CPU runs.
  double matmul_percent = kNoValue;
  // The median step's time (run_figures' median_step): the table's ms per step and images/s,
  // which the set-up in a run's first steps would otherwise swell.
  double median_step_ms = kNoValue;
  nlohmann::json energy;  // run.json's "energy"; null when the record has none
};

// The readings of a run's record. The compute devices are those run.json's energy names, else
// the GPUs sampled, else the CPU: the devices whose energy the run measures.
LabRunReadings lab_run_readings(const RunData& run);

// What one experiment of a lab came to.
struct LabRunResult {
  std::string experiment;
  std::string skipped;  // why it did not run; empty when it ran
  std::optional<RunSummary> summary;
  std::filesystem::path run_dir;
  std::vector<MatmulTiming> matmul;
  // A benchmark's: other programs' load while it timed (run.json's "outside_load" shape), null
  // where not measured; a run's is in its record.
  nlohmann::json outside_load;
  // From its run's record: what marks its figures with ⚠ (run_flags: shared hardware, outside
  // load, cut short), and the device and host it ran on ("NVIDIA H200, driver 570.86, CUDA 12.8").
  std::vector<std::string> flags;
  std::string device, host;
  LabRunReadings readings;
  // A reference run's "NVIDIA H200, 2026-11-20" (engine/labs/reference_runs): its figures were
  // recorded on that GPU, not by the learner; its note says so. Empty for the learner's own run.
  std::string recorded_on;
};

// The bytes an n x n product's copies move: A and B to the device, C back, 4 bytes a float. A
// benchmark row's "copy ms" is its time with the copies less its time alone, and "copy GB/s"
// these bytes over that: a small transfer shows the latency, a large one the bandwidth.
double matmul_copy_bytes(int n);

// Adds the record's facts (flags, device, host) to an experiment's result.
void add_run_facts(LabRunResult& result, const RunData& run);
// Adds a benchmark's outside load to its result, and its flag where it was under load (the
// caveat a run measured so carries), so every row of its sizes carries ⚠.
void add_bench_load(LabRunResult& result, const nlohmann::json& load);
// An inference benchmark's timings: its model's forward pass at each batch size on its device and
// CPU threads (time_inference), kept as the benchmark rows a lab keeps: the batch as the size, a
// batch's time as both times (a GPU's with its copies).
std::vector<MatmulTiming> time_lab_inference(const LabExperiment& e,
                                             const std::vector<int>& batches);
// Times a benchmark experiment's `sizes` on its device (bench_matmul, or time_lab_inference for
// bench: inference), measuring other programs' load meanwhile (OutsideLoadMeter): its timings,
// load and flag, for the CLI and the window alike.
LabRunResult run_lab_bench(const LabExperiment& e, const std::vector<int>& sizes);

struct LabResultsTable {
  std::vector<std::string> header;  // the table's columns, then "note"
  // The header as the report and the window title it: "time to target (90 %)" where the table's
  // experiments share their target, so no reader takes it for another target (the headline's).
  // The CSV keeps `header`, the names a lab file and scripts use.
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> rows;
  // Per row: its run has flags. Markdown and the window put "⚠ " before its first cell (as charts
  // mark a flagged run's name); the CSV keeps names as they are; the note says why either way.
  std::vector<bool> flagged;
};

// An experiment's result from its run's record, as a window finds it in its runs folder: the
// summary run.json keeps, its readings, and its status (a run still going is Running, with no
// figures; one whose process is gone is Failed, saying so).
LabRunResult lab_run_result(const std::string& experiment, const RunData& run);

// Rows in the table's experiment order (one per size for a benchmark); an experiment not run yet
// has its name and empty cells, a skipped or failed one says why in "note", and a reference run's
// note says where it was recorded and, where it has a speedup over the learner's run, that it is
// "GPU (reference, <GPU>) over your CPU".
LabResultsTable lab_results_table(const Lab& lab, const LabTable& table,
                                  const std::vector<LabRunResult>& results);
std::string to_csv(const LabResultsTable& table);
// The rows of a CSV file as to_csv writes it (cells quoted where they hold a comma, a quote or a
// line break, a quote doubled inside): what verify and the window's class board read back.
std::vector<std::vector<std::string>> csv_rows(const std::string& text);
std::string to_markdown(const LabResultsTable& table);

}  // namespace gpulab
