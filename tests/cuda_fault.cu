// A deliberate device fault for the recovery tests (the CUDA backend's, the window's): a kernel
// that executes __trap().
#include <cuda_runtime_api.h>

namespace gpulab::test {
namespace {

__global__ void trap_kernel() { __trap(); }

}  // namespace

// Launches the trap on a stream of its own and waits for it: returns what the wait returned, a
// sticky error (cudaErrorLaunchFailure) that every later call in the process returns too.
cudaError_t trap_on_device() {
  cudaStream_t stream = nullptr;
  if (const cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      error != cudaSuccess)
    return error;
  trap_kernel<<<1, 1, 0, stream>>>();
  const cudaError_t error = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  return error;
}

// The same for tests without the CUDA headers (the window's): the error as an int.
int fault_the_gpu() { return static_cast<int>(trap_on_device()); }

}  // namespace gpulab::test
