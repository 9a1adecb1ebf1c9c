// The scaling study of data-parallel runs.
#include "engine/analysis/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include "engine/analysis/replica_timeline.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/text.hpp"

namespace gpulab {
namespace {

double median_of(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  if (values.empty()) return kNoValue;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

std::string config_text(const RunData& run, const char* key, const std::string& fallback) {
  const auto config = run.info.find("config");
  if (config == run.info.end() || !config->is_object()) return fallback;
  const auto value = config->find(key);
  if (value == config->end()) return fallback;
  return value->is_string() ? value->get<std::string>() : value->dump();
}

// What runs of one study share; runs differing in anything here are not compared.
std::string study_key(const RunData& run, std::string* label) {
  std::string device = config_text(run, "device", "cpu");
  device = device.substr(0, device.find(':'));
  const std::string model = run.info.contains("model") ? run.info["model"].dump() : "";
  const std::string name = run.info.contains("model") && run.info["model"].contains("name")
                               ? run.info["model"]["name"].get<std::string>()
                               : "model";
  const std::string batch = config_text(run, "batch", "?");
  const std::string sync = config_text(run, "sync", "allreduce");
  const std::string precision = config_text(run, "precision", "fp32");
  const std::string threads = config_text(run, "threads", "0");
  *label = name + ", batch " + batch + ", " + device + ", " + sync;
  return model + '\n' + batch + '\n' + device + '\n' + sync + '\n' + precision + '\n' + threads;
}

double ring_factor(int replicas) { return 2.0 * (replicas - 1) / replicas; }

}  // namespace

double hardware_units(const RunData& run) {
  const auto devices = run.info.find("devices");
  if (devices == run.info.end() || !devices->is_array() || devices->empty()) return kNoValue;
  const std::string device = config_text(run, "device", "cpu");
  auto text = [](const nlohmann::json& entry, const char* key) {
    const auto value = entry.find(key);
    return value != entry.end() && value->is_string() ? value->get<std::string>() : std::string();
  };
  if (device.rfind("cuda", 0) == 0) {
    std::set<std::string> gpus;
    for (const nlohmann::json& entry : *devices)
      if (!text(entry, "pci_bus_id").empty())
        gpus.insert(text(entry, "host") + " " + text(entry, "pci_bus_id"));
    return gpus.empty() ? kNoValue : double(gpus.size());
  }
  // CPU: each process's threads (--threads, 0 for every core, split over its replicas, at least
  // one each), at most its machine's cores.
  const int threads = std::atoi(config_text(run, "threads", "0").c_str());
  const int local = std::max(1, std::atoi(config_text(run, "replicas", "1").c_str()));
  std::map<std::string, std::pair<double, double>> hosts;  // host: (threads, cores)
  for (const nlohmann::json& entry : *devices) {
    const auto cores = entry.find("cores");
    if (cores == entry.end() || !cores->is_number() || cores->get<double>() < 1) return kNoValue;
    auto& [used, have] = hosts[text(entry, "host")];
    have = cores->get<double>();
    used += local * std::max(1, (threads > 0 ? threads : int(have)) / local);
  }
  double units = 0;
  for (const auto& [host, use] : hosts) units += std::min(use.first, use.second);
  return units;
}

ScalingModel::HardwareGrowth ScalingModel::hardware_growth() const {
  if (hardware.size() < 2) return HardwareGrowth::Unknown;
  for (const auto& [r, units] : hardware)
    if (!std::isfinite(units) || units <= 0) return HardwareGrowth::Unknown;
  const double base = hardware.front().second;
  const auto [last_r, last_h] = hardware.back();
  if (last_r > base_replicas && std::abs(last_h / base - 1.0) < 1e-9) return HardwareGrowth::Shared;
  if (std::abs(last_h / base - double(last_r) / base_replicas) < 1e-9)
    return HardwareGrowth::PerReplica;
  return HardwareGrowth::Measured;
}

double ScalingModel::hardware_ratio(int replicas) const {
  const HardwareGrowth growth = hardware_growth();
  if (growth == HardwareGrowth::Unknown || replicas < hardware.front().first)
    return double(replicas) / base_replicas;
  const double base = hardware.front().second;
  for (size_t i = 0; i + 1 < hardware.size(); ++i) {
    const auto [r0, h0] = hardware[i];
    const auto [r1, h1] = hardware[i + 1];
    if (replicas >= r0 && replicas <= r1)
      return (h0 + (h1 - h0) * double(replicas - r0) / double(r1 - r0)) / base;
  }
  const auto [last_r, last_h] = hardware.back();
  return growth == HardwareGrowth::PerReplica ? last_h / base * replicas / last_r : last_h / base;
}

double ScalingModel::predicted_step_ms(int replicas) const {
  if (replicas < 1 || !std::isfinite(transfer_ms)) return kNoValue;
  return shard_ms / hardware_ratio(replicas) + fixed_ms + ring_factor(replicas) * transfer_ms;
}

double ScalingModel::predicted_images_per_second(int replicas) const {
  const double step = predicted_step_ms(replicas), base = predicted_step_ms(base_replicas);
  return step > 0 && base > 0 ? base_images_per_second * base / step : kNoValue;
}

double ScalingModel::ideal_images_per_second(int replicas) const {
  return base_images_per_second * hardware_ratio(replicas);
}

double ScalingModel::predicted_efficiency(int replicas) const {
  return predicted_images_per_second(replicas) / ideal_images_per_second(replicas);
}

double ScalingModel::bandwidth_gb_per_s() const {
  return gradient_bytes / transfer_ms * 1000.0 / 1e9;  // NaN propagates
}

std::string ScalingStudy::baseline_warning() const {
  if (points.empty() || points.front().flags.empty()) return "";
  const ScalingPoint& base = points.front();
  std::string text = "⚠ baseline (" + std::to_string(base.replicas) +
                     (base.replicas == 1 ? " replica" : " replicas") + ") ";
  for (size_t i = 0; i < base.flags.size(); ++i)
    text += (i ? "; " : "") + flag_headline(base.flags[i]);
  return text + "\nevery efficiency and the ideal are measured against it";
}

namespace {

// How a run ranks as the measurement of its replica count (see scaling_studies): picked by the
// user, then unflagged, then finished, then the fastest; a run without a figure is the slowest.
std::tuple<bool, bool, bool, double> point_rank(const ScalingPoint& p, const RunData& run) {
  const double speed = std::isfinite(p.images_per_second) ? p.images_per_second : -1.0;
  return {p.picked, p.flags.empty(), run.status() == "finished", speed};
}

// Why `chosen` measures its replica count rather than the others given at that count (`all`:
// every run's point, by run index): the first step of the ranking where it beats all of them.
std::string chosen_because(const ScalingPoint& chosen, const std::vector<ScalingPoint>& all,
                           const std::vector<const RunData*>& runs) {
  if (chosen.picked) return "picked";
  const auto mine = point_rank(chosen, *runs[size_t(chosen.run)]);
  bool only_unflagged = std::get<1>(mine), only_finished = std::get<2>(mine);
  double runner_up = -1.0;  // the fastest of the others that tie on flags and status
  for (int other : chosen.others) {
    const auto theirs = point_rank(all[size_t(other)], *runs[size_t(other)]);
    only_unflagged = only_unflagged && !std::get<1>(theirs);
    only_finished = only_finished && !std::get<2>(theirs);
    if (std::get<1>(theirs) == std::get<1>(mine) && std::get<2>(theirs) == std::get<2>(mine))
      runner_up = std::max(runner_up, std::get<3>(theirs));
  }
  if (only_unflagged) return "the only one without a ⚠";
  if (only_finished) return "the only finished one";
  if (runner_up < 0) return "the fastest";
  return "the fastest: " + std::to_string(std::lround(std::get<3>(mine))) + " images/s against " +
         std::to_string(std::lround(runner_up));
}

}  // namespace

std::vector<ScalingStudy> scaling_studies(const std::vector<const RunData*>& runs,
                                          const std::vector<int>& picked) {
  const std::vector<RunComparison> compared = compare_runs(runs, 0, 1.0);
  std::map<std::string, ScalingStudy> by_key;
  std::vector<std::string> order;
  std::vector<ScalingPoint> all(runs.size());  // every run's point, by run index
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunData& run = *runs[i];
    if (run.steps.empty()) continue;
    std::string label;
    const std::string key = study_key(run, &label);
    if (!by_key.count(key)) order.push_back(key);
    ScalingStudy& study = by_key[key];
    study.label = label;
    ScalingPoint point;
    point.run = int(i);
    point.replicas = replica_count(run);
    point.images_per_second = compared[i].images_per_second;
    std::vector<double> step, shard, allreduce, fixed;
    for (const StepMetrics& s : run.steps) {
      const double split =
          s.times.data_ms + s.times.copy_ms + s.times.forward_ms + s.times.backward_ms;
      step.push_back(s.step_ms);
      shard.push_back(split);
      allreduce.push_back(s.times.allreduce_ms);
      fixed.push_back(s.step_ms - split - s.times.allreduce_ms);
    }
    point.step_ms = median_of(step);
    point.shard_ms = median_of(shard);
    point.allreduce_ms = median_of(allreduce);
    point.fixed_ms = median_of(fixed);
    point.flags = run_flags(run);
    point.picked = std::find(picked.begin(), picked.end(), int(i)) != picked.end();
    all[i] = point;
    // One run per replica count: the better measurement; the others stay listed to pick from.
    auto same = std::find_if(study.points.begin(), study.points.end(),
                             [&](const ScalingPoint& p) { return p.replicas == point.replicas; });
    if (same == study.points.end()) {
      study.points.push_back(point);
    } else if (point_rank(point, run) > point_rank(*same, *runs[size_t(same->run)])) {
      point.others = std::move(same->others);
      point.others.push_back(same->run);
      *same = point;
    } else {
      same->others.push_back(point.run);
    }
    if (study.model.batch == 0) {
      const double batch = std::atof(config_text(run, "batch", "0").c_str());
      study.model.batch = int(batch);
      const auto parameters = run.info.find("parameters");
      if (parameters != run.info.end() && parameters->is_number())
        study.model.gradient_bytes = 4.0 * parameters->get<double>();
    }
  }

