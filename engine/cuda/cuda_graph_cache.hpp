// CUDA graphs for the phases of a training step: the first run of a phase at a shape is eager,
// the second is captured, every later one replays the graph.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <map>

#include "engine/cuda/cuda_backend.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

class CudaGraphCache {
 public:
  // phase, rows, the first image's position in the whole batch, the whole batch: everything a
  // captured phase bakes into its kernels' arguments.
  using Key = std::array<int, 4>;
  explicit CudaGraphCache(bool enabled) : enabled_(enabled) {}
  // Runs `enqueue` on `stream`, eagerly or through the graph of `key`.
  void run(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue);
  CudaGraphCounts counts() const { return counts_; }

 private:
  struct Captured {
    int eager_runs = 0;
    kernels::cuda::GraphExec exec;
  };
  bool enabled_;
  std::map<Key, Captured> graphs_;
  CudaGraphCounts counts_;
};

}  // namespace gpulab
