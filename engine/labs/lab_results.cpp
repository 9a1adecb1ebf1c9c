// Results tables of labs: images/s, ms per step and speedups from run summaries, GFLOP/s from
// matrix-multiply timings.
#include "engine/labs/lab_results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/text.hpp"
#include "engine/inside/inference_timing.hpp"
#include "engine/model/init.hpp"
#include "engine/records/outside_load.hpp"
#include "engine/session/outside_load.hpp"

namespace gpulab {
namespace {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return {};
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

const LabRunResult* find(const std::vector<LabRunResult>& results, const std::string& name) {
  for (const auto& r : results)
    if (r.experiment == name) return &r;
  return nullptr;
}

// A run's pace in a lab's table: its median step (run_figures' median_step, over metrics.csv),
// so that the set-up in its first steps does not count: the first GPU run of a process spends
// ~115 ms setting up the device in step 1, against 0.3 ms a step after it, which would be most of
// a 200-step run and make whichever experiment ran first look slowest. Without steps (a record of
// run.json alone), training seconds over steps.
double ms_per_step(const RunSummary& s, const LabRunReadings& readings) {
  if (std::isfinite(readings.median_step_ms) && readings.median_step_ms > 0)
    return readings.median_step_ms;
  return s.steps > 0 && s.train_seconds > 0 ? 1000.0 * s.train_seconds / double(s.steps) : NAN;
}

// Images a second at that pace: the images of a step (the run's images over its steps) over it.
double images_per_second(const RunSummary& s, const LabRunReadings& readings) {
  return pace_images_per_second(double(s.images), double(s.steps), ms_per_step(s, readings));
}

const MatmulTiming* at_size(const LabRunResult* r, int size) {
  if (!r) return nullptr;
  for (const auto& t : r->matmul)
    if (t.size == size) return &t;
  return nullptr;
}

std::string note(const LabRunResult* r) {
  if (!r) return "not run yet";
  if (!r->skipped.empty()) return "skipped: " + r->skipped;
  std::string text;
  if (r->summary && r->summary->status != RunStatus::Finished)
    text = std::string(run_status_name(r->summary->status)) +
           (r->summary->message.empty() ? "" : ": " + r->summary->message);
  // The flags the status above does not already say.
  const bool cut_short = !text.empty();
  for (const std::string& flag : r->flags)
    if (!cut_short || (flag.rfind("cancelled", 0) != 0 && flag != "failed"))
      text += (text.empty() ? "⚠ " : "; ⚠ ") + flag;
  // First, so that no reader takes a reference run's figures for the learner's own.
  if (!r->recorded_on.empty())
    text = "recorded on " + r->recorded_on + " (a reference run, not measured on this machine)" +
           (text.empty() ? "" : "; " + text);
  return text;
}

// Whether a row may take a speedup over `base`: both measured on this machine, or a reference
// recorded elsewhere over the learner's own run, the ratio the learner without a GPU asks for
// (said in the row's note: speedup_note). Never the learner's run over a reference.
bool speedup_over(const LabRunResult& r, const LabRunResult& base) {
  return base.recorded_on.empty() || base.recorded_on == r.recorded_on;
}

// What a speedup of a reference over the learner's own run is: "speedup: GPU (reference, NVIDIA
// H200) over your CPU", and the ⚠ of that run where it is flagged, since its figures are half
// the ratio. Empty for a speedup of two runs of this machine whose baseline is clean.
std::string speedup_note(const LabRunResult& r, const LabRunResult& base,
                         const LabExperiment& over) {
  std::string text;
  if (!r.recorded_on.empty() && base.recorded_on.empty()) {
    const std::string gpu = r.recorded_on.substr(0, r.recorded_on.rfind(", "));
    text = "speedup: GPU (reference, " + gpu + ") over " +
           (over.experiment.backend.device == "cpu" ? "your CPU"
                                                    : "your run of \"" + over.name + "\"");
  }
  if (!base.flags.empty() && &base != &r)  // a baseline's own ⚠ is already in its note
    text += (text.empty() ? "" : "; ") + std::string("⚠ the speedup is over \"") + over.name +
            "\", which is flagged: " + join_flags(base.flags);
  return text;
}

// A row's "launch ms": what a step costs without CUDA graphs over what it costs with them, per
// step (its median step less its baseline's), where the row ran without graphs and its baseline
// with them, and nothing else differs that the step's time depends on. Each kernel launched one
// by one pays the launch that a graph's replay pays once for the whole step.
double launch_ms(const LabExperiment& e, const LabRunResult& r, const LabExperiment& over,
                 const LabRunResult& base) {
  const BackendOptions &a = e.experiment.backend, &b = over.experiment.backend;
  if (r.readings.cuda_graphs.rfind("off", 0) != 0 || base.readings.cuda_graphs != "on" ||
      !r.summary || !base.summary || e.model_name != over.model_name || a.device != b.device ||
      a.precision != b.precision || a.replicas != b.replicas || a.data_on != b.data_on ||
      e.experiment.train.batch != over.experiment.train.batch)
    return kNoValue;
  return ms_per_step(*r.summary, r.readings) - ms_per_step(*base.summary, base.readings);
}

// "NVIDIA H200, driver 570.86, CUDA 12.8" or "AMD EPYC 9454P, 8 cores": a run.json device.
std::string device_text(const nlohmann::json& device) {
  if (!device.is_object()) return {};
  std::string text = device.value("name", device.value("description", device.value("id", "")));
  if (const auto cores = device.find("cores"); cores != device.end() && cores->is_number())
    text += ", " + std::to_string(cores->get<int>()) + " cores";
  if (const std::string driver = device.value("driver", ""); !driver.empty())
    text += ", driver " + driver;
  if (const std::string runtime = device.value("cuda_runtime", ""); !runtime.empty())
    text += ", CUDA " + runtime;
  return text;
}

double number_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : kNoValue;
}

// A reading the run has, or "—" where it took no such sample.
std::string reading(double value, int decimals) {
  return std::isfinite(value) ? fixed(value, decimals) : "—";
}

// Why run.json's energy is null, short: the first compute device's reason up to its
// parenthesis ("unavailable: no RAPL counters on this machine").
std::string energy_unavailable(const nlohmann::json& energy) {
  const nlohmann::json of = energy.value("of", nlohmann::json::array());
  for (const auto& device : energy.value("devices", nlohmann::json::array())) {
    if (!device.is_object() || !device.value("joules", nlohmann::json()).is_null()) continue;
    if (std::find(of.begin(), of.end(), device.value("device", nlohmann::json())) == of.end())
      continue;
    std::string why = device.value("why", std::string());
    if (const auto cut = why.find(" ("); cut != std::string::npos) why.resize(cut);
    if (!why.empty()) return "unavailable: " + why;
  }
  return "unavailable";
}

std::string energy_cell(const nlohmann::json& energy, bool per_joule) {
  if (!energy.is_object()) return "not recorded";
  const double joules = number_at(energy, "joules");
  if (!std::isfinite(joules)) return per_joule ? "unavailable" : energy_unavailable(energy);
  return per_joule ? reading(number_at(energy, "images_per_joule"), 1) : fixed(joules, 1);
}

// A peak so far (kNoValue before the first reading) raised by a reading, when it has one.
void raise_peak(double& peak, double value) {
  if (std::isfinite(value) && !(peak >= value)) peak = value;
}

// The devices a run's energy is of: where its numbers come from.
std::vector<std::string> compute_devices(const RunData& run) {
  std::vector<std::string> devices;
  if (const auto energy = run.info.find("energy"); energy != run.info.end() && energy->is_object())
    for (const auto& d : energy->value("of", nlohmann::json::array()))
      if (d.is_string()) devices.push_back(d.get<std::string>());
  if (!devices.empty()) return devices;
  for (const auto& s : run.samples)
    if (s.device.rfind("cuda:", 0) == 0 &&
        std::find(devices.begin(), devices.end(), s.device) == devices.end())
      devices.push_back(s.device);
  if (devices.empty()) devices.push_back("cpu");
  return devices;
}

}  // namespace

