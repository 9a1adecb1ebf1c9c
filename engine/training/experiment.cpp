// Experiments to and from JSON.
#include "engine/training/experiment.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/text.hpp"
#include "engine/training/setting_bounds.hpp"
#include "io/input_file.hpp"

namespace gpulab {
using json = nlohmann::json;

namespace {

// Reads j[key] into `out` when present, with a message naming the field when its type is wrong
// or, for a setting with a bound, its value is out of range (never wrapped or truncated: a batch
// of 4294967360 once became 64).
template <typename T>
void read_field(const json& j, const char* key, T& out) {
  if (!j.contains(key) || j[key].is_null()) return;
  if (const SettingBound* setting = find_setting_bound(key))
    if (const std::string problem = setting->bound.problem(j[key]); !problem.empty())
      throw ConfigError(std::string("\"") + key + "\": " + problem);
  try {
    out = j[key].get<T>();
  } catch (const json::exception&) {
    throw ConfigError(std::string("\"") + key + "\" has the wrong type (" + j[key].dump() + ")");
  }
}

}  // namespace

json train_config_to_json(const TrainOptions& o, const BackendOptions& b) {
  json j = {{"epochs", o.epochs},
            {"max_steps", o.max_steps},
            {"batch", o.batch},
            {"optimizer", optimizer_name(o.optimizer.kind)},
            {"lr", o.optimizer.lr},
            {"momentum", o.optimizer.momentum},
            {"weight_decay", o.optimizer.weight_decay},
            {"schedule", schedule_name(o.schedule.kind)},
            {"gamma", o.schedule.gamma},
            {"seed", o.seed},
            {"shuffle", o.shuffle},
            {"eval_every", o.eval_every},
            {"target_accuracy", o.target_accuracy},
            {"stop_at_accuracy", o.stop_at_accuracy},
            {"device", b.device},
            {"threads", b.threads},
            {"precision", precision_name(b.precision)},
            {"cuda_graph", b.cuda_graph},
            {"replicas", b.replicas},
            {"sync", sync_name(b.sync)},
            {"bucket_mb", b.bucket_mb},
            {"collective_timeout_s", b.collective_timeout_s},
            {"dist", dist_name(b.dist)}};
  // Only when chosen, so setups and records of the usual path stay as they were.
  if (b.conv != ConvAlgorithm::Im2col) j["conv"] = conv_name(b.conv);
  if (b.data_on != DataOn::Auto) j["data_on"] = data_on_name(b.data_on);
  if (b.preprocess != Preprocess::None) j["preprocess"] = preprocess_name(b.preprocess);
  for (const PlannedLr& c : o.lr_changes)
    j["lr_changes"].push_back({{"step", c.step}, {"lr", c.lr}});
  return j;
}

void train_config_from_json(const json& j, TrainOptions& o, BackendOptions& b) {
  if (!j.is_object()) throw ConfigError("the training settings must be a JSON object");
  read_field(j, "epochs", o.epochs);
  read_field(j, "max_steps", o.max_steps);
  read_field(j, "batch", o.batch);
  std::string optimizer = optimizer_name(o.optimizer.kind),
              schedule = schedule_name(o.schedule.kind);
  read_field(j, "optimizer", optimizer);
  o.optimizer.kind = parse_optimizer(optimizer);
  read_field(j, "lr", o.optimizer.lr);
  read_field(j, "momentum", o.optimizer.momentum);
  read_field(j, "weight_decay", o.optimizer.weight_decay);
  read_field(j, "schedule", schedule);
  o.schedule.kind = parse_schedule(schedule);
  read_field(j, "gamma", o.schedule.gamma);
  read_field(j, "seed", o.seed);
  read_field(j, "shuffle", o.shuffle);
  read_field(j, "eval_every", o.eval_every);
  read_field(j, "target_accuracy", o.target_accuracy);
  read_field(j, "stop_at_accuracy", o.stop_at_accuracy);
  read_field(j, "device", b.device);
  read_field(j, "threads", b.threads);
  std::string precision = precision_name(b.precision);
  read_field(j, "precision", precision);
  b.precision = parse_precision(precision);
  read_field(j, "cuda_graph", b.cuda_graph);
  std::string conv = conv_name(b.conv);  // absent from older records: im2col, the only path then
  read_field(j, "conv", conv);
  b.conv = parse_conv(conv);
  std::string data_on = data_on_name(b.data_on);
  read_field(j, "data_on", data_on);
  b.data_on = parse_data_on(data_on);
  std::string preprocess = preprocess_name(b.preprocess);
  read_field(j, "preprocess", preprocess);
  b.preprocess = parse_preprocess(preprocess);
  read_field(j, "replicas", b.replicas);
  std::string sync = sync_name(b.sync), dist = dist_name(b.dist);
  read_field(j, "sync", sync);
  b.sync = parse_sync(sync);
  read_field(j, "bucket_mb", b.bucket_mb);
  read_field(j, "collective_timeout_s", b.collective_timeout_s);
  read_field(j, "dist", dist);
  b.dist = parse_dist(dist);
  if (j.contains("lr_changes")) {
    const json& list = j["lr_changes"];
    if (!list.is_array())
      throw ConfigError("\"lr_changes\" must be a list of {\"step\", \"lr\"} (" + list.dump() +
                        ")");
    o.lr_changes.clear();
    for (const json& entry : list) {
      PlannedLr c;
      if (!entry.is_object() || !entry.contains("step") || !entry.contains("lr"))
        throw ConfigError("\"lr_changes\": each entry is {\"step\", \"lr\"}, not " + entry.dump());
      read_field(entry, "step", c.step);
      read_field(entry, "lr", c.lr);
      o.lr_changes.push_back(c);
    }
  }
}

void check_train_keys(const json& j) {
  if (!j.is_object()) return;  // train_config_from_json says what it must be
  std::vector<std::string> known;
  const json written = train_config_to_json({}, {});  // every setting a setup holds
  for (const auto& [key, value] : written.items()) known.push_back(key);
  for (const char* written_when_set : {"conv", "data_on", "preprocess", "lr_changes"})
    if (std::find(known.begin(), known.end(), written_when_set) == known.end())
      known.push_back(written_when_set);
  std::sort(known.begin(), known.end());
  for (const auto& [key, value] : j.items())
    if (const std::string problem = unknown_key_problem(key, known); !problem.empty())
      throw ConfigError(problem);
}

json experiment_to_json(const Experiment& e) {
  json j = model_to_json(e.model);
  j["train"] = train_config_to_json(e.train, e.backend);
  return j;
}

Experiment experiment_from_json(const json& j) {
  Experiment e;
  e.model = model_from_json(j);
  if (j.contains("train")) {
    try {
      check_train_keys(j["train"]);  // a setup's settings: a misspelt one would silently not apply
    } catch (const ConfigError& error) {
      throw ConfigError(std::string("\"train\": ") + error.what());
    }
    train_config_from_json(j["train"], e.train, e.backend);
  }
  return e;
}

const OutputKind& setup_kind() {
  static const OutputKind kind = json_kind("a setup", [](const json& j) {
    return j.is_object() && j.contains("layers") && j["layers"].is_array();
  });
  return kind;
}

void save_experiment(const std::filesystem::path& path, const Experiment& experiment) {
  write_file_atomically(path, experiment_to_json(experiment).dump(2) + "\n");
}

std::string read_setup_file(const std::filesystem::path& path) {
  // Through the one reader of input files: a FIFO or device is refused, never waited on.
  constexpr std::uintmax_t kMaxSetupBytes = std::uintmax_t(16) << 20;
  std::string text;
  try {
    if (!read_input_file(path, kMaxSetupBytes, "a setup file", &text))
      throw ConfigError(path.string() + ": cannot be opened: no such file; check the path");
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  if (const std::string bom = bom_problem(text); !bom.empty())  // else "not valid JSON"
    throw ConfigError(path.string() + ": " + bom);
  return text;
}

Experiment load_experiment(const std::filesystem::path& path) {
  const std::string text = read_setup_file(path);
  try {
    return experiment_from_json(json::parse(text));
  } catch (const json::exception& e) {
    throw ConfigError(path.string() + ": not valid JSON: " + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace gpulab
