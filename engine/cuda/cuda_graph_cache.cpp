// Capture and replay of a step's phases.
#include "engine/cuda/cuda_graph_cache.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

void CudaGraphCache::run(const Key& key, cudaStream_t stream,
                         const std::function<void()>& enqueue) {
  if (!enabled_) return enqueue();
  Captured& captured = graphs_[key];
  if (!captured.exec) {
    // The first run of a phase at a shape is eager: cuBLAS picks its kernels and the modules
    // load, neither of which may happen during a capture.
    if (captured.eager_runs++ == 0) return enqueue();
    // Thread-local: replicas on other threads may capture their own streams at the same time.
    GPULAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      cudaGetLastError();
      throw;
    }
    cudaGraph_t graph = nullptr;
    GPULAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const kc::Graph owned(graph);
    cudaGraphExec_t exec = nullptr;
    GPULAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    captured.exec = kc::GraphExec(exec);
    ++counts_.captures;
  }
  GPULAB_CUDA_CHECK(cudaGraphLaunch(captured.exec.get(), stream));
  ++counts_.launches;
}

}  // namespace gpulab
