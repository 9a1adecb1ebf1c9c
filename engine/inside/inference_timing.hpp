// How long a trained model takes to classify images on the CPU and on a GPU, per batch size, for
// `gpulab-cli bench inference` and the window's Inside tab: a GPU that wins at training batches
// can lose on one image, where the copies and the kernel launches are most of the time.
#pragma once

#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/inside/model_weights.hpp"

namespace gpulab {

struct InferenceTiming {
  std::string device;  // "cpu", "cuda:0"
  int batch = 0;
  // The median time of one inference of `batch` images, in milliseconds: from normalized images
  // in host memory to the logits in host memory (on a GPU: the copy of the images to the device,
  // the forward pass and the copy of the logits back).
  double batch_ms = 0;
  // (batch, classes): the logits of the last timed pass, so that a device's answers can be held
  // to the CPU's and not only its time.
  std::vector<float> logits;
  // How a GPU computed the convolutions (conv_name: "im2col", "implicit"); "" on the CPU, which
  // has its own kernels.
  std::string conv;
  double ms_per_image() const { return batch_ms / batch; }
  double images_per_second() const { return batch * 1000.0 / batch_ms; }
};

// "1,64,1000": batch sizes from 1 to 65536. Throws ConfigError naming --batch and the value.
std::vector<int> parse_inference_batches(const std::string& text);
// "cpu,cuda:0": each cpu or cuda:N, checked against this machine (a GPU it lacks, or a build
// without CUDA, is "no GPU: <reason>"). Throws ConfigError naming --device and the value.
std::vector<std::string> parse_inference_devices(const std::string& text);

// Throws ConfigError naming --batch, what the largest batch needs and the memory free now, unless
// it fits: checked before anything is allocated (time_inference checks it too).
void check_inference_memory(const ModelWeights& model, const std::vector<int>& batches);

// Times the model's forward pass on `device` for each batch size: a warm-up, then repeats for
// about a quarter second (at least 3, at most 50), the median (median_ms, as bench matmul). The
// CPU runs the fast kernels on `cpu_threads` threads (0: every core); a GPU runs the CUDA
// network in fp32, its convolutions by `conv` (ConfigError for implicit on the CPU). The images
// are fixed pseudo-random digits: the work does not depend on them.
std::vector<InferenceTiming> time_inference(const ModelWeights& model, const std::string& device,
                                            const std::vector<int>& batches, int cpu_threads = 0,
                                            ConvAlgorithm conv = ConvAlgorithm::Im2col);

}  // namespace gpulab
