// Checkpoints as safetensors: 8-byte little-endian header length, a JSON header, raw
// little-endian float32 data, with PyTorch's names and layouts and the model config in
// __metadata__, so a file written here loads in PyTorch unchanged and the other way round.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/base/output_kind.hpp"
#include "engine/model/model_config.hpp"

namespace gpulab {

struct Checkpoint {
  struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float> data;
  };
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
  // The model config stored by gpulab (metadata "gpulab.model"), when present.
  std::optional<ModelConfig> model() const;
};

// A checkpoint gpulab wrote (its header's __metadata__ holds "gpulab.model"): what --save and the
// window's weights may replace.
const OutputKind& checkpoint_kind();

// Writes atomically (temporary file, then rename).
void save_checkpoint(const std::filesystem::path& path, const ModelPlan& plan,
                     const ModelConfig& config, std::span<const float> params);

// Reads any safetensors file of F32 tensors (F64/F16/BF16 are converted); throws CheckpointError
// naming the file and what is wrong. Only a regular file is read (a FIFO or a device is refused
// without waiting on it), and its header is checked against the file's size and the memory free
// before the data is read.
Checkpoint load_checkpoint(const std::filesystem::path& path);

// Throws CheckpointError listing every missing, unexpected or mis-shaped tensor on one line
// ("W does not fit the model: missing fc1.weight [256, 784]; unexpected ..."); nothing is
// allocated, so a model its metadata declares far larger than the file is refused at once. Tensors
// that fit are refused next for a NaN or an infinite value, naming the first such tensor.
void check_checkpoint_fits(const Checkpoint& checkpoint, const ModelPlan& plan,
                           const std::string& source_name);

// Copies the checkpoint's tensors into params; throws CheckpointError listing every missing,
// unexpected or mis-shaped tensor.
void apply_checkpoint(const Checkpoint& checkpoint, const ModelPlan& plan, std::span<float> params,
                      const std::string& source_name);

}  // namespace gpulab
