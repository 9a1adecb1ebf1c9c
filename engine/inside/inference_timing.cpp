// Inference timing on the CPU here; the GPU half is engine/cuda/cuda_inference.cpp, built with
// CUDA only (as detail::list_cuda_gpus is).
#include "engine/inside/inference_timing.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "datasets/mnist.hpp"
#include "engine/backend/backend.hpp"
#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/flag_list.hpp"
#include "engine/cpu/cpu_network.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/gpu_path.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "gpulab/build_config.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {

#if GPULAB_CUDA_ENABLED
namespace detail {
// The median milliseconds of one inference per batch size on GPU `gpu`: images (largest batch,
// C*H*W) normalized in host memory. (*logits)[i]: the last pass's logits at batches[i].
std::vector<double> inference_ms_cuda(int gpu, const ModelPlan& plan,
                                      const std::vector<float>& params,
                                      const std::vector<float>& images,
                                      const std::vector<int>& batches, ConvAlgorithm conv,
                                      std::vector<std::vector<float>>* logits);  // engine/cuda
}  // namespace detail
#endif

namespace {

// Digits of pseudo-random ink, normalized: what the network reads, never what it makes of them.
std::vector<float> timing_images(int count, size_t image_size) {
  std::vector<uint8_t> pixels(size_t(count) * image_size);
  uint32_t state = 12345;
  for (uint8_t& p : pixels) {
    state = state * 1664525u + 1013904223u;
    p = uint8_t(state >> 24);
  }
  std::vector<float> images(pixels.size());
  data::normalize_pixels(images.data(), pixels.data(), pixels.size());
  return images;
}

std::vector<double> inference_ms_cpu(const ModelWeights& model, const std::vector<float>& images,
                                     const std::vector<int>& batches, int threads,
                                     std::vector<std::vector<float>>* logits) {
  kernels::cpu::ThreadCountScope scope(threads);
  const int most = *std::max_element(batches.begin(), batches.end());
  CpuNetwork network(model.plan, most);
  std::copy(model.params.begin(), model.params.end(), network.parameters().begin());
  const std::vector<uint8_t> no_labels(size_t(most), 0);  // the loss is computed and ignored
  std::vector<double> times;
  for (int batch : batches) {
    times.push_back(median_ms([&] {
      const auto start = Clock::now();
      network.forward(images.data(), no_labels.data(), batch, false, 0, 0);
      return ms_since(start);
    }));
    logits->emplace_back(network.logits().begin(), network.logits().end());
  }
  return times;
}

}  // namespace

std::vector<int> parse_inference_batches(const std::string& text) {
  std::vector<int> batches;
  for (const std::string& part : split_flag_list(text)) {
    int n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (ec != std::errc() || end != part.data() + part.size() || n < 1 || n > 65536)
      throw ConfigError("--batch: \"" + part +
                        "\" is not a batch size from 1 to 65536; give a list like 1,64,1000");
    batches.push_back(n);
  }
  if (batches.empty()) throw ConfigError("--batch: give at least one batch size, like 1,64,1000");
  return batches;
}

std::vector<std::string> parse_inference_devices(const std::string& text) {
  std::vector<std::string> devices;
  for (const std::string& device : split_flag_list(text)) {
    const std::string digits = device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
    const bool gpu =
        !digits.empty() && digits.size() < 6 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (device != "cpu" && !gpu)
      throw ConfigError("--device: \"" + device +
                        "\" is not a device; give cpu or cuda:N, or a list like cpu,cuda:0");
    if (gpu && !GPULAB_CUDA_ENABLED)
      throw ConfigError("--device " + device + ": no GPU: " + no_cuda_backend_reason() +
                        "; use --device cpu");
    if (gpu) require_gpu(device);  // "--device cuda:1: no GPU: <reason>"
    devices.push_back(device);
  }
  if (devices.empty()) throw ConfigError("--device: give cpu, cuda:0 or both (cpu,cuda:0)");
  return devices;
}

void check_inference_memory(const ModelWeights& model, const std::vector<int>& batches) {
  if (batches.empty()) return;
  const int most = *std::max_element(batches.begin(), batches.end());
  // The images and the network's buffers for the largest batch (every layer's output and its
  // gradient, as training_memory_bytes counts them) must fit the memory free now.
  const uint64_t images_bytes =
      uint64_t(most) * uint64_t(model.plan.layers.front().input.size()) * sizeof(float);
  const std::string shortfall =
      memory_shortfall(images_bytes + uint64_t(training_memory_bytes(model.plan, most)));
  if (!shortfall.empty())
    throw ConfigError("--batch " + std::to_string(most) + ": timing " + model.config.name +
                      " on a batch of " + std::to_string(most) + " " + shortfall +
                      "; use a smaller --batch");
}

std::vector<InferenceTiming> time_inference(const ModelWeights& model, const std::string& device,
                                            const std::vector<int>& batches, int cpu_threads,
                                            ConvAlgorithm conv) {
  if (batches.empty()) return {};
  const std::vector<std::string> checked = parse_inference_devices(device);
  if (checked.size() != 1)
    throw ConfigError("--device: time_inference takes one device, not \"" + device + "\"");
  if (device == "cpu" && conv != ConvAlgorithm::Im2col)
    throw ConfigError(std::string("--conv ") + conv_name(conv) +
                      ": chooses how a GPU computes its convolutions; the CPU has its own "
                      "kernels (im2col and Winograd, chosen per layer), so time it on a GPU "
                      "(--device cuda:0)");
  const int most = *std::max_element(batches.begin(), batches.end());
  check_inference_memory(model, batches);
  const std::vector<float> images =
      timing_images(most, size_t(model.plan.layers.front().input.size()));
  std::vector<double> times;
  std::vector<std::vector<float>> logits;
  if (device == "cpu") {
    times = inference_ms_cpu(model, images, batches, cpu_threads, &logits);
  } else {
#if GPULAB_CUDA_ENABLED
    times = detail::inference_ms_cuda(cuda_device_index(device), model.plan, model.params, images,
                                      batches, conv, &logits);
#endif
  }
  std::vector<InferenceTiming> timings;
  for (size_t i = 0; i < batches.size(); ++i)
    timings.push_back({device, batches[i], times[i], std::move(logits[i]),
                       device == "cpu" ? std::string() : std::string(conv_name(conv))});
  return timings;
}

}  // namespace gpulab
