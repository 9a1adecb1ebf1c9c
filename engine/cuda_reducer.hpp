// The gradient reducer of GPU replicas in one process: replicas that share a GPU are summed
// there by a kernel in replica order; with several GPUs, each GPU's sum is all-reduced with
// NCCL, and the result copied to the GPU's other replicas. Everything is enqueued on one
// communication stream per GPU, ordered after each replica's backward by an event, and each
// replica's stream waits for the result by another: the host never waits for the device here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/gradient_reducer.hpp"

namespace gpulab {

class CudaReducer : public GradientReducer {
 public:
  // Frees everything it holds on the GPUs, after waiting for its streams (errors ignored); later
  // reductions throw. Called before a broken device is reset.
  virtual void release() = 0;
};

// replica_devices: each local replica's CUDA device, in replica order (at least two replicas).
// Throws ConfigError when several GPUs are named but NCCL cannot be used, saying why.
std::unique_ptr<CudaReducer> make_cuda_reducer(const std::vector<int>& replica_devices,
                                               size_t parameter_count, double bucket_bytes,
                                               double timeout_s);

// Empty when replicas on `gpus` distinct GPUs can be reduced in this build and on this machine,
// else why not (one line naming --device).
std::string cuda_reducer_unavailable_reason(const std::string& device, int gpus);

}  // namespace gpulab
