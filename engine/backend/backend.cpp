// A backend's options: device names, precisions, sync modes and distributions.
#include "engine/backend/backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "engine/base/errors.hpp"

namespace gpulab {

namespace {

// Each option's values and their names, one table each: parsing and naming read the same table.
template <typename E>
using Names = std::initializer_list<std::pair<E, const char*>>;
const Names<Precision> kPrecisions = {
    {Precision::Fp32, "fp32"}, {Precision::Tf32, "tf32"}, {Precision::Bf16, "bf16"}};
const Names<SyncMode> kSyncModes = {{SyncMode::AllReduce, "allreduce"},
                                    {SyncMode::ParameterServer, "parameter-server"}};
const Names<Distribution> kDistributions = {{Distribution::None, "none"},
                                            {Distribution::Mpi, "mpi"}};
const Names<ConvAlgorithm> kConvAlgorithms = {{ConvAlgorithm::Im2col, "im2col"},
                                              {ConvAlgorithm::Implicit, "implicit"}};
const Names<DataOn> kDataOn = {
    {DataOn::Auto, "auto"}, {DataOn::Device, "device"}, {DataOn::Host, "host"}};
const Names<Preprocess> kPreprocess = {
    {Preprocess::None, "none"}, {Preprocess::Once, "once"}, {Preprocess::PerBatch, "per-batch"}};

// The value named `name`, else a ConfigError saying `unknown`.
template <typename E>
E parse_name(const Names<E>& names, const std::string& name, const std::string& unknown) {
  for (const auto& [value, text] : names)
    if (name == text) return value;
  throw ConfigError(unknown);
}

template <typename E>
const char* name_of(const Names<E>& names, E value) {
  for (const auto& [known, text] : names)
    if (known == value) return text;
  return "?";
}

}  // namespace

Precision parse_precision(const std::string& name) {
  return parse_name(kPrecisions, name,
                    "unknown precision \"" + name + "\"; use fp32, tf32 or bf16");
}
const char* precision_name(Precision precision) { return name_of(kPrecisions, precision); }

SyncMode parse_sync(const std::string& name) {
  return parse_name(kSyncModes, name,
                    "--sync " + name + ": unknown; use allreduce or parameter-server");
}
const char* sync_name(SyncMode sync) { return name_of(kSyncModes, sync); }

Distribution parse_dist(const std::string& name) {
  return parse_name(kDistributions, name, "--dist " + name + ": unknown; use mpi (under mpirun)");
}
const char* dist_name(Distribution dist) { return name_of(kDistributions, dist); }

ConvAlgorithm parse_conv(const std::string& name) {
  return parse_name(kConvAlgorithms, name,
                    "--conv " + name +
                        ": unknown; use im2col (unfolded input, cuBLAS) or implicit "
                        "(implicit GEMM)");
}
const char* conv_name(ConvAlgorithm conv) { return name_of(kConvAlgorithms, conv); }

DataOn parse_data_on(const std::string& name) {
  return parse_name(kDataOn, name,
                    "--data-on " + name + ": use host (batches copied every step) or device");
}
const char* data_on_name(DataOn data_on) { return name_of(kDataOn, data_on); }

Preprocess parse_preprocess(const std::string& name) {
  return parse_name(kPreprocess, name,
                    "--preprocess " + name +
                        ": use none, once (the images augmented once, before training) or "
                        "per-batch (every batch augmented on one host thread)");
}
const char* preprocess_name(Preprocess preprocess) { return name_of(kPreprocess, preprocess); }

namespace {

// "12" -> 12; -1 unless 1 to 4 digits.
int parse_small_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(digits);
}

}  // namespace

CudaDevices parse_cuda_devices(const std::string& device) {
  const auto bad = [&](const std::string& why) {
    return ConfigError("--device " + device + ": " + why +
                       "; use cpu, cuda:N, cuda:0,1, cuda:all, cuda:0x4 or cuda:0x2,1x2");
  };
  // Without MPI "cuda:auto" is GPU 0; under --dist mpi each rank takes a GPU of its host
  // (engine/parallel/gpu_ranks.hpp).
  if (device == "cuda" || device == "cuda:auto") return {false, {0}};
  const std::string prefix = "cuda:";
  if (device.rfind(prefix, 0) != 0) throw bad("unknown device");
  const std::string list = device.substr(prefix.size());
  if (list == "all") return {true, {}};
  CudaDevices devices;
  std::vector<int> seen;
  size_t begin = 0;
  for (;;) {
    const size_t comma = list.find(',', begin);
    const std::string entry =
        list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const size_t x = entry.find('x');
    const int gpu = parse_small_number(entry.substr(0, x));
    const int count = x == std::string::npos ? 1 : parse_small_number(entry.substr(x + 1));
    if (gpu < 0 || count < 1)
      throw bad(entry.empty()
                    ? std::string("an empty GPU entry")
                    : "\"" + entry + "\" is not a GPU (N, or NxK for K replicas on GPU N)");
    if (std::find(seen.begin(), seen.end(), gpu) != seen.end())
      throw bad("GPU " + std::to_string(gpu) + " is named twice (cuda:" + std::to_string(gpu) +
                "x2 puts two replicas on it)");
    if (count > 16) throw bad("at most 16 replicas on one GPU");
    seen.push_back(gpu);
    devices.replicas.insert(devices.replicas.end(), size_t(count), gpu);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return devices;
}

int cuda_device_index(const std::string& device) {
  if (device == "cpu") return -1;
  const CudaDevices devices = parse_cuda_devices(device);
  return devices.all ? 0 : devices.replicas.front();
}

int max_cpu_threads() {
  return kThreadsPerCore * std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
}

void check_images_fit(const ActivationShape& input, const data::ImageSet& set,
                      const std::string& name) {
  if (input.channels == 1 && set.rows == input.height && set.cols == input.width) return;
  const std::string pixels = std::to_string(set.rows) + "x" + std::to_string(set.cols);
  throw ConfigError(name + "'s images are " + pixels +
                    " pixels (one channel), and the model takes " + shape_text(input) +
                    " images; give data of the model's image size, or a model made for 1x" +
                    pixels + " images");
}

void check_images_fit(const ActivationShape& input, const DataSets& data) {
  for (const Split split : {Split::Train, Split::Validation, Split::Test}) {
    const data::ImageSet* set = split == Split::Train        ? data.train
                                : split == Split::Validation ? data.validation
                                                             : data.test;
    if (set) check_images_fit(input, *set, std::string("the ") + split_name(split) + " set");
  }
}

}  // namespace gpulab
