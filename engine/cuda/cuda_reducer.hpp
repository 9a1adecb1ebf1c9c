// The gradient reducers of GPU replicas. All-reduce: replicas that share a GPU are summed there
// by a kernel in replica order; with several GPUs, each GPU's sum is all-reduced with NCCL, and
// the result copied to the GPU's other replicas. Everything is enqueued on one communication
// stream per GPU, ordered after each replica's backward by an event, and each replica's stream
// waits for the result by another. Under MPI (one GPU per rank) the GPU's sum is all-reduced
// across the ranks, by NCCL or through pinned host memory and MPI; only then does the host wait,
// with the collective timeout, so that a rank that stopped ends the run instead of hanging it.
// The parameter server: everything through host memory (engine/cuda/cuda_parameter_server.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/parallel/gpu_ranks.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"

namespace gpulab {

// release() frees everything it holds on the GPUs, after waiting for its own streams.
class CudaReducer : public GradientReducer {};

// The other ranks of an MPI job, when this process is one of several GPU ranks.
struct CudaRanks {
  std::shared_ptr<ProcessGroup> group;  // null: this process is the whole job
  TransportChoice transport;            // the same on every rank (choose_rank_transport)
};

// replica_devices: each local replica's CUDA device, in replica order (at least two replicas in
// the job); with ranks.group, one GPU in this process. Throws ConfigError when several GPUs are
// named but NCCL cannot be used, saying why; CUDA and NCCL failures name the rank and the GPU.
std::unique_ptr<CudaReducer> make_cuda_reducer(const std::vector<int>& replica_devices,
                                               size_t parameter_count, double bucket_bytes,
                                               double timeout_s, const CudaRanks& ranks = {});

// The parameter server of GPU replicas (--sync parameter-server), one replica per entry of
// replica_devices (one or more, on one GPU or several): each step every replica's gradients go
// to pinned host memory, a server there sums them and takes the optimizer step on its fp32
// parameters, and each replica gets the new parameters back before its next forward. Needs no
// NCCL: everything meets in host memory. Its times: the copies and the sum as communication, the
// server's step as optimizer time.
std::unique_ptr<CudaReducer> make_cuda_parameter_server(const std::vector<int>& replica_devices,
                                                        size_t parameter_count,
                                                        const OptimizerConfig& optimizer,
                                                        double bucket_bytes, double timeout_s);

// Empty when NCCL can be loaded in this process, else why not ("this build has no NCCL", "NCCL
// is not installed (libnccl.so.2 could not be loaded)").
std::string nccl_unavailable_reason();

// Empty when replicas on `gpus` distinct GPUs can be reduced in this build and on this machine,
// else why not (one line naming --device).
std::string cuda_reducer_unavailable_reason(const std::string& device, int gpus);

}  // namespace gpulab
