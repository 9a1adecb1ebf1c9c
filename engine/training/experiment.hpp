// An experiment as the window edits it and saves it: the model plus how to train it. On disk it
// is a model config (what `gpulab-cli train --model FILE.json` reads) with a "train" object beside
// the layers, in the same form as the "config" of a run.json, so a run can be reopened as a setup.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>

#include "engine/backend/backend.hpp"
#include "engine/base/output_kind.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {

struct Experiment {
  ModelConfig model;
  TrainOptions train;
  BackendOptions backend;
};

// The training settings as run.json's "config" holds them.
nlohmann::json train_config_to_json(const TrainOptions& train, const BackendOptions& backend);
// Applies the fields present in `j` (a run.json "config" or an experiment's "train") over
// `train` and `backend`; throws ConfigError naming the field that does not fit.
void train_config_from_json(const nlohmann::json& j, TrainOptions& train, BackendOptions& backend);

// Throws ConfigError when a setup's "train" object `j` holds a key that is no setting, naming the
// known ones and the one it likely meant ("learning_rate": did you mean "lr"?), where it would
// otherwise train at the default without a word. A run.json's "config" holds more ("ranks") and
// is read without it.
void check_train_keys(const nlohmann::json& j);

nlohmann::json experiment_to_json(const Experiment& experiment);
Experiment experiment_from_json(const nlohmann::json& j);  // throws ConfigError

// A setup or model config (a JSON object with "layers"): what Save setup may replace.
const OutputKind& setup_kind();

// Files: written atomically; reading names the file in every error.
void save_experiment(const std::filesystem::path& path, const Experiment& experiment);
Experiment load_experiment(const std::filesystem::path& path);
// A setup file's text, read as every setup is (the CLI's --setup, the window's): a regular file
// of at most 16 MiB, never a FIFO or device waited on, without a byte order mark; throws
// ConfigError naming the file and what is wrong.
std::string read_setup_file(const std::filesystem::path& path);

}  // namespace gpulab
