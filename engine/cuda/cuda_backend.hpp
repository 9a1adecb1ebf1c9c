// engine/cuda: the GPU backend and everything CUDA on the host side: replicas, networks,
// optimizers, staging, step timers, graph capture, the on-device and NCCL reducers, failures,
// and the GPU halves of device listing and the matrix-multiply benchmark. The only engine room
// that includes kernels/cuda. Over engine/parallel and engine/telemetry.
//
// The GPU backend behind the Backend interface: one replica on one GPU, or several on one or
// more GPUs (--device cuda:0x4, cuda:0,1). No CUDA types here: front ends include this without
// the CUDA headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/backend/backend.hpp"

namespace gpulab {

// Uploads the data sets once per GPU (as bytes), builds a replica for each entry of
// options.device and returns the backend. Throws ConfigError when there is no such GPU (saying why)
// and kernels::cuda::CudaError when the GPU fails; out of memory names the allocation, the free
// memory and suggests a smaller batch.
std::unique_ptr<Backend> make_cuda_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                           const DataSets& data, const BackendOptions& options);

// What a CUDA backend did with CUDA graphs so far: phases captured into a graph, and graph
// replays. Tests read it to know that graphs really ran; zero for a backend of another kind.
struct CudaGraphCounts {
  int64_t captures = 0;
  int64_t launches = 0;
  // The first capture the driver refused, "<phase> phase: <error>" (that phase then ran
  // eagerly); empty when none was.
  std::string refused;
};
CudaGraphCounts cuda_graph_counts(const Backend& backend);

}  // namespace gpulab