double matmul_copy_bytes(int n) { return 3.0 * double(n) * n * sizeof(float); }

// The longest sample period of NVML's utilization (nvmlDeviceGetUtilizationRates: "between 1
// second and 1/6 second").
constexpr double kNvmlUtilizationPeriodS = 1.0;

LabRunReadings lab_run_readings(const RunData& run) {
  LabRunReadings r;
  const std::vector<std::string> devices = compute_devices(run);
  double util_sum = 0, mem_busy_sum = 0;
  int util_count = 0, mem_busy_count = 0;
  std::vector<double> sm_clocks;
  std::map<std::string, std::pair<double, int>> power;  // device -> sum of watts, readings
  double gpu_first = INFINITY, gpu_last = -INFINITY;     // when a GPU's utilization was read
  for (const DeviceSample& s : run.samples) {
    if (std::find(devices.begin(), devices.end(), s.device) == devices.end()) continue;
    if (std::isfinite(s.util_percent)) {
      util_sum += s.util_percent, ++util_count;
      if (s.device.rfind("cuda:", 0) == 0)
        gpu_first = std::min(gpu_first, s.time_s), gpu_last = std::max(gpu_last, s.time_s);
    }
    // The CPU's mem_util_percent is its share of host memory: no controller's busy time.
    if (s.device.rfind("cuda:", 0) == 0) {
      if (std::isfinite(s.mem_util_percent)) mem_busy_sum += s.mem_util_percent, ++mem_busy_count;
      if (std::isfinite(s.sm_clock_mhz)) sm_clocks.push_back(s.sm_clock_mhz);
    }
    raise_peak(r.peak_mem_bytes, s.mem_used_bytes);
    raise_peak(r.peak_temperature_c, s.temperature_c);
    if (std::isfinite(s.power_w)) power[s.device].first += s.power_w, ++power[s.device].second;
  }
  if (util_count) r.mean_util_percent = util_sum / util_count;
  if (mem_busy_count) r.mean_mem_busy_percent = mem_busy_sum / mem_busy_count;
  if (!sm_clocks.empty()) {
    std::sort(sm_clocks.begin(), sm_clocks.end());
    const size_t n = sm_clocks.size();
    r.median_sm_clock_mhz =
        n % 2 ? sm_clocks[n / 2] : (sm_clocks[n / 2 - 1] + sm_clocks[n / 2]) / 2;
    r.max_sm_clock_mhz = sm_clocks.back();
  }
  // NVML's utilization is the share of its last sample period (1/6 s to 1 s) a kernel ran: a run
  // sampled over less than a second reads the idle time before it.
  if (gpu_first <= gpu_last && gpu_last - gpu_first < kNvmlUtilizationPeriodS) {
    r.mean_util_percent = r.mean_mem_busy_percent = kNoValue;  // the same sample period
    r.util_unmeasured = "utilization not measured: NVML averages a GPU's over up to " +
                        fixed(kNvmlUtilizationPeriodS, 0) + " s, and this run was sampled over " +
                        fixed(gpu_last - gpu_first, 2) + " s";
  }
  if (!power.empty()) {
    r.mean_power_w = 0;
    for (const auto& [device, sum] : power) r.mean_power_w += sum.first / sum.second;
  }
  if (!run.steps.empty()) {
    double data = 0, copy = 0, allreduce = 0;
    for (const StepMetrics& m : run.steps)
      data += m.times.data_ms, copy += m.times.copy_ms, allreduce += m.times.allreduce_ms;
    const double n = double(run.steps.size());
    r.data_ms = data / n, r.copy_ms = copy / n, r.allreduce_ms = allreduce / n;
    r.median_step_ms = median_step(run).step_ms;
    r.matmul_percent = matmul_share(run).percent;
  }
  if (const auto energy = run.info.find("energy"); energy != run.info.end()) r.energy = *energy;
  r.cuda_graphs = run.info.value("cuda_graphs", std::string());
  return r;
}

