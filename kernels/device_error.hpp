// What a device's failure means, with no CUDA in it: the engine decides from this alone whether
// an error leaves a backend unusable, on every backend and in builds without CUDA.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab::kernels {

enum class ErrorKind {
  OutOfMemory,  // an allocation failed; the device and the process stay usable
  NoDevice,     // no driver, a driver too old, no device, a bad device index
  DeviceFault,  // a kernel faulted or the device was lost: the context is unusable (NVIDIA: until
                // the process ends; a reset is tried, engine/cuda/cuda_failure.hpp)
  Other,        // a bad argument, an unsupported operation, a launch that could not start
};

// Whether a backend must let go of its device after an error of this kind: a fault broke the
// device's context, or its memory ran out and what the backend holds must go for the next run
// to fit. Every other kind leaves the backend's state as it was, and the backend goes on.
constexpr bool leaves_device_unusable(ErrorKind kind) {
  return kind == ErrorKind::DeviceFault || kind == ErrorKind::OutOfMemory;
}

// A device's failure (kernels::cuda::CudaError is one). Its message can be added to once the
// backend knows what the failure led to ("the GPU was reset"), without losing its type.
class DeviceError : public std::runtime_error {
 public:
  DeviceError(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind), message_(message) {}
  ErrorKind kind() const { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }
  void add_to_message(const std::string& text) { message_ += text; }

 private:
  ErrorKind kind_;
  std::string message_;
};

}  // namespace gpulab::kernels
