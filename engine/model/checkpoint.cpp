// safetensors reading and writing.
#include "engine/model/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "io/input_file.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit is 100 MB
// Far beyond any model gpulab builds (the largest layer holds 2^31 values); the memory free now
// is checked too, before anything is read.
constexpr uint64_t kMaxCheckpointBytes = uint64_t(16) << 30;
// A model has at most 1,000 layers, two tensors each; a header of 300,000 tensors stopped the
// window for minutes. Counted while the header is parsed, so such a header is refused at its
// 10,001st name.
constexpr size_t kMaxTensors = 10000;
// A safetensors header is three levels deep (tensor, its fields, a shape); a header nested a
// million deep is refused at its ninth level instead of being built.
constexpr int kMaxHeaderDepth = 8;
// Problems listed in one message; the rest are counted.
constexpr size_t kMaxProblemsNamed = 12;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal
      int e = -1;
      uint32_t m = mantissa;
      do { ++e; m <<= 1; } while (!(m & 0x400));
      bits = sign | ((127 - 15 - e) << 23) | ((m & 0x3ff) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace

std::optional<ModelConfig> Checkpoint::model() const {
  auto found = metadata.find("gpulab.model");
  if (found == metadata.end()) return std::nullopt;
  try {
    return model_from_json(json::parse(found->second));
  } catch (const json::exception& e) {
    throw CheckpointError(std::string("the model config in the checkpoint is not valid JSON: ") + e.what());
  }
}

const OutputKind& checkpoint_kind() {
  static const OutputKind kind{
      "a checkpoint", [](const fs::path& path) {
        const std::string start = file_start(path, 8);
        if (start.size() < 8) return false;
        uint64_t header_size = 0;
        std::memcpy(&header_size, start.data(), 8);
        std::error_code error;
        if (header_size > kMaxHeaderBytes || header_size + 8 > fs::file_size(path, error))
          return false;
        const json header =
            json::parse(file_start(path, 8 + header_size).substr(8), nullptr, false);
        if (!header.is_object()) return false;
        const auto metadata = header.find("__metadata__");
        return metadata != header.end() && metadata->is_object() &&
               metadata->contains("gpulab.model") && (*metadata)["gpulab.model"].is_string();
      }};
  return kind;
}

void save_checkpoint(const fs::path& path, const ModelPlan& plan, const ModelConfig& config,
                     std::span<const float> params) {
  json header;
  header["__metadata__"] = {{"format", "pt"}, {"gpulab.model", model_to_json(config).dump()}};
  uint64_t offset = 0;
  for (const auto& p : plan.parameters) {
    const uint64_t bytes = static_cast<uint64_t>(p.numel()) * sizeof(float);
    header[p.name] = {{"dtype", "F32"}, {"shape", p.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  std::string file;
  const uint64_t header_size = header_text.size();
  file.append(reinterpret_cast<const char*>(&header_size), sizeof header_size);
  file += header_text;
  for (const auto& p : plan.parameters)
    file.append(reinterpret_cast<const char*>(params.data() + p.offset), p.numel() * sizeof(float));
  try {
    write_file_atomically(path, file);
  } catch (const RecordError& e) {
    throw CheckpointError(e.what());
  }
}

namespace {

// Shapes and offsets in whole numbers only: 2.5 was read as 2, and [0.0, 40.0] as offsets.
void check_whole_numbers(const std::string& name, const json& header) {
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__" || !value.is_object()) continue;
    for (const char* field : {"shape", "data_offsets"}) {
      const auto list = value.find(field);
      if (list == value.end()) continue;  // said by parse_tensors
      if (!list->is_array() || !std::all_of(list->begin(), list->end(),
                                            [](const json& n) { return n.is_number_integer(); }))
        throw CheckpointError(name + ": tensor " + key + " has \"" + field + "\" " +
                              list->dump().substr(0, 200) +
                              ", which is not a list of whole numbers; not a checkpoint gpulab "
                              "or PyTorch writes");
    }
  }
}

// The tensors a checked header declares, from `bytes`, the data after the header.
Checkpoint parse_tensors(const std::string& name, const json& header, const std::string& bytes) {
  const size_t data_size = bytes.size();
  Checkpoint checkpoint;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (value.is_object())
        for (const auto& [mkey, mvalue] : value.items())
          if (mvalue.is_string()) checkpoint.metadata[mkey] = mvalue.get<std::string>();
      continue;
    }
    try {
      const std::string dtype = value.at("dtype").get<std::string>();
      const auto shape = value.at("shape").get<std::vector<int64_t>>();
      const auto offsets = value.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size)
        throw CheckpointError(name + ": tensor " + key + " has data offsets outside the file (truncated?)");
      uint64_t count = 1;
      for (int64_t d : shape) {
        if (d < 0 || (d > 0 && count > (uint64_t(1) << 40) / uint64_t(d)))
          throw CheckpointError(name + ": tensor " + key + " has an impossible shape " + shape_text(shape));
        count *= uint64_t(d);
      }
      const size_t element = dtype == "F32" ? 4 : dtype == "F64" ? 8 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
      if (element == 0)
        throw CheckpointError(name + ": tensor " + key + " has dtype " + dtype +
                              "; only F32, F64, F16 and BF16 are supported");
      if (offsets[1] - offsets[0] != count * element)
        throw CheckpointError(name + ": tensor " + key + " has " + std::to_string(offsets[1] - offsets[0]) +
                              " bytes but its shape " + shape_text(shape) + " needs " +
                              std::to_string(count * element));
      Checkpoint::Tensor tensor;
      tensor.shape = shape;
      tensor.data.resize(count);
      const char* source = bytes.data() + offsets[0];
      for (uint64_t i = 0; i < count; ++i) {
        if (element == 4) {
          std::memcpy(&tensor.data[i], source + 4 * i, 4);
        } else if (element == 8) {
          double v;
          std::memcpy(&v, source + 8 * i, 8);
          tensor.data[i] = static_cast<float>(v);
        } else {
          uint16_t h;
          std::memcpy(&h, source + 2 * i, 2);
          tensor.data[i] = dtype == "BF16" ? std::bit_cast<float>(uint32_t(h) << 16) : half_to_float(h);
        }
      }
      checkpoint.tensors[key] = std::move(tensor);
    } catch (const json::exception& e) {
      throw CheckpointError(name + ": tensor " + key + " has a malformed header entry: " + e.what());
    }
  }
  return checkpoint;
}

}  // namespace

