// Generated bad inputs for the readers' tests (checkpoints with every declared shape mismatch,
// files that declare more than they hold, FIFOs no one writes to) and the checks that a reader
// refused them in time, without reading or allocating what they declare, changing nothing.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.hpp"

namespace gpulab::test {

// A model of wide feature maps (1024 channels of 28x28 before its pooling: 3 MB an image): at a
// batch of 65536 it asks for far more memory than any machine has.
inline ModelConfig wide_feature_map_model() {
  ModelConfig wide = preset("mlp");
  LayerSpec conv, pool;
  conv.type = LayerType::Conv2d;
  conv.out_channels = 1024;
  conv.kernel = 3;
  conv.padding = 1;
  pool.type = LayerType::MaxPool2d;
  pool.kernel = 28;
  wide.layers.insert(wide.layers.begin(), {conv, pool});
  return wide;
}

struct RawTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// A safetensors file of zero F32 tensors with exactly the data their shapes need, and `model` as
// the metadata's gpulab.model where it is not null: a file that is well formed whatever it says.
inline void write_safetensors(const std::filesystem::path& path,
                              const std::vector<RawTensor>& tensors, const nlohmann::json& model) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  if (!model.is_null()) header["__metadata__"]["gpulab.model"] = model.dump();
  uint64_t offset = 0;
  for (const RawTensor& t : tensors) {
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= uint64_t(d);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 4 * count}}};
    offset += 4 * count;
  }
  const std::string text = header.dump();
  const uint64_t size = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&size), 8);
  out << text << std::string(size_t(offset), '\0');
}

// The tensors `config` needs, as gpulab names and shapes them.
inline std::vector<RawTensor> tensors_of(const ModelConfig& config) {
  std::vector<RawTensor> tensors;
  for (const ParameterInfo& p : plan_model(config).parameters) tensors.push_back({p.name, p.shape});
  return tensors;
}

struct BadCheckpoint {
  std::string what;  // for failure messages
  std::filesystem::path path;
  // True where the file and its config agree but the model does not take 1x28x28 digits: it
  // loads, and each consumer that feeds it digits must refuse it.
  bool loads = false;
};

// For `config` (an MLP or a CNN of 28x28 digits), every way a checkpoint's declared shapes can
// disagree: per tensor a dimension larger, smaller, one more, one fewer, the tensor missing or
// renamed; a tensor too many; the config's input 1x4x4, 1x14x14, 1x56x56, 1x1x1 or 3x28x28 with
// tensors that fit it; and a 300-byte file whose config declares a layer of 2,000,000 features.
inline std::vector<BadCheckpoint> shape_mismatch_checkpoints(const std::filesystem::path& dir,
                                                             const ModelConfig& config) {
  std::filesystem::create_directories(dir);
  std::vector<BadCheckpoint> files;
  const nlohmann::json model = model_to_json(config);
  const std::vector<RawTensor> good = tensors_of(config);
  auto add = [&](const std::string& what, const std::vector<RawTensor>& tensors,
                 const nlohmann::json& declared, bool loads = false) {
    const auto path = dir / ("bad" + std::to_string(files.size()) + ".safetensors");
    write_safetensors(path, tensors, declared);
    files.push_back({what, path, loads});
  };
  for (size_t i = 0; i < good.size(); ++i) {
    auto changed = [&](const std::string& what, const std::function<void(RawTensor&)>& change) {
      std::vector<RawTensor> tensors = good;
      change(tensors[i]);
      add(good[i].name + " " + what, tensors, model);
    };
    changed("first dimension + 1", [](RawTensor& t) { t.shape.front() += 1; });
    changed("last dimension - 1",
            [](RawTensor& t) { t.shape.back() = t.shape.back() > 1 ? t.shape.back() - 1 : 2; });
    changed("one dimension more", [](RawTensor& t) { t.shape.push_back(1); });
    changed("one dimension fewer", [](RawTensor& t) {
      if (t.shape.size() > 1)
        t.shape.pop_back();
      else
        t.shape.push_back(1);
    });
    changed("renamed", [](RawTensor& t) { t.name += "_renamed"; });
    std::vector<RawTensor> missing = good;
    missing.erase(missing.begin() + std::ptrdiff_t(i));
    add(good[i].name + " missing", missing, model);
  }
  std::vector<RawTensor> extra = good;
  extra.push_back({"fc99.weight", {3, 3}});
  add("a tensor too many", extra, model);
  for (const ActivationShape input :
       {ActivationShape{1, 4, 4}, ActivationShape{1, 14, 14}, ActivationShape{1, 56, 56},
        ActivationShape{1, 1, 1}, ActivationShape{3, 28, 28}}) {
    ModelConfig other = config;
    other.input = input;
    std::vector<RawTensor> tensors;
    try {
      tensors = tensors_of(other);
    } catch (const std::exception&) {
      continue;  // its layers do not fit that input (LeNet-5's 5x5 kernels on 4x4 images)
    }
    add("a model of input " + shape_text(input), tensors, model_to_json(other), true);
  }
  ModelConfig huge = config;
  LayerSpec flatten, wide, relu, out;
  flatten.type = LayerType::Flatten;
  wide.type = out.type = LayerType::Linear;
  wide.out_features = 2'000'000;  // 784 x 2,000,000 floats: 6.3 GB the file does not hold
  relu.type = LayerType::ReLU;
  out.out_features = config.classes;
  huge.layers = {flatten, wide, relu, out};
  add("a 300-byte file declaring linear 2000000", {}, model_to_json(huge));
  return files;
}

