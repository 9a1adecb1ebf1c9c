// The training loop shared by every backend.
#include "engine/training/trainer.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "datasets/batching.hpp"
#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "engine/training/divergence.hpp"
#include "engine/training/setting_bounds.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;

std::vector<int32_t> all_indices(int count) {
  std::vector<int32_t> indices(count);
  std::iota(indices.begin(), indices.end(), 0);
  return indices;
}

// The base learning rate whose schedule gives `lr` at `step`: every schedule scales the base
// linearly, so a learning rate changed mid-run is the next step's own and the schedule goes on
// from it. A schedule at zero there (Step with gamma 0) has nothing to scale: `lr` is the base.
float rescaled_base_lr(const OptimizerConfig& optimizer, const ScheduleConfig& schedule, double lr,
                       int64_t step, int64_t total_steps, int64_t steps_per_epoch) {
  const double factor =
      double(scheduled_lr(optimizer, schedule, step, total_steps, steps_per_epoch)) /
      double(optimizer.lr);
  return static_cast<float>(factor > 0 && std::isfinite(factor) ? lr / factor : lr);
}

// "--lr-change 300:0.05", as the user wrote it.
std::string planned_text(const PlannedLr& c) {
  std::ostringstream text;
  text << "--lr-change " << c.step << ':' << c.lr;
  return text.str();
}

}  // namespace

void RunControl::request_lr(double lr) {
  if (const char* why = lr_fixed_because.load()) throw ConfigError(why);
  if (!(lr > 0) || !std::isfinite(lr) || !(float(lr) > 0) || !std::isfinite(float(lr))) {
    std::ostringstream message;
    message << "learning rate " << lr
            << ": type a positive number, such as 0.01; the run goes on with the one it has";
    throw ConfigError(message.str());
  }
  requested_lr.store(lr);
}

std::string RunControl::cancel_message(int64_t steps) const {
  std::string message = "cancelled at step " + std::to_string(steps);
  if (const char* by = cancelled_by.load()) message += std::string(" by ") + by;
  return message;
}

bool RunControl::record_cancel_now(const std::string& message) {
  std::lock_guard lock(record_cancel_mutex_);
  return record_cancel_ && record_cancel_(message);
}

void RunControl::set_record_cancel(std::function<bool(const std::string&)> hook) {
  std::lock_guard lock(record_cancel_mutex_);
  record_cancel_ = std::move(hook);
}

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::Running: return "running";
    case RunStatus::Finished: return "finished";
    case RunStatus::Cancelled: return "cancelled";
    case RunStatus::Failed: return "failed";
  }
  return "?";
}

void validate(const TrainOptions& o) {
  // "steps: 0" in a lab or a setup was told "--epochs must be at least 1", which it never gave.
  if (o.epochs < 1 && o.max_steps < 1)
    throw ConfigError(
        "nothing to train: the epochs and the steps are both 0; give at least 1 of either "
        "(--epochs or --steps; epochs: or steps: in a lab, \"epochs\" or \"max_steps\" in a "
        "setup)");
  if (o.max_steps < 0) throw ConfigError("--steps must not be negative");
  if (o.batch < 1) throw ConfigError("--batch must be at least 1");
  if (o.batch > kMaxBatch)
    throw ConfigError("--batch must be at most " + std::to_string(kMaxBatch));
  if (!(o.optimizer.lr > 0.0f) || !std::isfinite(o.optimizer.lr))
    throw ConfigError("--lr must be a positive number");
  if (!(o.optimizer.momentum >= 0.0f && o.optimizer.momentum < 1.0f))
    throw ConfigError("--momentum must be in [0, 1)");
  if (!(o.optimizer.weight_decay >= 0.0f)) throw ConfigError("--weight-decay must not be negative");
  // What the checks above leave to the shared bounds: the largest values, and gamma, which no
  // entrance but the command line checked.
  auto check = [](const char* key, const json& value) {
    const SettingBound* setting = find_setting_bound(key);
    if (const std::string problem = setting->bound.problem(value); !problem.empty())
      throw ConfigError(std::string(setting->flag) + " " + problem);
  };
  check("max_steps", o.max_steps);
  check("weight_decay", double(o.optimizer.weight_decay));
  check("gamma", double(o.schedule.gamma));
  check("seed", o.seed);
  if (o.eval_every < 0) throw ConfigError("--eval-every must not be negative");
  if (!(o.target_accuracy >= 0.0 && o.target_accuracy <= 1.0))
    throw ConfigError("--target-accuracy must be in [0, 1] (or a percentage up to 100)");
  if (!(o.stop_at_accuracy >= 0.0 && o.stop_at_accuracy <= 1.0))
    throw ConfigError("--stop-at-accuracy must be in [0, 1] (or a percentage up to 100)");
  for (size_t i = 0; i < o.lr_changes.size(); ++i) {
    const PlannedLr& c = o.lr_changes[i];
    const std::string named = planned_text(c);
    if (c.step < 1) throw ConfigError(named + ": the step must be 1 or more");
    if (!(float(c.lr) > 0) || !std::isfinite(float(c.lr)))  // the optimizer keeps a float
      throw ConfigError(named + ": the learning rate must be a positive number");
    if (i > 0 && c.step <= o.lr_changes[i - 1].step)
      throw ConfigError(named + ": give the changes in increasing step order, one per step");
  }
}

