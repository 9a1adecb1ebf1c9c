// What a CUDA failure means for a run: the message the learner reads, and whether the device
// must be reset before the next run can use it.
#pragma once

#include <string>
#include <vector>

#include "kernels/cuda/check.hpp"

namespace gpulab {

// The error to throw for `e` on `device` ("cuda:0"; with several replicas "replica 2 (cuda:0)"):
// out of memory adds what the device had free and suggests a smaller batch; a fault says the run
// ends (and that the GPU is reset, when `reset`). Clears the non-sticky error state.
kernels::cuda::CudaError describe_cuda_failure(const kernels::cuda::CudaError& e,
                                               const std::string& device, int batch, bool reset);

// Whether the current device's context holds a sticky error: then every later call fails, and
// only a reset gives the next run a working context.
bool cuda_context_needs_reset();

// Resets each of `devices` whose context is broken. Call only once everything this process held
// on them is freed: a reset destroys the context of the whole process.
void reset_broken_devices(const std::vector<int>& devices);

}  // namespace gpulab
