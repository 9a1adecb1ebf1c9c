// Reading a run folder's files as untrusted input.
#include "engine/records/record_reader.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "engine/base/errors.hpp"
#include "engine/training/setting_bounds.hpp"
#include "engine/training/trainer.hpp"
#include "io/input_file.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The fields of run.json, as RunRecorder and execute_run write them. "a[]" is every element of
// the list a; a container comes before what it holds, so its own type is checked first.
enum class Kind { Text, Number, NumberOrNull, Whole, WholeOrNull, Flag, Object, List };
struct Field {
  const char* path;
  Kind kind;
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
};
constexpr int64_t kInt = std::numeric_limits<int>::max();
constexpr int64_t kAny = std::numeric_limits<int64_t>::max();

// A whole-number setting of "config", in the range every entrance checks it against
// (engine/training/setting_bounds.hpp): what `train` takes, this reads back.
Field setting(const char* path) {
  const Bound& bound =
      setting_bound(std::string_view(path).substr(std::string_view(path).find('.') + 1));
  return {path, Kind::Whole, bound.least, bound.most};
}

const std::vector<Field>& run_fields() {
  static const std::vector<Field> fields = {
      {"format", Kind::Text},
      {"status", Kind::Text},
      {"name", Kind::Text},
      {"message", Kind::Text},
      {"created", Kind::Text},
      {"model", Kind::Object},
      {"model.name", Kind::Text},
      {"model.input", Kind::List},
      {"model.input[]", Kind::Whole, 0, kInt},
      {"model.classes", Kind::Whole, 0, kInt},
      {"model.layers", Kind::List},
      {"model.layers[]", Kind::Object},
      {"model.layers[].type", Kind::Text},
      {"model.layers[].name", Kind::Text},
      {"model.layers[].out_channels", Kind::Whole, 0, kInt},
      {"model.layers[].kernel", Kind::Whole, 0, kInt},
      {"model.layers[].stride", Kind::Whole, 0, kInt},
      {"model.layers[].padding", Kind::Whole, 0, kInt},
      {"model.layers[].out_features", Kind::Whole, 0, kInt},
      {"model.layers[].bias", Kind::Flag},
      {"model.layers[].p", Kind::Number},
      {"config", Kind::Object},
      setting("config.epochs"),
      setting("config.max_steps"),
      setting("config.batch"),
      {"config.optimizer", Kind::Text},
      {"config.lr", Kind::Number},
      {"config.momentum", Kind::Number},
      {"config.weight_decay", Kind::Number},
      {"config.schedule", Kind::Text},
      {"config.gamma", Kind::Number},
      setting("config.seed"),
      {"config.shuffle", Kind::Flag},
      setting("config.eval_every"),
      {"config.target_accuracy", Kind::Number},
      {"config.device", Kind::Text},
      setting("config.threads"),
      {"config.precision", Kind::Text},
      {"config.cuda_graph", Kind::Flag},
      {"config.conv", Kind::Text},        // absent from records of the im2col path (and older ones)
      {"config.preprocess", Kind::Text},  // absent from records of the usual path
      // A replica (and an MPI rank) takes at least one image of a batch.
      setting("config.replicas"),
      {"config.sync", Kind::Text},
      {"config.bucket_mb", Kind::Number},
      {"config.collective_timeout_s", Kind::Number},
      {"config.dist", Kind::Text},
      setting("config.validation"),
      {"config.ranks", Kind::Whole, 1, kMaxBatch},
      {"versions", Kind::Object},
      {"versions.gpulab", Kind::Text},
      {"versions.blas", Kind::Text},
      {"versions.compiler", Kind::Text},
      {"process", Kind::Object},
      {"process.host", Kind::Text},
      {"process.pid", Kind::Whole, 1, kInt},
      {"not_for_comparison", Kind::Text},
      {"shared_hardware", Kind::Object},
      {"shared_hardware.concurrent_with", Kind::List},
      {"shared_hardware.concurrent_with[]", Kind::Text},
      {"shared_hardware.note", Kind::Text},
      {"parameters", Kind::Whole, 0, kAny},
      {"transport", Kind::Object},
      {"transport.reducer", Kind::Text},
      {"transport.reason", Kind::Text},
      {"devices", Kind::List},
      {"devices[]", Kind::Object},
      {"devices[].id", Kind::Text},
      {"devices[].description", Kind::Text},
      {"devices[].name", Kind::Text},
      {"devices[].cores", Kind::Whole, 0, kInt},
      {"devices[].simd", Kind::Text},
      {"devices[].memory_bytes", Kind::Whole, 0, kAny},
      {"devices[].compute_capability", Kind::Text},
      {"devices[].driver", Kind::Text},
      {"devices[].cuda_runtime", Kind::Text},
      {"devices[].pci_bus_id", Kind::Text},
      {"devices[].rank", Kind::Whole, 0, kMaxBatch},
      {"devices[].host", Kind::Text},
      {"data", Kind::Object},
      {"data.dir", Kind::Text},
      {"data.train_images", Kind::Whole, 0, kAny},
      {"data.test_images", Kind::Whole, 0, kAny},
      {"plan", Kind::Object},
      {"plan.epochs", Kind::Whole, 0, kInt},
      {"plan.steps_per_epoch", Kind::Whole, 0, kMaxRecordStep},
      {"plan.total_steps", Kind::Whole, 0, kMaxRecordStep},
      {"telemetry_note", Kind::Text},
      {"cuda_graphs", Kind::Text},  // "on", "off", "off after capture failed: <why>"
      {"lr_changes", Kind::List},
      {"lr_changes[]", Kind::Object},
      {"lr_changes[].step", Kind::Whole, 0, kMaxRecordStep},
      {"lr_changes[].epoch", Kind::Whole, 0, kInt},
      {"lr_changes[].time_s", Kind::Number},
      {"lr_changes[].lr", Kind::Number},
      {"weights", Kind::Text},
      {"reduction", Kind::Object},
      {"reduction.reducer", Kind::Text},
      {"reduction.replicas", Kind::Whole, 1, kMaxBatch},
      {"reduction.bucket_mean_ms", Kind::List},
      {"reduction.bucket_mean_ms[]", Kind::NumberOrNull},
      {"outside_load", Kind::Object},
      {"outside_load.mean_percent", Kind::Number},
      {"outside_load.max_percent", Kind::Number},
      {"outside_load.mean_cores", Kind::Number},
      {"outside_load.cores", Kind::Whole, 1, kInt},
      {"outside_load.samples", Kind::Whole, 0, kAny},
      {"outside_load.under_load", Kind::Flag},
      // The summary's numbers are null where a value was not measured (NaN).
      {"summary", Kind::Object},
      {"summary.steps", Kind::Whole, 0, kMaxRecordStep},
      {"summary.images", Kind::Whole, 0, kAny},
      {"summary.train_seconds", Kind::NumberOrNull},
      {"summary.wall_seconds", Kind::NumberOrNull},
      {"summary.images_per_second", Kind::NumberOrNull},
      {"summary.test_loss", Kind::NumberOrNull},
      {"summary.test_accuracy", Kind::NumberOrNull},
      {"summary.target_accuracy", Kind::NumberOrNull},
      {"summary.time_to_target_s", Kind::NumberOrNull},
      {"summary.step_to_target", Kind::WholeOrNull, 0, kMaxRecordStep},
      {"summary.diverged", Kind::Flag},
      {"summary.divergence", Kind::Text},
      {"summary.epochs", Kind::List},
      {"summary.epochs[]", Kind::Object},
      {"summary.epochs[].epoch", Kind::Whole, 0, kInt},
      {"summary.epochs[].seconds", Kind::NumberOrNull},
      {"summary.epochs[].images_per_second", Kind::NumberOrNull},
      {"summary.epochs[].train_loss", Kind::NumberOrNull},
      {"summary.epochs[].test_loss", Kind::NumberOrNull},
      {"summary.epochs[].test_accuracy", Kind::NumberOrNull},
  };
  return fields;
}