LabRunResult lab_run_result(const std::string& experiment, const RunData& run) {
  LabRunResult result;
  result.experiment = experiment;
  result.run_dir = run.dir;
  RunSummary s;
  const std::string status = run.status();
  s.status = status == "finished"    ? RunStatus::Finished
             : status == "cancelled" ? RunStatus::Cancelled
             : status == "running"   ? RunStatus::Running
                                     : RunStatus::Failed;
  s.message = status == "interrupted" ? "interrupted: its process ended before the run did"
                                      : run.info.value("message", std::string());
  const auto summary = run.info.find("summary");
  if (summary != run.info.end() && summary->is_object() && s.status != RunStatus::Running) {
    s.steps = summary->value("steps", int64_t(0));
    s.images = summary->value("images", int64_t(0));
    s.train_seconds = number_at(*summary, "train_seconds");
    s.wall_seconds = number_at(*summary, "wall_seconds");
    s.test_loss = number_at(*summary, "test_loss");
    s.test_accuracy = number_at(*summary, "test_accuracy");
    s.target_accuracy = number_at(*summary, "target_accuracy");
    if (const double t = number_at(*summary, "time_to_target_s"); std::isfinite(t))
      s.time_to_target_s = t;
    s.diverged = summary->value("diverged", false);
  }
  result.summary = s;
  add_run_facts(result, run);
  result.readings = lab_run_readings(run);
  return result;
}