PlannedLr parse_planned_lr(const std::string& text) {
  const std::string wanted =
      "--lr-change \"" + text + "\": give a step and a learning rate, like 300:0.05";
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw ConfigError(wanted);
  PlannedLr planned;
  const std::string step = text.substr(0, colon), lr = text.substr(colon + 1);
  const auto [step_end, step_error] =
      std::from_chars(step.data(), step.data() + step.size(), planned.step);
  const auto [lr_end, lr_error] = std::from_chars(lr.data(), lr.data() + lr.size(), planned.lr);
  if (step.empty() || lr.empty() || step_error != std::errc() || lr_error != std::errc() ||
      step_end != step.data() + step.size() || lr_end != lr.data() + lr.size())
    throw ConfigError(wanted);
  return planned;
}

int training_images_left(int train_count, int validation) {
  if (validation < 0)
    throw ConfigError("--validation " + std::to_string(validation) +
                      ": give a number of images from 0 up (0 holds none out)");
  if (validation >= train_count)
    throw ConfigError("--validation " + std::to_string(validation) + ": the training set has " +
                      std::to_string(train_count) +
                      " images, and some must be left to train on; hold out fewer (a tenth, " +
                      std::to_string(train_count / 10) + ", is usual)");
  return train_count - validation;
}

StepPlan plan_steps(const TrainOptions& options, int train_count) {
  // Steps per epoch divide the step budget: an empty set would divide by zero (SIGFPE).
  if (train_count < 1)
    throw ConfigError(
        "the training set has no images; give data with training images, or hold "
        "fewer out with --validation");
  StepPlan plan;
  plan.steps_per_epoch = (train_count + options.batch - 1) / options.batch;
  plan.epochs = options.epochs;
  if (options.max_steps > 0 && options.epochs < 1)
    plan.epochs = static_cast<int>((options.max_steps + plan.steps_per_epoch - 1) / plan.steps_per_epoch);
  plan.total_steps = plan.steps_per_epoch * plan.epochs;
  if (options.max_steps > 0) plan.total_steps = std::min(plan.total_steps, options.max_steps);
  return plan;
}

void validate(const TrainOptions& options, int train_count) {
  validate(options);
  const int64_t total_steps = plan_steps(options, train_count).total_steps;
  if (!options.lr_changes.empty() && options.lr_changes.back().step > total_steps)
    throw ConfigError(planned_text(options.lr_changes.back()) + ": the run has " +
                      std::to_string(total_steps) + " steps; give a step up to that");
}