Checkpoint load_checkpoint(const fs::path& path) {
  const std::string name = path.string();
  try {
    // The header first: what it declares is checked against the file's size before the data is
    // read, so a device, a FIFO or a 3 GiB file of zeros is refused without reading it.
    const InputFile file(path, kMaxCheckpointBytes, "a checkpoint");
    if (file.size() < 8) throw CheckpointError(name + ": too short to be a safetensors file");
    uint64_t header_size = 0;
    std::memcpy(&header_size, file.read(0, 8).data(), 8);
    if (header_size > kMaxHeaderBytes || header_size > file.size() - 8)
      throw CheckpointError(name + ": header length " + std::to_string(header_size) +
                            " does not fit the file of " + std::to_string(file.size()) +
                            " bytes; not a safetensors file or truncated");
    json header;
    // Two tensors of one name: JSON keeps the last, and the first would silently be lost. The
    // count and the depth are bounded as the header is read, before it is built.
    std::set<std::string> names;
    const json::parser_callback_t bounded = [&](int depth, json::parse_event_t event,
                                                json& parsed) {
      if (depth > kMaxHeaderDepth)
        throw CheckpointError(name + ": the header is nested more than " +
                              std::to_string(kMaxHeaderDepth) +
                              " levels deep; a safetensors header is three");
      if (depth == 1 && event == json::parse_event_t::key) {
        if (!names.insert(parsed).second)
          throw CheckpointError(name + ": the header names the tensor " +
                                parsed.get<std::string>() +
                                " twice; a checkpoint holds each tensor once");
        if (names.size() > kMaxTensors + 1)  // the tensors and __metadata__
          throw CheckpointError(name + ": the header names more than " +
                                std::to_string(kMaxTensors) +
                                " tensors; a model gpulab builds has at most 2,000");
      }
      return true;
    };
    try {
      header = json::parse(file.read(8, header_size), bounded);
    } catch (const json::exception& e) {
      throw CheckpointError(name + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw CheckpointError(name + ": header is not a JSON object");
    check_whole_numbers(name, header);
    const uint64_t data_start = 8 + header_size;
    const uint64_t data_size = file.size() - data_start;
    // safetensors' own rule: the tensors cover the data exactly, so a file with more (or less)
    // than its header declares is damaged, and its data is never read.
    uint64_t declared = 0;
    for (const auto& [key, value] : header.items())
      if (key != "__metadata__" && value.is_object())
        if (auto offsets = value.find("data_offsets");
            offsets != value.end() && offsets->is_array() && offsets->size() == 2 &&
            (*offsets)[1].is_number_unsigned())
          declared = std::max(declared, (*offsets)[1].get<uint64_t>());
    if (declared < data_size)
      throw CheckpointError(name + ": its header declares " + size_text(declared) +
                            " of tensor data but the file holds " + size_text(data_size) +
                            " after the header; not a safetensors file, or damaged");
    return parse_tensors(name, header, file.read(data_start, data_size));
  } catch (const InputFileError& e) {
    throw CheckpointError(e.what());
  }
}

void check_checkpoint_fits(const Checkpoint& checkpoint, const ModelPlan& plan,
                           const std::string& source_name) {
  std::vector<std::string> problems;
  for (const auto& p : plan.parameters) {
    auto found = checkpoint.tensors.find(p.name);
    if (found == checkpoint.tensors.end()) {
      problems.push_back("missing " + p.name + " " + shape_text(p.shape));
    } else if (found->second.shape != p.shape) {
      problems.push_back(p.name + " has shape " + shape_text(found->second.shape) +
                         " but the model needs " + shape_text(p.shape));
    }
  }
  for (const auto& [tensor_name, tensor] : checkpoint.tensors) {
    bool known = false;
    for (const auto& p : plan.parameters) known = known || p.name == tensor_name;
    if (!known) problems.push_back("unexpected " + tensor_name + " " + shape_text(tensor.shape));
  }
  if (!problems.empty()) {
    // One line, so the command line and the window show it as it is.
    std::string message = source_name + " does not fit the model:";
    for (size_t i = 0; i < problems.size() && i < kMaxProblemsNamed; ++i)
      message += (i ? "; " : " ") + problems[i];
    if (problems.size() > kMaxProblemsNamed)
      message += "; and " + std::to_string(problems.size() - kMaxProblemsNamed) + " more";
    throw CheckpointError(message);
  }
  // Weights a diverged run saved: predict said "p nan%", eval "loss nan", and a run started from
  // them blamed its learning rate.
  const auto finite = [](float v) { return std::isfinite(v); };
  for (const auto& p : plan.parameters) {
    const std::vector<float>& data = checkpoint.tensors.at(p.name).data;
    const auto bad = std::find_if_not(data.begin(), data.end(), finite);
    if (bad == data.end()) continue;
    throw CheckpointError(
        source_name + ": " + p.name + " holds " + (std::isnan(*bad) ? "NaN" : "an infinite value") +
        " (value " + std::to_string(bad - data.begin() + 1) + " of " + std::to_string(data.size()) +
        "); these weights are broken: train again, or give another checkpoint");
  }
}

void apply_checkpoint(const Checkpoint& checkpoint, const ModelPlan& plan, std::span<float> params,
                      const std::string& source_name) {
  check_checkpoint_fits(checkpoint, plan, source_name);
  for (const auto& p : plan.parameters) {
    const auto& data = checkpoint.tensors.at(p.name).data;
    std::copy(data.begin(), data.end(), params.begin() + p.offset);
  }
}

}  // namespace gpulab
