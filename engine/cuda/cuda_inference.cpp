// Inference timing on one GPU (engine/inside/inference_timing's GPU half): the images copied from
// pinned host memory, the CUDA network's forward pass and the logits copied back, timed together
// on the host clock, as a program asking the GPU for predictions waits for them.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "engine/base/clock.hpp"
#include "engine/cuda/cuda_network.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/memory.hpp"

namespace gpulab::detail {

namespace kc = kernels::cuda;

std::vector<double> inference_ms_cuda(int gpu, const ModelPlan& plan,
                                      const std::vector<float>& params,
                                      const std::vector<float>& images,
                                      const std::vector<int>& batches, ConvAlgorithm conv,
                                      std::vector<std::vector<float>>* logits) {
  constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;  // as a training replica's
  GPULAB_CUDA_CHECK(cudaSetDevice(gpu));
  const int most = *std::max_element(batches.begin(), batches.end());
  const size_t image_floats = size_t(most) * size_t(plan.layers.front().input.size());
  const size_t logit_floats = size_t(most) * size_t(plan.layers.back().output.channels);
  // Declared in the order of need, destroyed in reverse: everything before the stream.
  kc::Stream stream = kc::make_stream();
  kc::DeviceBuffer<uint8_t> workspace(kBlasWorkspaceBytes, "the cuBLAS workspace");
  kc::CublasHandle blas = kc::CublasHandle::create();
  kc::gemm_bind(blas.get(), stream.get(), workspace.data(), kBlasWorkspaceBytes);
  // Every fill goes on `stream`: the forward passes run there, and a non-blocking stream does
  // not wait for work on the legacy default stream (cudaMemset, cudaMemcpy).
  kc::DeviceBuffer<uint64_t> step(1, "the step");  // dropout's; an inference draws none
  GPULAB_CUDA_CHECK(cudaMemsetAsync(step.data(), 0, sizeof(uint64_t), stream.get()));
  kc::DeviceBuffer<float> device_images(image_floats, "the images");
  kc::DeviceBuffer<uint8_t> labels(size_t(most), "the labels");  // the loss is computed, ignored
  GPULAB_CUDA_CHECK(cudaMemsetAsync(labels.data(), 0, size_t(most), stream.get()));
  kc::PinnedBuffer<float> host_images(image_floats, "the images");
  kc::PinnedBuffer<float> host_logits(logit_floats, "the logits");
  std::copy(images.begin(), images.begin() + ptrdiff_t(image_floats), host_images.data());
  CudaNetwork network(plan, most, kc::Precision::Fp32, conv, blas.get(), 0, step.data(),
                      stream.get());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(network.parameters(), params.data(),
                                    params.size() * sizeof(float), cudaMemcpyHostToDevice,
                                    stream.get()));
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // before the first timed pass
  const int classes = plan.layers.back().output.channels;
  std::vector<double> times;
  for (int batch : batches) {
    const size_t in_bytes = image_floats / size_t(most) * size_t(batch) * sizeof(float);
    const size_t out_bytes = size_t(batch) * size_t(classes) * sizeof(float);
    // NaN until a pass writes them: logits a pass left unwritten cannot pass for answers.
    std::fill(host_logits.data(), host_logits.data() + logit_floats,
              std::numeric_limits<float>::quiet_NaN());
    times.push_back(median_ms([&] {
      const auto start = Clock::now();
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(device_images.data(), host_images.data(), in_bytes,
                                        cudaMemcpyHostToDevice, stream.get()));
      network.forward(device_images.data(), labels.data(), batch, false);
      GPULAB_CUDA_CHECK(cudaMemcpyAsync(host_logits.data(), network.logits(), out_bytes,
                                        cudaMemcpyDeviceToHost, stream.get()));
      GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      return ms_since(start);
    }));
    const float* batch_logits = host_logits.data();
    logits->emplace_back(batch_logits, batch_logits + size_t(batch) * size_t(classes));
  }
  return times;
}

}  // namespace gpulab::detail
