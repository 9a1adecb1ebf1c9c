// CUDA graphs for the phases of a training step: the first run of a phase at a shape is eager,
// the second is captured, every later one replays the graph; a capture the driver refuses turns
// that phase eager for good and says why.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "engine/cuda/cuda_backend.hpp"

namespace gpulab {

// The phases of a step that are captured, in the order they run.
enum GraphPhase : int { kGatherPhase, kForwardPhase, kBackwardPhase, kOptimizerPhase };
const char* graph_phase_name(int phase);  // "gather", "forward", "backward", "optimizer"

// A phase's work recorded as a graph, replayed on a stream.
class CapturedGraph {
 public:
  virtual ~CapturedGraph() = default;
  virtual void launch(cudaStream_t stream) = 0;  // throws kernels::cuda::CudaError
};

// How a phase becomes a graph: the CUDA runtime's stream capture, or a test's stand-in (a capture
// that fails on purpose needs no GPU).
class GraphCapturer {
 public:
  virtual ~GraphCapturer() = default;
  // Records what `enqueue` puts on `stream` (nothing of it runs) into an executable graph.
  // Throws kernels::cuda::CudaError where the driver refuses, with the stream out of capture
  // and the runtime's last error cleared; whatever else `enqueue` throws passes through.
  virtual std::unique_ptr<CapturedGraph> capture(cudaStream_t stream,
                                                 const std::function<void()>& enqueue) = 0;
};
std::unique_ptr<GraphCapturer> make_stream_capturer();

class CudaGraphCache {
 public:
  // phase, rows, the first image's position in the whole batch, the whole batch: everything a
  // captured phase bakes into its kernels' arguments.
  using Key = std::array<int, 4>;
  explicit CudaGraphCache(bool enabled,
                          std::unique_ptr<GraphCapturer> capturer = make_stream_capturer());
  // Runs `enqueue` on `stream`, eagerly or through the graph of `key` (no key: eagerly). A
  // capture refused with an error that leaves the device usable runs the phase eagerly now and
  // from then on, and counts().refused names the phase and the error; a fault or out of memory
  // propagates, as does any error of the eager run.
  void run(const std::optional<Key>& key, cudaStream_t stream,
           const std::function<void()>& enqueue);
  CudaGraphCounts counts() const { return counts_; }

 private:
  struct Captured {
    int eager_runs = 0;
    std::unique_ptr<CapturedGraph> graph;
  };
  bool enabled_;
  std::unique_ptr<GraphCapturer> capturer_;
  std::map<Key, Captured> graphs_;
  std::set<int> eager_phases_;  // phases whose capture was refused
  CudaGraphCounts counts_;
};

// The keys of one training step's phases, set from its shard before anything of the step is
// enqueued: an empty shard has none, so its update runs eagerly instead of replaying the graph
// of the step before.
class StepGraphKeys {
 public:
  void start_step(int rows, Shard position);
  std::optional<CudaGraphCache::Key> key(GraphPhase phase) const;
  Shard shard() const { return shard_; }  // the whole batch made explicit
  int rows() const { return rows_; }

 private:
  int rows_ = 0;
  Shard shard_;
};

// What run.json's cuda_graphs says: "on", "off" (not asked for), "off: <why>" (several replicas
// in one process, or a parameter server, run eagerly), or "off after capture failed: <phase>
// phase: <error>".
std::string cuda_graphs_text(bool asked, int local_replicas, const CudaGraphCounts& counts,
                             bool parameter_server = false);

}  // namespace gpulab