RunSummary train(Backend& backend, const DataSets& data, const TrainOptions& options,
                 TrainObserver& observer, RunControl& control) {
  const data::ImageSet& train_set = data.get(Split::Train);
  validate(options, train_set.count);
  // A batch is drawn from the training set: one larger than it would repeat images in a step.
  if (options.batch > train_set.count)
    throw ConfigError("--batch " + std::to_string(options.batch) +
                      " is larger than the training set (" + std::to_string(train_set.count) +
                      " images); use at most " + std::to_string(train_set.count));
  data::BatchSampler sampler(train_set.count, options.batch, options.shuffle, options.seed);
  // A cancel (Ctrl-C, SIGTERM, the window's Stop) ends an evaluation at its next batch, until
  // train returns.
  struct EvaluationsStopOnCancel {
    Backend& backend;
    ~EvaluationsStopOnCancel() { backend.stop_evaluations_on(nullptr); }
  } evaluations_stop{backend};
  backend.stop_evaluations_on(&control.cancel);
  const auto [epochs, steps_per_epoch, total_steps] = plan_steps(options, train_set.count);
  const std::vector<int32_t> test_indices =
      data.test ? all_indices(data.test->count) : std::vector<int32_t>{};

  RunSummary summary;
  DivergenceWatch divergence;
  summary.target_accuracy = options.target_accuracy > 0 ? options.target_accuracy : kNoValue;
  const Clock::time_point start = Clock::now();
  double paused_s = 0, eval_s = 0;  // excluded from the training clock
  auto wall_s = [&] { return seconds_between(start, Clock::now()) - paused_s; };
  auto train_s = [&] { return wall_s() - eval_s; };
  std::optional<EvalMetrics> stopping_eval;  // the evaluation that reached stop_at_accuracy
  OptimizerConfig optimizer = options.optimizer;  // its lr is the base, changed by request_lr
  size_t planned = 0;                             // the next of options.lr_changes

  auto evaluate = [&](int epoch) {
    if (test_indices.empty()) return EvalMetrics{};
    // The last step may still run on a device (a GPU's backward and update): that is training,
    // so it ends on the training clock, not in the evaluation's first wait.
    backend.synchronize();
    const Clock::time_point eval_start = Clock::now();
    const BatchStats stats = backend.evaluate(Split::Test, test_indices);
    eval_s += seconds_between(eval_start, Clock::now());
    // Cancelled while it ran (Ctrl-C during the last epoch's evaluation): its figures are of part
    // of the test set, and the run ends cancelled, not finished.
    if (control.cancel.load()) {
      summary.status = RunStatus::Cancelled;
      summary.message = control.cancel_message(summary.steps);
      return EvalMetrics{summary.steps, epoch,    wall_s(), Split::Test,
                         kNoValue,      kNoValue, train_s()};
    }
    EvalMetrics eval{summary.steps,    epoch,    wall_s(), Split::Test, stats.mean_loss(),
                     stats.accuracy(), train_s()};
    summary.test_loss = eval.loss;
    summary.test_accuracy = eval.accuracy;
    if (options.target_accuracy > 0 && !summary.time_to_target_s &&
        eval.accuracy >= options.target_accuracy) {
      summary.time_to_target_s = eval.train_s;
      summary.step_to_target = summary.steps;
    }
    if (options.stop_at_accuracy > 0 && eval.accuracy >= options.stop_at_accuracy) {
      stopping_eval = eval;
      std::ostringstream message;
      message << "stopped at step " << summary.steps << ": test accuracy " << 100 * eval.accuracy
              << "% reached --stop-at-accuracy " << 100 * options.stop_at_accuracy << "%";
      summary.message = message.str();
    }
    observer.on_eval(eval);
    return eval;
  };

  for (int epoch = 1; epoch <= epochs && summary.steps < total_steps; ++epoch) {
    sampler.start_epoch(static_cast<uint64_t>(epoch - 1));
    const double epoch_start_s = train_s();
    const int64_t epoch_start_images = summary.images;
    double epoch_loss_sum = 0;
    int64_t epoch_steps = 0;
    for (int b = 0; b < sampler.batches_per_epoch() && summary.steps < total_steps; ++b) {
      if (control.pause.load()) {
        const Clock::time_point pause_start = Clock::now();
        while (control.pause.load() && !control.cancel.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        paused_s += seconds_between(pause_start, Clock::now());
      }
      if (control.cancel.load()) {
        summary.status = RunStatus::Cancelled;
        summary.message = control.cancel_message(summary.steps);
        break;
      }
      const int64_t step = summary.steps + 1;
      float lr = scheduled_lr(optimizer, options.schedule, step - 1, total_steps, steps_per_epoch);
      double asked = control.requested_lr.exchange(kNoValue);
      if (control.lr_fixed_because.load()) asked = kNoValue;
      if (planned < options.lr_changes.size() && options.lr_changes[planned].step == step) {
        if (std::isnan(asked))
          asked = options.lr_changes[planned].lr;  // one asked for by hand wins
        ++planned;
      }
      if (!std::isnan(asked)) {
        optimizer.lr = rescaled_base_lr(optimizer, options.schedule, asked, step - 1, total_steps,
                                        steps_per_epoch);
        lr = static_cast<float>(asked);  // the value asked for, not the rescaled base's rounding
        observer.on_lr_change(LrChange{step, epoch, wall_s(), asked});
      }
      StepTimes times;
      const Clock::time_point step_start = Clock::now();
      const BatchStats stats = backend.train_step(sampler.batch(b), lr, step, times);
      const double step_ms = ms_since(step_start);
      const double loss = stats.mean_loss();
      if (!std::isfinite(loss)) {
        summary.status = RunStatus::Failed;
        std::ostringstream message;
        message << "loss became " << (std::isnan(loss) ? "NaN" : "infinite") << " at step " << step
                << "; try a lower learning rate (--lr " << optimizer.lr << " now)";
        summary.message = message.str();
        break;
      }
      summary.steps = step;
      summary.images += stats.count;
      divergence.add(loss, stats.accuracy());
      epoch_loss_sum += loss;
      ++epoch_steps;
      StepMetrics metrics;
      metrics.step = step;
      metrics.epoch = epoch;
      metrics.time_s = wall_s();
      metrics.loss = loss;
      metrics.accuracy = stats.accuracy();
      metrics.images_per_second = step_ms > 0 ? stats.count / (step_ms / 1000.0) : 0;
      metrics.lr = lr;
      metrics.step_ms = step_ms;
      metrics.times = times;
      metrics.replicas = backend.replica_times();
      observer.on_step(metrics);
      // Not at the last step of an epoch or of the run: the epoch's own evaluation follows.
      const bool epoch_ends = b + 1 == sampler.batches_per_epoch() && options.eval_at_epoch_end;
      if (options.eval_every > 0 && step % options.eval_every == 0 && step < total_steps && !epoch_ends)
        evaluate(epoch);
      if (stopping_eval || summary.status != RunStatus::Running) break;
    }
    if (summary.status != RunStatus::Running || epoch_steps == 0) break;
    EpochSummary epoch_summary;
    epoch_summary.epoch = epoch;
    epoch_summary.seconds = train_s() - epoch_start_s;
    epoch_summary.steps = epoch_steps;
    epoch_summary.images_per_second =
        epoch_summary.seconds > 0 ? (summary.images - epoch_start_images) / epoch_summary.seconds : 0;
    epoch_summary.train_loss = epoch_loss_sum / epoch_steps;
    if (options.eval_at_epoch_end || stopping_eval) {
      // A run stopped inside the epoch has just evaluated: that evaluation closes the epoch.
      const EvalMetrics eval = stopping_eval ? *stopping_eval : evaluate(epoch);
      epoch_summary.test_loss = test_indices.empty() ? kNoValue : eval.loss;
      epoch_summary.test_accuracy = test_indices.empty() ? kNoValue : eval.accuracy;
    }
    summary.epochs.push_back(epoch_summary);
    observer.on_epoch(epoch_summary);
    if (stopping_eval) break;
  }
  // The last step's backward and update may still be running: a fault there fails the run here
  // (it throws) instead of leaving it marked finished.
  backend.synchronize();
  // A step budget that ends inside an epoch closes that epoch early, evaluation included. A
  // cancel that came after the last step's check still ends the run cancelled.
  if (summary.status == RunStatus::Running && control.cancel.load()) {
    summary.status = RunStatus::Cancelled;
    summary.message = control.cancel_message(summary.steps);
  }
  if (summary.status == RunStatus::Running) summary.status = RunStatus::Finished;
  if (summary.status != RunStatus::Failed) {
    summary.divergence = divergence.verdict(optimizer.lr);
    summary.diverged = !summary.divergence.empty();
  }
  summary.train_seconds = train_s();
  summary.wall_seconds = wall_s();
  return summary;
}

}  // namespace gpulab