// A FIFO that no one writes to, for readers that must refuse it rather than wait.
inline std::filesystem::path make_fifo(const std::filesystem::path& path) {
  ::mkfifo(path.c_str(), 0600);
  return path;
}

// Runs `read` (a reader given the FIFO `fifo`) and waits up to `seconds`. Where it blocks, the
// FIFO is opened for writing and closed, so that the reader sees its end and the test goes on,
// failing; returns whether it ended in time.
inline bool ends_in_time(const std::filesystem::path& fifo, const std::function<void()>& read,
                         double seconds = 10) {
  auto done = std::async(std::launch::async, [&] {
    try {
      read();
    } catch (...) {
    }
  });
  if (done.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready)
    return true;
  for (;;) {  // a reader blocked in open() or read(): a writer that comes and goes frees it
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    if (done.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) return false;
  }
}

// Bytes this process has read through read() and its kin (/proc/self/io's rchar).
inline uint64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return 0;
}

// The most memory this process has held at once, in bytes.
inline uint64_t peak_memory_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;
}

// Every entry under `dir` with what it holds (a regular file its bytes, or over 64 MiB its size
// and time, a link its target, anything else its kind, never opened): equal before and after shows
// that nothing changed.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> entries;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    const fs::file_status status = entry.symlink_status();
    std::string& held = entries[entry.path().string()];
    if (fs::is_symlink(status)) {
      held = "link to " + fs::read_symlink(entry.path()).string();
    } else if (fs::is_regular_file(status) && fs::file_size(entry.path()) > (64u << 20)) {
      held = "size " + std::to_string(fs::file_size(entry.path())) + ", written " +
             std::to_string(fs::last_write_time(entry.path()).time_since_epoch().count());
    } else if (fs::is_regular_file(status)) {
      // Read whole, not a character at a time through istreambuf_iterator: a folder of
      // checkpoints is megabytes, snapshotted twice per command, and under the sanitizers the
      // iterator took seconds of each.
      std::ifstream in(entry.path(), std::ios::binary);
      held.resize(size_t(fs::file_size(entry.path())));
      in.read(held.data(), std::streamsize(held.size()));
      held.resize(size_t(in.gcount()));
    } else {
      held = "kind " + std::to_string(int(status.type()));
    }
  }
  return entries;
}

}  // namespace gpulab::test
