// RAII owners for everything the CUDA backend holds: device and pinned host buffers, streams,
// events, cuBLAS handles and graphs. Destructors never throw: a failed free (after a device
// fault the context is gone anyway) is ignored and cleared from cudaGetLastError, so that it
// cannot surface later as the error of an unrelated launch.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "kernels/cuda/check.hpp"

namespace gpulab::kernels::cuda {

// cudaMalloc that names what it allocates: out of memory throws CudaError(OutOfMemory) saying
// what, how much, and how much the device had free. Returns nullptr for zero bytes.
void* device_allocate(size_t bytes, const std::string& what);
void* pinned_allocate(size_t bytes, const std::string& what);  // cudaMallocHost, the same way

// Free and total device memory of the current device, in bytes.
std::pair<size_t, size_t> device_memory_info();
std::string mebibytes(double bytes);  // "1234.5 MiB"

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t count, const std::string& what)
      : data_(static_cast<T*>(device_allocate(count * sizeof(T), what))), count_(count) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_ && cudaFree(data_) != cudaSuccess) cudaGetLastError();
  }
  T* data() const { return data_; }
  size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(size_t count, const std::string& what)
      : data_(static_cast<T*>(pinned_allocate(count * sizeof(T), what))), count_(count) {}
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~PinnedBuffer() {
    if (data_ && cudaFreeHost(data_) != cudaSuccess) cudaGetLastError();
  }
  T* data() const { return data_; }
  size_t size() const { return count_; }
  T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// Moves own a handle; the deleter runs once. Handle is a pointer type (cudaStream_t, ...).
template <class Handle, cudaError_t (*Destroy)(Handle)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) : handle_(handle) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~UniqueHandle() {
    if (handle_ && Destroy(handle_) != cudaSuccess) cudaGetLastError();
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  Handle handle_ = nullptr;
};

using Stream = UniqueHandle<cudaStream_t, cudaStreamDestroy>;
using Event = UniqueHandle<cudaEvent_t, cudaEventDestroy>;
using GraphExec = UniqueHandle<cudaGraphExec_t, cudaGraphExecDestroy>;
using Graph = UniqueHandle<cudaGraph_t, cudaGraphDestroy>;

Stream make_stream();                  // non-blocking: no implicit sync with the legacy stream
Event make_event(bool timing = true);  // timing off makes cudaEventSynchronize cheaper

// Whether `event` has completed, asked without waiting (cudaEventQuery): not ready is no error
// (and is cleared); any other error throws CudaError.
bool event_completed(cudaEvent_t event);
// Milliseconds from `from` to `to`, both recorded, once both have completed; nullopt while either
// has not, where cudaEventElapsedTime would fail the run with cudaErrorNotReady for a timing.
std::optional<double> elapsed_ms_if_completed(cudaEvent_t from, cudaEvent_t to);

class CublasHandle {
 public:
  CublasHandle() = default;      // empty; create() makes one
  static CublasHandle create();  // on the current device
  CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~CublasHandle();
  cublasHandle_t get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace gpulab::kernels::cuda