void add_run_facts(LabRunResult& result, const RunData& run) {
  result.flags = run_flags(run);
  result.device.clear();
  if (const auto devices = run.info.find("devices");
      devices != run.info.end() && devices->is_array())
    for (const auto& device : *devices)
      if (const std::string text = device_text(device); !text.empty())
        result.device += (result.device.empty() ? "" : "; ") + text;
  result.host.clear();
  if (const auto process = run.info.find("process");
      process != run.info.end() && process->is_object())
    result.host = process->value("host", "");
}

void add_bench_load(LabRunResult& result, const nlohmann::json& load) {
  result.outside_load = load;
  if (std::string caveat = outside_load_caveat(load); !caveat.empty())
    result.flags.push_back(std::move(caveat));
}

std::vector<MatmulTiming> time_lab_inference(const LabExperiment& e,
                                             const std::vector<int>& batches) {
  // The work of a forward pass does not depend on the weights' values (nor on the images':
  // time_inference's are pseudo-random), so freshly initialized weights time what trained ones do.
  ModelWeights model;
  model.source = e.model_name;
  model.config = e.experiment.model;
  model.plan = plan_model(model.config);
  model.params.resize(size_t(model.plan.parameter_count));
  init_parameters(model.params, model.plan, e.experiment.train.seed);
  std::vector<MatmulTiming> timings;
  for (const InferenceTiming& t :
       time_inference(model, e.experiment.backend.device, batches, e.experiment.backend.threads,
                      e.experiment.backend.conv))
    timings.push_back({t.batch, t.batch_ms, t.batch_ms});
  return timings;
}

LabRunResult run_lab_bench(const LabExperiment& e, const std::vector<int>& sizes) {
  LabRunResult result;
  result.experiment = e.name;
  OutsideLoadMeter meter;
  result.matmul = e.bench == "inference" ? time_lab_inference(e, sizes)
                                         : bench_matmul(e.experiment.backend.device, sizes);
  // A benchmark of small sizes is over within a few clock ticks: measure() reads the load over
  // half a second at least, the benchmark and what follows it.
  add_bench_load(result, meter.measure());
  return result;
}

