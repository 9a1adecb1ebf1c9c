// The failure policy of the GPU backend. Only a sticky error leaves the context unusable: an
// illegal or misaligned address, a trap or a device-side assert, a launch failure or timeout, an
// uncorrectable ECC error (the DeviceFault kind). Every later call in the process then fails
// with it, so only a reset can give the next run a working context, and it is done for those
// alone: a reset destroys the context of the whole process, with the state of every replica on
// that GPU (which a sticky error has spoiled already). NVIDIA documents these errors as needing
// a new process: the reset is tried, and the message says which of the two it came to. Out of
// memory frees the backend's state and nothing else; any other error leaves the backend as it
// was (kernels::leaves_device_unusable).
#include "engine/cuda/cuda_failure.hpp"

#include <cuda_runtime_api.h>

#include "kernels/cuda/memory.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

kc::CudaError describe_cuda_failure(const kc::CudaError& e, const std::string& device, int batch) {
  std::string message = device + ": ";
  cudaGetLastError();  // clears the error, unless it is sticky
  if (e.kind() == kc::ErrorKind::OutOfMemory) {
    message += e.what();
    // cuBLAS and graph instantiation say only that they failed: add what the device had free.
    size_t free = 0, total = 0;
    if (message.find(" free of ") == std::string::npos &&
        cudaMemGetInfo(&free, &total) == cudaSuccess)
      message +=
          " (" + kc::mebibytes(double(free)) + " free of " + kc::mebibytes(double(total)) + ")";
    else
      cudaGetLastError();
    message += "; try a smaller --batch (now " + std::to_string(batch) + ")";
  } else if (e.kind() == kc::ErrorKind::DeviceFault) {
    message += std::string("the GPU failed; the run ends here: ") + e.what();
  } else {
    message += e.what();
  }
  return kc::CudaError(e.kind(), e.code(), e.expression(), e.file().c_str(), e.line(), message);
}

std::string reset_note(const std::vector<DeviceReset>& resets) {
  std::string reset, failing, errors;
  for (const DeviceReset& r : resets) {
    std::string& list = r.still_failing.empty() ? reset : failing;
    list += (list.empty() ? "" : ", ") + std::string("cuda:") + std::to_string(r.device);
    if (!r.still_failing.empty() && errors.find(r.still_failing) == std::string::npos)
      errors += (errors.empty() ? "" : ", ") + r.still_failing;
  }
  std::string note;
  if (!reset.empty()) note += "; " + reset + " was reset and takes work again";
  if (!failing.empty())
    note += "; GPU runs need a restart of gpulab: " + failing + " still fails after a reset (" +
            errors + ")";
  return note;
}

std::string reset_after_fault(const std::vector<int>& devices, kc::ErrorKind kind) {
  if (kind != kc::ErrorKind::DeviceFault) return {};
  std::vector<DeviceReset> resets;
  for (const int device : devices) {
    // With a sticky error cudaSetDevice may return it too: the runtime has made the device
    // current all the same (its primary context, broken as it is), which is what the reset acts
    // on. Only a device seen to be another is left alone.
    cudaSetDevice(device);
    cudaGetLastError();
    int current = device;
    if (cudaGetDevice(&current) != cudaSuccess) current = device;
    cudaError_t error = current == device ? cudaDeviceReset() : cudaErrorInvalidDevice;
    cudaGetLastError();
    if (error == cudaSuccess) error = cudaSetDevice(device);
    if (error == cudaSuccess) error = kc::context_error();
    cudaGetLastError();
    resets.push_back({device, error == cudaSuccess ? std::string() : cudaGetErrorName(error)});
  }
  return reset_note(resets);
}

}  // namespace gpulab
