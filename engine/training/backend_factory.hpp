// The factory: the backend a run asks for (CPU, one GPU, replicas on one or several GPUs, ranks
// under MPI), checked against this machine and this build before it is built. It sits above the
// CPU and CUDA rooms so the backend interface below them knows none of its implementations.
#pragma once

#include <memory>

#include "engine/backend/backend.hpp"

namespace gpulab {

// Checks the device name and the precision it supports, and that counts and times are within
// what the machine and the clocks hold; throws ConfigError naming the flag.
void validate(const BackendOptions& options);

// Builds the backend for options.device; throws ConfigError when the device is unknown or absent.
std::unique_ptr<Backend> make_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                      const DataSets& data, const BackendOptions& options);

}  // namespace gpulab
