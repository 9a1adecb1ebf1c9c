// replica_sum: one thread per element, the replicas added in order.
#include <stdexcept>
#include <string>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/replica_sum.cuh"

namespace gpulab::kernels::cuda {
namespace {

__global__ void replica_sum_kernel(ReplicaBuffers outs, ReplicaBuffers ins, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) {
    float sum = ins.data[0][i];
    for (int k = 1; k < ins.count; ++k) sum += ins.data[k][i];
    for (int k = 0; k < outs.count; ++k) outs.data[k][i] = sum;
  }
}

void check_list(const ReplicaBuffers& list, const char* what) {
  if (list.count < 1 || list.count > kMaxReplicaBuffers)
    throw std::invalid_argument(std::string("replica_sum: ") + std::to_string(list.count) + " " +
                                what + " buffers; 1 to " + std::to_string(kMaxReplicaBuffers) +
                                " are possible");
}

}  // namespace

void replica_sum(const ReplicaBuffers& outs, const ReplicaBuffers& ins, size_t n,
                 cudaStream_t stream) {
  // outs[k], ins[k]: (n) on the stream's device
  check_list(outs, "output");
  check_list(ins, "input");
  if (n == 0) return;
  replica_sum_kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(outs, ins, n);
  GPULAB_CUDA_CHECK_LAUNCH("replica_sum_kernel");
}

}  // namespace gpulab::kernels::cuda
