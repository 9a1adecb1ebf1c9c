// Allocation with named, measured out-of-memory errors, and the RAII constructors.
#include "kernels/cuda/memory.hpp"

#include <cstdio>

namespace gpulab::kernels::cuda {
namespace {

[[noreturn]] void throw_out_of_memory(cudaError_t error, const char* call, size_t bytes,
                                      const std::string& what, bool host) {
  cudaGetLastError();  // an allocation failure is not sticky: clear it so later calls work
  std::string message = std::string("out of ") + (host ? "pinned host" : "GPU") +
                        " memory allocating " + what + " (" + mebibytes(double(bytes)) + ")";
  size_t free = 0, total = 0;
  if (!host && cudaMemGetInfo(&free, &total) == cudaSuccess)
    message += ": " + mebibytes(double(free)) + " free of " + mebibytes(double(total));
  throw CudaError(ErrorKind::OutOfMemory, static_cast<int>(error), call, __FILE__, __LINE__,
                  message);
}

}  // namespace

std::string mebibytes(double bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

void* device_allocate(size_t bytes, const std::string& what) {
  if (bytes == 0) return nullptr;
  void* pointer = nullptr;
  const cudaError_t error = cudaMalloc(&pointer, bytes);
  if (error == cudaErrorMemoryAllocation)
    throw_out_of_memory(error, "cudaMalloc", bytes, what, false);
  if (error != cudaSuccess)
    throw_cuda_error(error, ("cudaMalloc for " + what).c_str(), __FILE__, __LINE__);
  return pointer;
}

void* pinned_allocate(size_t bytes, const std::string& what) {
  if (bytes == 0) return nullptr;
  void* pointer = nullptr;
  const cudaError_t error = cudaMallocHost(&pointer, bytes);
  if (error == cudaErrorMemoryAllocation)
    throw_out_of_memory(error, "cudaMallocHost", bytes, what, true);
  if (error != cudaSuccess)
    throw_cuda_error(error, ("cudaMallocHost for " + what).c_str(), __FILE__, __LINE__);
  return pointer;
}

std::pair<size_t, size_t> device_memory_info() {
  size_t free = 0, total = 0;
  GPULAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

Stream make_stream() {
  cudaStream_t stream = nullptr;
  GPULAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return Stream(stream);
}

Event make_event(bool timing) {
  cudaEvent_t event = nullptr;
  GPULAB_CUDA_CHECK(
      cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(event);
}

bool event_completed(cudaEvent_t event) {
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaErrorNotReady) {
    cudaGetLastError();  // not ready is no error of a later call
    return false;
  }
  GPULAB_CUDA_CHECK(state);
  return true;
}

std::optional<double> elapsed_ms_if_completed(cudaEvent_t from, cudaEvent_t to) {
  if (!event_completed(from) || !event_completed(to)) return std::nullopt;
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  return double(ms);
}

CublasHandle CublasHandle::create() {
  CublasHandle handle;
  GPULAB_CUBLAS_CHECK(cublasCreate(&handle.handle_));
  return handle;
}

CublasHandle::~CublasHandle() {
  if (handle_) cublasDestroy(handle_);
}

}  // namespace gpulab::kernels::cuda
