// Run folders made without training, for the window's tests: a finished CPU run of LeNet-5 with
// its steps, test evaluations, device samples and, for a data-parallel run, its replicas' times.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/model_config.hpp"
#include "engine/records/run_names.hpp"
#include "engine/records/run_record.hpp"
#include "engine/telemetry/telemetry.hpp"

namespace gpulab::test {

// `steps` steps of `step_ms`, a test evaluation every 20 steps climbing to 99 %, a CPU sample
// every 0.1 s (with other programs' share beside it); with `replicas` > 1, each step split across
// the replicas as compute, communication and waiting; `lr_changes`: (step, learning rate) changed
// while it trained, from that step on.
inline std::filesystem::path write_run(const std::filesystem::path& dir, int threads, int batch,
                                       int steps, double step_ms, const std::string& created,
                                       int replicas = 1,
                                       std::vector<std::pair<int, double>> lr_changes = {}) {
  nlohmann::json info = {
      {"created", created},
      {"model", model_to_json(preset("lenet5"))},
      {"config",
       {{"device", "cpu"},
        {"threads", threads},
        {"batch", batch},
        {"optimizer", "adam"},
        {"lr", 0.001},
        {"precision", "fp32"}}},
      {"devices", {{{"id", "cpu"}, {"description", "CPU"}, {"cores", 8}}}},
      {"plan", {{"epochs", 1}, {"steps_per_epoch", steps}, {"total_steps", steps}}}};
  if (replicas > 1) info["config"]["replicas"] = replicas;
  info["name"] = auto_run_name(info);
  RunRecorder recorder(dir, info);
  RunSummary summary;
  double time_s = 0, evaluating_s = 0;
  double lr = 0.001;
  for (int s = 1; s <= steps; ++s) {
    for (const auto& [step, changed] : lr_changes)
      if (step == s) {
        lr = changed;
        recorder.on_lr_change({s, 1, time_s, lr});
      }
    StepMetrics m;
    m.lr = float(lr);
    m.step = s;
    m.epoch = 1;
    time_s += step_ms / 1000;
    m.time_s = time_s;
    m.loss = 2.3 / s;
    m.accuracy = 0.5;
    m.step_ms = step_ms;
    m.images_per_second = batch / (step_ms / 1000);
    m.times = {0.1 * step_ms, 0, 0.3 * step_ms, 0.5 * step_ms, 0, 0.1 * step_ms};
    for (int r = 0; r < replicas && replicas > 1; ++r)
      m.replicas.push_back({r, (0.6 + 0.05 * r) * step_ms, 0.15 * step_ms,
                            (0.05 * (replicas - 1 - r)) * step_ms, 0.05 * step_ms});
    recorder.on_step(m);
    if (s % 20 == 0) {
      time_s += 0.3;  // the evaluation
      evaluating_s += 0.3;
      recorder.on_eval({s, 1, time_s, Split::Test, 0.1, std::min(0.99, 0.9 + 0.02 * s / 20),
                        time_s - evaluating_s});
    }
    for (double t = time_s - step_ms / 1000; t < time_s; t += 0.1) {
      DeviceSample sample;
      sample.device = "cpu";
      sample.time_s = t;
      sample.util_percent = 50 + threads;
      sample.mem_used_bytes = 1 << 28;
      recorder.on_sample(sample);
      sample.device = kOtherProgramsDevice;
      sample.util_percent = 3;
      recorder.on_sample(sample);
    }
  }
  summary.status = RunStatus::Finished;
  summary.steps = steps;
  summary.images = int64_t(steps) * batch;
  summary.train_seconds = time_s - evaluating_s;
  summary.wall_seconds = time_s;
  recorder.finish(summary);
  return dir;
}

}  // namespace gpulab::test
