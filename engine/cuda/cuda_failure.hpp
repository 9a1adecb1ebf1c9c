// What a CUDA failure means for a run: the message the learner reads, and the reset of the GPUs
// a device fault broke, with what the reset came to.
#pragma once

#include <string>
#include <vector>

#include "kernels/cuda/check.hpp"

namespace gpulab {

// The error to throw for `e` on `device` ("cuda:0"; with several replicas "replica 2 (cuda:0)"):
// out of memory adds what the device had free and suggests a smaller batch; a fault says the run
// ends. Whether the GPU was reset is added later, once it was (reset_after_fault). Clears the
// non-sticky error state.
kernels::cuda::CudaError describe_cuda_failure(const kernels::cuda::CudaError& e,
                                               const std::string& device, int batch);

// One GPU's reset after a fault: `still_failing` is empty when its context takes work again,
// else the name of the error it still returns.
struct DeviceReset {
  int device = 0;
  std::string still_failing;
};

// What a failure's message ends with once the GPUs were reset: that they were, or, where a
// context still fails (NVIDIA documents sticky errors as needing a new process), that GPU runs
// need a restart of gpulab. Empty for no resets.
std::string reset_note(const std::vector<DeviceReset>& resets);

// After an error of `kind`: on a device fault, resets each of `devices` (whatever cudaSetDevice
// returns) and checks that it takes work again; any other kind resets nothing. Returns
// reset_note of what it did. Call only once everything this backend held on them is freed: a
// reset destroys the context of the whole process on that GPU.
std::string reset_after_fault(const std::vector<int>& devices, kernels::cuda::ErrorKind kind);

}  // namespace gpulab