LabResultsTable lab_results_table(const Lab& lab, const LabTable& table,
                                  const std::vector<LabRunResult>& results) {
  LabResultsTable out;
  out.header = table.columns;
  out.header.push_back("note");
  out.titles = out.header;
  std::vector<const LabExperiment*> experiments;
  if (table.experiments.empty())
    for (const auto& e : lab.experiments) experiments.push_back(&e);
  else
    for (const auto& name : table.experiments)
      if (const LabExperiment* e = lab.experiment(name)) experiments.push_back(e);
  // One target for every experiment with one: named in the column's title.
  double target = -1;
  for (const LabExperiment* e : experiments) {
    const double t = e->experiment.train.target_accuracy;
    if (t <= 0 || !e->bench.empty()) continue;
    target = target < 0 || target == t ? t : 0;
  }
  for (std::string& title : out.titles)
    if (title == "time to target" && target > 0)
      title += " (" + fixed(100.0 * target, 100.0 * target == std::floor(100.0 * target) ? 0 : 1) +
               " %)";
  const LabExperiment* baseline = lab.baseline();
  for (const LabExperiment* e : experiments) {
    const std::string over = e->compare_to.empty() && baseline ? baseline->name : e->compare_to;
    // A speedup only over the same model (or the same benchmark): LeNet-5's images/s over
    // vgg-small's is a ratio of two workloads, and read as "8.71x" it misleads.
    const LabExperiment* over_e = lab.experiment(over);
    const bool same_work =
        over_e && over_e->bench == e->bench && (!e->bench.empty() || over_e->model_name == e->model_name);
    const LabRunResult* base = same_work ? find(results, over) : nullptr;
    const LabRunResult* r = find(results, e->name);
    // A run still going has no figures yet, only its note.
    const RunSummary* s =
        r && r->summary && r->summary->status != RunStatus::Running ? &*r->summary : nullptr;
    const bool ran = r && r->skipped.empty();
    const bool inference = e->bench == "inference";
    // A benchmark has a row per size it timed (one row saying why when it did not run); a
    // training run one row.
    std::vector<int> sizes = {0};
    if (!e->bench.empty() && ran && !r->matmul.empty()) {
      sizes.clear();
      for (const auto& t : r->matmul) sizes.push_back(t.size);
    }
    for (int size : sizes) {
      const MatmulTiming* t = ran ? at_size(r, size) : nullptr;
      const MatmulTiming* base_t = at_size(base, size);
      std::vector<std::string> row;
      std::string also;  // a reading's reason for its empty cell, after the row's note
      std::string speedup_said;  // what the speedup is over, where the cell alone would mislead
      for (const auto& column : table.columns) {
        std::string cell;
        if (column == "experiment")
          cell = e->name;
        else if (column == "device")
          cell = e->experiment.backend.device;
        else if (column == "model")
          cell = e->bench == "matmul" ? "sgemm" : e->model_name;
        else if (column == "batch")
          cell = e->bench.empty()        ? std::to_string(e->experiment.train.batch)
                 : inference && size > 0 ? std::to_string(size)
                                         : "";
        else if (column == "precision")
          cell = e->bench.empty() ? precision_name(e->experiment.backend.precision) : "";
        else if (column == "size")
          cell = size > 0 ? std::to_string(size) : "";
        else if (s && column == "steps")
          cell = std::to_string(s->steps);
        else if (s && column == "images/s")
          cell = fixed(images_per_second(*s, r->readings), 0);
        // A training step's time per image, beside an inference's: what answering costs against
        // what learning costs.
        else if (s && column == "ms per image")
          cell = fixed(1000.0 / images_per_second(*s, r->readings), 4);
        else if (t && inference && column == "images/s")
          cell = fixed(1000.0 * size / t->ms, 0);
        else if (t && inference && column == "ms per image")
          cell = fixed(t->ms / size, 4);
        else if (s && column == "ms per step")
          cell = fixed(ms_per_step(*s, r->readings), 2);
        else if (s && column == "speedup" && base && base->summary && speedup_over(*r, *base)) {
          cell = fixed(images_per_second(*s, r->readings) /
                           images_per_second(*base->summary, base->readings),
                       2);
          speedup_said = speedup_note(*r, *base, *over_e);
        } else if (t && column == "speedup" && base_t && speedup_over(*r, *base)) {
          cell = fixed(base_t->ms_with_copies / t->ms_with_copies, 2);
          speedup_said = speedup_note(*r, *base, *over_e);
        } else if (s && column == "time to target")
          cell = s->time_to_target_s      ? fixed(*s->time_to_target_s, 2)
                 : s->target_accuracy > 0 ? "not reached"
                                          : "";
        else if (s && column == "test accuracy")
          cell = fixed(100.0 * s->test_accuracy, 2);
        else if (s && column == "utilization") {
          cell = reading(r->readings.mean_util_percent, 0);
          if (!r->readings.util_unmeasured.empty()) also = r->readings.util_unmeasured;
        } else if (s && column == "memory busy")
          cell = reading(r->readings.mean_mem_busy_percent, 0);
        else if (s && column == "SM MHz")
          cell = reading(r->readings.median_sm_clock_mhz, 0);
        else if (s && column == "SM MHz max")
          cell = reading(r->readings.max_sm_clock_mhz, 0);
        else if (s && column == "launch ms" && base && speedup_over(*r, *base))
          cell = fixed(launch_ms(*e, *r, *over_e, *base), 3);
        else if (s && column == "peak memory")
          cell = reading(r->readings.peak_mem_bytes / double(1 << 20), 0);
        else if (s && column == "power")
          cell = reading(r->readings.mean_power_w, 0);
        else if (s && column == "peak temperature")
          cell = reading(r->readings.peak_temperature_c, 0);
        else if (s && column == "data ms")
          cell = reading(r->readings.data_ms, 2);
        else if (s && column == "copy ms")
          cell = reading(r->readings.copy_ms, 2);
        else if (s && column == "all-reduce ms")
          cell = reading(r->readings.allreduce_ms, 2);
        else if (s && column == "matmul share")
          cell = reading(r->readings.matmul_percent, 0);
        else if (s && column == "energy")
          cell = energy_cell(r->readings.energy, false);
        else if (s && column == "images/J")
          cell = energy_cell(r->readings.energy, true);
        else if (t && column == "ms")
          cell = fixed(t->ms, 3);
        else if (t && column == "ms with copies")
          cell = fixed(t->ms_with_copies, 3);
        else if (t && !inference && column == "GFLOP/s")
          cell = fixed(matmul_gflops(size, t->ms), 1);
        else if (t && !inference && column == "GFLOP/s with copies")
          cell = fixed(matmul_gflops(size, t->ms_with_copies), 1);
        // The copies' share of a benchmark: empty on the CPU, which copies nothing.
        else if (t && column == "copy ms" && t->ms_with_copies != t->ms)
          cell = fixed(t->ms_with_copies - t->ms, 3);
        else if (t && column == "copy GB/s" && t->ms_with_copies > t->ms)
          cell = fixed(matmul_copy_bytes(size) / ((t->ms_with_copies - t->ms) * 1e6), 2);
        row.push_back(cell);
      }
      std::string said = note(r);
      for (const std::string* more : {&also, &speedup_said})
        if (!more->empty()) said += (said.empty() ? "" : "; ") + *more;
      row.push_back(said);
      out.rows.push_back(std::move(row));
      out.flagged.push_back(ran &&
                            (!r->flags.empty() || speedup_said.find("⚠") != std::string::npos));
    }
  }
  return out;
}

std::string to_csv(const LabResultsTable& table) {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csv_field(cells[i]);
    }
    out += "\n";
  };
  line(table.header);
  for (const auto& row : table.rows) line(row);
  return out;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else {
      cell += c;
    }
  }
  if (any) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string to_markdown(const LabResultsTable& table) {
  auto escaped = [](const std::string& cell) {
    std::string e;
    for (char c : cell) {
      if (c == '|') e += '\\';
      e += c;
    }
    return e;
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    out += '|';
    for (const auto& cell : cells) {
      out += ' ';
      out += escaped(cell);
      out += " |";
    }
    out += '\n';
  };
  line(table.titles.empty() ? table.header : table.titles);
  line(std::vector<std::string>(table.header.size(), "---"));
  for (size_t r = 0; r < table.rows.size(); ++r) {
    std::vector<std::string> row = table.rows[r];
    if (r < table.flagged.size() && table.flagged[r] && !row.empty()) row[0] = "⚠ " + row[0];
    line(row);
  }
  return out;
}

}  // namespace gpulab