const char* expected_text(Kind kind) {
  switch (kind) {
    case Kind::Text:
      return "a string";
    case Kind::Number:
      return "a number";
    case Kind::NumberOrNull:
      return "a number or null";
    case Kind::Whole:
      return "a whole number";
    case Kind::WholeOrNull:
      return "a whole number or null";
    case Kind::Flag:
      return "true or false";
    case Kind::Object:
      return "an object";
    case Kind::List:
      return "a list";
  }
  return "?";
}

const char* found_text(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "true or false";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

bool has_kind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::Text:
      return value.is_string();
    case Kind::Number:
      return value.is_number();
    case Kind::NumberOrNull:
      return value.is_number() || value.is_null();
    case Kind::Whole:
    case Kind::WholeOrNull:
      if (value.is_null()) return kind == Kind::WholeOrNull;
      if (value.is_number_integer()) return true;
      return value.is_number_float() && std::isfinite(value.get<double>()) &&
             std::floor(value.get<double>()) == value.get<double>();
    case Kind::Flag:
      return value.is_boolean();
    case Kind::Object:
      return value.is_object();
    case Kind::List:
      return value.is_array();
  }
  return false;
}

[[noreturn]] void field_error(const fs::path& file, const std::string& name,
                              const std::string& what) {
  throw RecordError(file.string() + ": field \"" + name + "\": " + what);
}