  std::vector<ScalingStudy> studies;
  for (const std::string& key : order) {
    ScalingStudy& study = by_key[key];
    if (study.points.size() < 2) continue;
    std::sort(study.points.begin(), study.points.end(),
              [](const ScalingPoint& a, const ScalingPoint& b) { return a.replicas < b.replicas; });
    for (ScalingPoint& p : study.points)
      if (!p.others.empty()) p.chosen_because = chosen_because(p, all, runs);
    ScalingModel& model = study.model;
    const ScalingPoint& base = study.points.front();
    model.base_replicas = base.replicas;
    model.base_images_per_second = base.images_per_second;
    model.shard_ms = base.shard_ms;
    model.fixed_ms = base.fixed_ms;
    for (const ScalingPoint& p : study.points)
      model.hardware.emplace_back(p.replicas, hardware_units(*runs[size_t(p.run)]));
    // Least squares through zero: allreduce_ms = ring_factor(R) * transfer_ms.
    double sum_xy = 0, sum_xx = 0;
    for (const ScalingPoint& p : study.points) {
      if (p.replicas < 2 || !std::isfinite(p.allreduce_ms)) continue;
      sum_xy += ring_factor(p.replicas) * p.allreduce_ms;
      sum_xx += ring_factor(p.replicas) * ring_factor(p.replicas);
    }
    if (sum_xx > 0) model.transfer_ms = sum_xy / sum_xx;
    for (ScalingPoint& p : study.points)
      p.efficiency = p.images_per_second / model.ideal_images_per_second(p.replicas);
    studies.push_back(std::move(study));
  }
  std::stable_sort(studies.begin(), studies.end(),
                   [](const ScalingStudy& a, const ScalingStudy& b) {
                     return a.points.size() > b.points.size();
                   });
  return studies;
}

void write_scaling_csv(const ScalingStudy& study, const std::vector<std::string>& run_names,
                       std::ostream& out) {
  auto number = [](double value) {
    if (!std::isfinite(value)) return std::string();
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return std::string(text);
  };
  out << "replicas,run,images_per_second,efficiency,ideal_images_per_second,"
         "predicted_images_per_second,predicted_efficiency,step_ms,shard_ms,allreduce_ms,flags\n";
  const ScalingModel& m = study.model;
  for (const ScalingPoint& p : study.points) {
    const std::string name =
        csv_field(p.run < int(run_names.size()) ? run_names[size_t(p.run)] : "");
    std::string flags;
    for (const std::string& flag : p.flags) flags += (flags.empty() ? "" : "; ") + flag;
    out << p.replicas << ',' << name << ',' << number(p.images_per_second) << ','
        << number(p.efficiency) << ',' << number(m.ideal_images_per_second(p.replicas)) << ','
        << number(m.predicted_images_per_second(p.replicas)) << ','
        << number(m.predicted_efficiency(p.replicas)) << ',' << number(p.step_ms) << ','
        << number(p.shard_ms) << ',' << number(p.allreduce_ms) << ',' << csv_field(flags) << '\n';
  }
}

}  // namespace gpulab
