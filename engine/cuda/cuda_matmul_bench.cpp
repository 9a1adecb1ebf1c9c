// The matrix-multiply benchmark on a GPU: cublasSgemm timed with CUDA events, and the same product
// with its copies from pinned host memory and back timed as a whole.
#include <cuda_runtime_api.h>

#include "engine/devices/matmul_bench.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {
namespace {

using kernels::cuda::CublasHandle;
using kernels::cuda::DeviceBuffer;
using kernels::cuda::PinnedBuffer;

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    GPULAB_CUDA_CHECK(cudaEventCreate(&start));
    GPULAB_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  double elapsed_ms() const {
    GPULAB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B by A.
void sgemm(cublasHandle_t handle, const float* a, const float* b, float* c, int n) {
  const float one = 1.0f, zero = 0.0f;
  GPULAB_CUBLAS_CHECK(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
}

}  // namespace

std::vector<float> matmul_cuda(int gpu, const std::vector<float>& a, const std::vector<float>& b,
                               int n) {
  GPULAB_CUDA_CHECK(cudaSetDevice(gpu));
  const size_t count = size_t(n) * n;
  CublasHandle handle = CublasHandle::create();
  DeviceBuffer<float> da(count, "matmul A"), db(count, "matmul B"), dc(count, "matmul C");
  GPULAB_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), count * 4, cudaMemcpyHostToDevice));
  GPULAB_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), count * 4, cudaMemcpyHostToDevice));
  sgemm(handle.get(), da.data(), db.data(), dc.data(), n);
  std::vector<float> c(count);
  GPULAB_CUDA_CHECK(cudaMemcpy(c.data(), dc.data(), count * 4, cudaMemcpyDeviceToHost));
  return c;
}

std::vector<MatmulTiming> bench_matmul_cuda(int gpu, const std::vector<int>& sizes) {
  GPULAB_CUDA_CHECK(cudaSetDevice(gpu));
  CublasHandle handle = CublasHandle::create();  // on the default stream
  Events events;
  std::vector<MatmulTiming> timings;
  for (int n : sizes) {
    const size_t count = size_t(n) * n;
    PinnedBuffer<float> ha(count, "matmul A"), hb(count, "matmul B"), hc(count, "matmul C");
    for (size_t i = 0; i < count; ++i) ha.data()[i] = hb.data()[i] = float(i % 7) - 3.0f;
    DeviceBuffer<float> da(count, "matmul A"), db(count, "matmul B"), dc(count, "matmul C");
    // The product alone is timed on the same values as the one with copies, never on whatever
    // cudaMalloc left there.
    GPULAB_CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), count * 4, cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), count * 4, cudaMemcpyHostToDevice));
    const double ms = median_ms([&] {
      GPULAB_CUDA_CHECK(cudaEventRecord(events.start));
      sgemm(handle.get(), da.data(), db.data(), dc.data(), n);
      GPULAB_CUDA_CHECK(cudaEventRecord(events.stop));
      return events.elapsed_ms();
    });
    const double with_copies = median_ms([&] {
      GPULAB_CUDA_CHECK(cudaEventRecord(events.start));
      GPULAB_CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), count * 4, cudaMemcpyHostToDevice));
      GPULAB_CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), count * 4, cudaMemcpyHostToDevice));
      sgemm(handle.get(), da.data(), db.data(), dc.data(), n);
      GPULAB_CUDA_CHECK(cudaMemcpy(hc.data(), dc.data(), count * 4, cudaMemcpyDeviceToHost));
      GPULAB_CUDA_CHECK(cudaEventRecord(events.stop));
      return events.elapsed_ms();
    });
    timings.push_back({n, ms, with_copies});
  }
  return timings;
}

}  // namespace gpulab