void check_value(const json& value, const Field& field, const std::string& name,
                 const fs::path& file) {
  if (!has_kind(value, field.kind))
    field_error(
        file, name,
        std::string("expected ") + expected_text(field.kind) + ", found " + found_text(value));
  if ((field.kind != Kind::Whole && field.kind != Kind::WholeOrNull) || value.is_null()) return;
  // A parsed number that is not negative is unsigned: 0 is still below a least of 1.
  const bool below = value.is_number_unsigned()
                         ? field.min > 0 && value.get<uint64_t>() < uint64_t(field.min)
                     : value.is_number_integer() ? value.get<int64_t>() < field.min
                                                 : value.get<double>() < double(field.min);
  const bool above = value.is_number_unsigned()  ? value.get<uint64_t>() > uint64_t(field.max)
                     : value.is_number_integer() ? value.get<int64_t>() > field.max
                                                 : value.get<double>() > double(field.max);
  if (below || above)
    field_error(file, name,
                value.dump() + " is out of range (a whole number from " +
                    std::to_string(field.min) + " to " + std::to_string(field.max) + ")");
}

// Visits every value at `path` (split at dots, "[]" for each element) below `node`.
void check_path(const json& node, const std::vector<std::string>& parts, size_t at,
                const std::string& name, const Field& field, const fs::path& file) {
  std::string key = parts[at];
  const bool each = key.size() > 2 && key.compare(key.size() - 2, 2, "[]") == 0;
  if (each) key.resize(key.size() - 2);
  if (!node.is_object()) return;  // its own rule has said so
  const auto found = node.find(key);
  if (found == node.end()) return;  // every field may be missing (older records)
  const std::string here = name.empty() ? key : name + "." + key;
  auto next = [&](const json& value, const std::string& value_name) {
    if (at + 1 == parts.size())
      check_value(value, field, value_name, file);
    else
      check_path(value, parts, at + 1, value_name, field, file);
  };
  if (!each) return next(*found, here);
  if (!found->is_array()) return;
  for (size_t i = 0; i < found->size(); ++i)
    next((*found)[i], here + "[" + std::to_string(i) + "]");
}

}  // namespace

bool read_record_file(const fs::path& path, std::uintmax_t limit, std::string* text) {
  try {
    return read_input_file(path, limit, "a run record's file", text);
  } catch (const InputFileError& e) {
    throw RecordError(e.what());
  }
}

void check_run_info(const json& info, const fs::path& file) {
  if (!info.is_object())
    throw RecordError(file.string() + ": expected a JSON object, found " + found_text(info));
  for (const Field& field : run_fields()) {
    std::vector<std::string> parts;
    for (std::string rest = field.path;;) {
      const size_t dot = rest.find('.');
      parts.push_back(rest.substr(0, dot));
      if (dot == std::string::npos) break;
      rest = rest.substr(dot + 1);
    }
    check_path(info, parts, 0, "", field, file);
  }
}

int64_t record_step(double value, const std::string& text) {
  if (!(value >= 0 && value <= double(kMaxRecordStep)) || std::floor(value) != value)
    throw std::out_of_range("step " + text +
                            " is not a step a run can reach (a whole number from 0 to " +
                            std::to_string(kMaxRecordStep) + ")");
  return int64_t(value);
}

}  // namespace gpulab
