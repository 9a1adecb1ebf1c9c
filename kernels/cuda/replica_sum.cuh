// The sum of several replicas' gradient buffers on one GPU, in replica order, written back into
// every replica's buffer: the all-reduce of replicas that share a device. Fixed order, no
// atomics: the same bits on every run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels::cuda {

constexpr int kMaxReplicaBuffers = 16;

// Device pointers, passed to the kernel by value.
struct ReplicaBuffers {
  float* data[kMaxReplicaBuffers] = {};
  int count = 0;
};

// For i in [0, n): s = ins[0][i] + ins[1][i] + ... (left to right), then outs[k][i] = s for every
// k. outs may be ins (in place): each element is read before it is written. Throws
// std::invalid_argument for an empty or too long list.
void replica_sum(const ReplicaBuffers& outs, const ReplicaBuffers& ins, size_t n,
                 cudaStream_t stream);

}  // namespace gpulab::kernels::cuda
