// The failure policy of the GPU backend. Only a sticky error leaves the context unusable: an
// illegal or misaligned address, a trap or a device-side assert, a launch failure or timeout, an
// uncorrectable ECC error (the DeviceFault kind). Every later call in the process then fails
// with it, so only a reset gives the next run a working context, and it is done for those alone:
// a reset destroys the context of the whole process, with the state of every replica on that
// GPU (which a sticky error has spoiled already). Out of memory, a bad argument or a cuBLAS
// failure that left the context intact free the backend's state and nothing else.
#include "engine/cuda_failure.hpp"

#include <cuda_runtime_api.h>

#include "kernels/cuda/memory.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

bool cuda_context_needs_reset() { return kc::context_is_broken(); }

kc::CudaError describe_cuda_failure(const kc::CudaError& e, const std::string& device, int batch,
                                    bool reset) {
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
    if (reset) message += " (the GPU was reset)";
  } else if (reset) {
    message += std::string("the GPU failed and was reset; the run ends here: ") + e.what();
  } else if (e.kind() == kc::ErrorKind::DeviceFault) {
    message += std::string("the GPU failed; the run ends here: ") + e.what();
  } else {
    message += e.what();
  }
  return kc::CudaError(e.kind(), e.code(), e.expression(), e.file().c_str(), e.line(), message);
}

void reset_broken_devices(const std::vector<int>& devices) {
  for (const int device : devices) {
    if (cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (kc::context_is_broken()) {
      cudaDeviceReset();
      cudaGetLastError();
    }
  }
}

}  // namespace gpulab
