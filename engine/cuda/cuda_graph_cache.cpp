// Capture and replay of a step's phases, and the fall-back to eager where a capture is refused.
#include "engine/cuda/cuda_graph_cache.hpp"

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

namespace {

class ExecGraph final : public CapturedGraph {
 public:
  explicit ExecGraph(kc::GraphExec exec) : exec_(std::move(exec)) {}
  void launch(cudaStream_t stream) override {
    GPULAB_CUDA_CHECK(cudaGraphLaunch(exec_.get(), stream));
  }

 private:
  kc::GraphExec exec_;
};

class StreamCapturer final : public GraphCapturer {
 public:
  std::unique_ptr<CapturedGraph> capture(cudaStream_t stream,
                                         const std::function<void()>& enqueue) override {
    try {
      // Thread-local: replicas on other threads may capture their own streams at the same time.
      GPULAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      enqueue();
      cudaGraph_t graph = nullptr;
      GPULAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      const kc::Graph owned(graph);
      cudaGraphExec_t exec = nullptr;
      GPULAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      return std::make_unique<ExecGraph>(kc::GraphExec(exec));
    } catch (...) {
      // The stream leaves capture (a capture that was never begun, or has ended, just says so)
      // and the refusal is not left behind for the next launch's check to find.
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
          status != cudaStreamCaptureStatusNone) {
        cudaGraph_t broken = nullptr;
        cudaStreamEndCapture(stream, &broken);
        if (broken) cudaGraphDestroy(broken);
      }
      cudaGetLastError();
      throw;
    }
  }
};

}  // namespace

const char* graph_phase_name(int phase) {
  switch (phase) {
    case kGatherPhase:
      return "gather";
    case kForwardPhase:
      return "forward";
    case kBackwardPhase:
      return "backward";
    case kOptimizerPhase:
      return "optimizer";
  }
  return "unknown";
}

std::unique_ptr<GraphCapturer> make_stream_capturer() { return std::make_unique<StreamCapturer>(); }

CudaGraphCache::CudaGraphCache(bool enabled, std::unique_ptr<GraphCapturer> capturer)
    : enabled_(enabled), capturer_(std::move(capturer)) {}

void CudaGraphCache::run(const std::optional<Key>& key, cudaStream_t stream,
                         const std::function<void()>& enqueue) {
  if (!enabled_ || !key || eager_phases_.count((*key)[0])) return enqueue();
  Captured& captured = graphs_[*key];
  if (!captured.graph) {
    // The first run of a phase at a shape is eager: cuBLAS picks its kernels and the modules
    // load, neither of which may happen during a capture.
    if (captured.eager_runs++ == 0) return enqueue();
    try {
      captured.graph = capturer_->capture(stream, enqueue);
    } catch (const kc::CudaError& e) {
      if (kernels::leaves_device_unusable(e.kind())) throw;
      // Nothing of the phase ran while it was being captured: it runs now, eagerly, and so
      // does every later run of the phase, whatever its shape. The run goes on and says so.
      const int phase = (*key)[0];
      eager_phases_.insert(phase);
      graphs_.erase(*key);
      if (counts_.refused.empty())
        counts_.refused = std::string(graph_phase_name(phase)) + " phase: " + e.what();
      return enqueue();
    }
    ++counts_.captures;
  }
  captured.graph->launch(stream);
  ++counts_.launches;
}

void StepGraphKeys::start_step(int rows, Shard position) {
  rows_ = rows;
  shard_ = Shard{position.first_image, position.global_batch > 0 ? position.global_batch : rows};
}

std::optional<CudaGraphCache::Key> StepGraphKeys::key(GraphPhase phase) const {
  if (rows_ == 0) return std::nullopt;  // nothing to capture: a replica's empty shard
  return CudaGraphCache::Key{phase, rows_, shard_.first_image, shard_.global_batch};
}

std::string cuda_graphs_text(bool asked, int local_replicas, const CudaGraphCounts& counts,
                             bool parameter_server) {
  if (!asked) return "off";
  if (parameter_server)
    return "off: the parameter server runs eagerly (each step's sum and update run on the host, "
           "between the GPU's backward pass and its next forward)";
  if (local_replicas > 1)
    return "off: " + std::to_string(local_replicas) +
           " replicas in one process run eagerly (graphs are for one replica)";
  if (!counts.refused.empty()) return "off after capture failed: " + counts.refused;
  return "on";
}

}  // namespace gpulab
