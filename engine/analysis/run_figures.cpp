// One run's figures read from its record: run.json's fields, steps per epoch, the median step,
// live figures, caveats and flags, and thinning for drawing.
#include "engine/analysis/run_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_set>

#include "engine/records/outside_load.hpp"

namespace gpulab {

const nlohmann::json* info_field(const nlohmann::json& info,
                                 std::initializer_list<const char*> path) {
  const nlohmann::json* at = &info;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

double info_number(const nlohmann::json& info, std::initializer_list<const char*> path) {
  const nlohmann::json* at = info_field(info, path);
  return at && at->is_number() ? at->get<double>() : kNoValue;
}

std::string info_string(const nlohmann::json& info, std::initializer_list<const char*> path,
                        const std::string& fallback) {
  const nlohmann::json* at = info_field(info, path);
  return at && at->is_string() ? at->get<std::string>() : fallback;
}

const char* phase_name(int phase) {
  return phase >= 0 && phase < kPhaseCount ? kStepPhases[phase].name : "?";
}

int phase_index(const std::string& name) {
  for (int p = 0; p < kPhaseCount; ++p)
    if (name == kStepPhases[size_t(p)].name) return p;
  return -1;
}

double phase_ms(const StepTimes& t, int phase) {
  return phase >= 0 && phase < kPhaseCount ? t.*kStepPhases[phase].ms : kNoValue;
}

// --- Thinning large records -------------------------------------------------------------

void thin_for_drawing(RunData& run, size_t max_steps) {
  const size_t count = run.steps.size();
  if (max_steps == 0 || count <= max_steps) return;
  const size_t per = (count + max_steps - 1) / max_steps;
  // The mean of one field over [from, to), missing values left out.
  auto mean = [&](size_t from, size_t to, auto&& field) {
    double sum = 0;
    int n = 0;
    for (size_t i = from; i < to; ++i)
      if (const double v = field(run.steps[i]); std::isfinite(v)) sum += v, ++n;
    return n > 0 ? sum / n : kNoValue;
  };
  std::vector<StepMetrics> thinned;
  thinned.reserve(count / per + 1);
  std::unordered_set<int64_t> kept;
  for (size_t from = 0; from < count; from += per) {
    const size_t to = std::min(count, from + per);
    StepMetrics point = run.steps[to - 1];
    point.replicas.clear();
    point.loss = mean(from, to, [](const StepMetrics& s) { return s.loss; });
    point.accuracy = mean(from, to, [](const StepMetrics& s) { return s.accuracy; });
    point.images_per_second =
        mean(from, to, [](const StepMetrics& s) { return s.images_per_second; });
    point.step_ms = mean(from, to, [](const StepMetrics& s) { return s.step_ms; });
    for (const StepPhase& phase : kStepPhases)
      point.times.*phase.ms =
          mean(from, to, [&](const StepMetrics& s) { return s.times.*phase.ms; });
    point.times.allreduce_hidden_ms =
        mean(from, to, [](const StepMetrics& s) { return s.times.allreduce_hidden_ms; });
    point.times.matmul_ms = mean(from, to, [](const StepMetrics& s) { return s.times.matmul_ms; });
    kept.insert(point.step);
    thinned.push_back(std::move(point));
  }
  run.steps = std::move(thinned);
  std::erase_if(run.replica_steps, [&](const ReplicaStep& row) { return !kept.count(row.step); });
  run.steps_per_point = int64_t(per);
}

int64_t steps_per_epoch(const RunData& run) {
  const double planned = info_number(run.info, {"plan", "steps_per_epoch"});
  if (std::isfinite(planned) && planned > 0) return int64_t(planned);
  const double images = info_number(run.info, {"data", "train_images"});
  const double batch = info_number(run.info, {"config", "batch"});
  if (std::isfinite(images) && std::isfinite(batch) && batch > 0)
    return int64_t(std::ceil(images / batch));
  for (const StepMetrics& s : run.steps)
    if (s.epoch > 1) return s.step - 1;
  return 0;
}

MedianStep median_step(const RunData& run) {
  MedianStep out;
  out.phases_ms.assign(kPhaseCount, kNoValue);
  std::vector<const StepMetrics*> steps;
  for (const StepMetrics& s : run.steps)
    if (std::isfinite(s.step_ms)) steps.push_back(&s);
  if (steps.empty()) return out;
  std::sort(steps.begin(), steps.end(),
            [](const StepMetrics* a, const StepMetrics* b) { return a->step_ms < b->step_ms; });
  // The middle tenth (at least the median step itself): one step alone would be noisy.
  const size_t half_band = steps.size() / 20, mid = steps.size() / 2;
  const size_t first = mid - std::min(mid, half_band),
               last = std::min(steps.size(), mid + half_band + 1);
  out.phases_ms.assign(kPhaseCount, 0.0);
  out.step_ms = 0;
  for (size_t i = first; i < last; ++i) {
    out.step_ms += steps[i]->step_ms;
    for (int p = 0; p < kPhaseCount; ++p) out.phases_ms[size_t(p)] += phase_ms(steps[i]->times, p);
  }
  const double count = double(last - first);
  out.step_ms /= count;
  double phases = 0;
  for (double& ms : out.phases_ms) phases += ms /= count;
  out.other_ms = std::max(0.0, out.step_ms - phases);
  out.steps = int(last - first);
  return out;
}

MatmulShare matmul_share(const RunData& run) {
  MatmulShare share;
  double matmul = 0, compute = 0;
  for (const StepMetrics& s : run.steps) {
    if (!std::isfinite(s.times.matmul_ms)) continue;
    matmul += s.times.matmul_ms;
    compute += s.times.forward_ms + s.times.backward_ms;
    ++share.steps;
  }
  if (share.steps == 0) return share;
  share.matmul_ms = matmul;
  share.compute_ms = compute;
  if (compute > 0) share.percent = 100 * matmul / compute;
  return share;
}

std::string matmul_share_text(const MatmulShare& share) {
  if (!std::isfinite(share.percent)) return "";
  char text[160];
  std::snprintf(text, sizeof text,
                "%.0f %% of forward and backward in matrix products (convolutions and GEMMs): "
                "%.2f of %.2f ms a step",
                share.percent, share.matmul_ms / double(share.steps),
                share.compute_ms / double(share.steps));
  return text;
}

double pace_images_per_second(double images, double steps, double median_step_ms) {
  if (!(images > 0) || !(steps > 0) || !(median_step_ms > 0) || !std::isfinite(median_step_ms))
    return kNoValue;
  return 1000.0 * images / steps / median_step_ms;
}

double run_images_per_second(const RunData& run) {
  const double median_ms = median_step(run).step_ms;
  const double images = info_number(run.info, {"summary", "images"});
  const double steps = info_number(run.info, {"summary", "steps"});
  if (const double pace = pace_images_per_second(images, steps, median_ms); std::isfinite(pace))
    return pace;
  // A live run (no summary yet): the images its recorded steps hold, a step's rate times its time.
  double recorded_images = 0, recorded_steps = 0;
  for (const StepMetrics& s : run.steps)
    if (s.step_ms > 0 && std::isfinite(s.images_per_second)) {
      recorded_images += s.images_per_second * s.step_ms / 1000.0;
      recorded_steps += 1;
    }
  if (const double pace = pace_images_per_second(recorded_images, recorded_steps, median_ms);
      std::isfinite(pace))
    return pace;
  // A record of run.json alone.
  const double summary = info_number(run.info, {"summary", "images_per_second"});
  return summary > 0 ? summary : kNoValue;
}

LiveFigures live_figures(const RunData& run, int64_t total_steps) {
  LiveFigures figures;
  if (run.steps.empty()) return figures;
  const StepMetrics& last = run.steps.back();
  figures.step = last.step;
  // Images over time across the last steps: each step's images are its rate times its time.
  double images = 0, seconds = 0;
  for (size_t i = run.steps.size() - std::min(run.steps.size(), kLiveSteps); i < run.steps.size();
       ++i) {
    const StepMetrics& s = run.steps[i];
    if (!(s.step_ms > 0) || !std::isfinite(s.images_per_second)) continue;
    images += s.images_per_second * s.step_ms / 1000.0;
    seconds += s.step_ms / 1000.0;
  }
  if (seconds > 0) figures.images_per_second = images / seconds;
  if (total_steps > 0 && last.step > 0 && last.time_s > 0)
    figures.eta_s =
        last.time_s / double(last.step) * double(std::max<int64_t>(0, total_steps - last.step));
  return figures;
}

namespace {

std::string figure(double value, int decimals) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(decimals);
  text << value;
  return text.str();
}

}  // namespace

// Each check compares a figure of run.json's summary with what the run's own files measured,
// with room for honest rounding and pauses: only a figure no step could have given is named.
std::vector<std::string> record_disagreements(const RunData& run) {
  std::vector<std::string> found;
  const double steps = info_number(run.info, {"summary", "steps"});
  const double images = info_number(run.info, {"summary", "images"});
  const double seconds = info_number(run.info, {"summary", "train_seconds"});
  const double batch = info_number(run.info, {"config", "batch"});
  const double ranks = std::max(1.0, info_number(run.info, {"config", "ranks"}));
  auto disagree = [&](const std::string& what) { found.push_back("figures disagree: " + what); };
  if (steps >= 0 && images > 0 && batch > 0 && images > steps * batch * ranks)
    disagree("its " + figure(images, 0) + " images are more than its " + figure(steps, 0) +
             " steps of " + figure(batch * ranks, 0) + " hold");
  // The mean over the run is never faster than its fastest step.
  double fastest_rate = 0, shortest_ms = kNoValue;
  for (const StepMetrics& s : run.steps) {
    if (s.images_per_second > fastest_rate) fastest_rate = s.images_per_second;
    if (s.step_ms > 0 && !(shortest_ms <= s.step_ms)) shortest_ms = s.step_ms;
  }
  if (seconds > 0 && images > 0 && fastest_rate > 0 && images / seconds > 1.5 * fastest_rate)
    disagree(figure(images / seconds, 0) + " images/s is faster than any step metrics.csv holds (" +
             figure(fastest_rate, 0) + " at most)");
  if (seconds > 0 && steps > 0 && shortest_ms > 0 && 1000 * seconds / steps < shortest_ms / 1.5)
    disagree(figure(1000 * seconds / steps, 2) +
             " ms per step is shorter than any step metrics.csv holds (" + figure(shortest_ms, 2) +
             " ms at least)");
  const double accuracy = info_number(run.info, {"summary", "test_accuracy"});
  const EvalMetrics* last_test = nullptr;
  for (const EvalMetrics& e : run.evals)
    if (e.split == Split::Test && std::isfinite(e.accuracy)) last_test = &e;
  if (std::isfinite(accuracy) && last_test && std::abs(accuracy - last_test->accuracy) > 5e-4)
    disagree("test accuracy " + figure(100 * accuracy, 2) +
             " % is not its last test evaluation in eval.csv (" +
             figure(100 * last_test->accuracy, 2) + " %)");
  return found;
}

std::vector<std::string> run_caveats(const RunData& run) {
  std::vector<std::string> caveats = record_disagreements(run);
  if (const auto* quick = info_field(run.info, {"not_for_comparison"});
      quick && quick->is_string() && !quick->get<std::string>().empty())
    caveats.push_back(quick->get<std::string>());
  if (const auto* shared = info_field(run.info, {"shared_hardware", "concurrent_with"});
      shared && shared->is_array() && !shared->empty()) {
    std::string names;
    for (const auto& name : *shared)
      if (name.is_string()) names += (names.empty() ? "" : ", ") + name.get<std::string>();
    caveats.push_back("shared its hardware with " + names + " while it ran");
  }
  if (const auto* load = info_field(run.info, {"outside_load"}))
    if (std::string caveat = outside_load_caveat(*load); !caveat.empty())
      caveats.push_back(std::move(caveat));
  return caveats;
}

std::vector<std::string> run_flags(const RunData& run) {
  std::vector<std::string> flags;
  const auto* diverged = info_field(run.info, {"summary", "diverged"});
  if (diverged && diverged->is_boolean() && diverged->get<bool>()) flags.push_back("diverged");
  const std::string status = run.status();
  if (status == "cancelled")
    flags.push_back("cancelled after " + std::to_string(run.steps.size()) + " steps");
  else if (status == "failed")
    flags.push_back("failed");
  for (std::string& caveat : run_caveats(run)) flags.push_back(std::move(caveat));
  return flags;
}

std::string flag_headline(const std::string& flag) { return flag.substr(0, flag.find(':')); }

std::string flagged_name(const std::string& name, const std::vector<std::string>& flags) {
  return flags.empty() ? name : name + " ⚠";
}

std::string flagged_name(const std::string& name, const RunData& run) {
  return flagged_name(name, run_flags(run));
}

std::string join_flags(const std::vector<std::string>& flags) {
  std::string text;
  for (const std::string& c : flags) text += (text.empty() ? "" : "; ") + c;
  return text;
}

}  // namespace gpulab
