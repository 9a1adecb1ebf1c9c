// The events that time a GPU replica's step, recorded between its phases (outside any graph, so
// the breakdown means the same with graphs on or off). Steps alternate between two sets: one is
// read while the next one runs.
#pragma once

#include <cuda_runtime_api.h>

#include "engine/backend/step_phases.hpp"
#include "kernels/cuda/memory.hpp"

namespace gpulab {

class CudaStepTimer {
 public:
  // start | the host prepares the batch (batches from the host) | copy | gather | forward (+ loss
  // copy) | backward | the wait for the reduced gradients | optimizer. The data phase is the
  // host's preparing (start to prepared: what the stream waited for it, beyond the step before)
  // and the gather on the device (copied to gathered); the copy phase is the transfer alone.
  enum Mark {
    kStart,
    kPrepared,
    kCopied,
    kGathered,
    kForward,
    kBackward,
    kReduced,
    kOptimizer,
    kMarks
  };
  CudaStepTimer();  // on the current device
  void begin_step();
  void record(Mark mark, cudaStream_t stream);
  cudaEvent_t event(Mark mark) const { return current()[mark].get(); }
  // Once this step's forward mark has completed: the step before it has completed too, and its
  // breakdown is returned; the first step returns its own data, copy and forward. A phase whose
  // marks were not both recorded in that step (a step that failed half way) or have not both
  // completed reads 0: a timing is skipped, never the run failed for it.
  StepTimes read() const;

 private:
  int slot() const { return int(steps_ % 2); }
  const kernels::cuda::Event* current() const { return events_[slot()]; }
  kernels::cuda::Event events_[2][kMarks];
  bool recorded_[2][kMarks] = {};  // per slot: the marks recorded in its latest step
  long long steps_ = -1;
};

}  // namespace gpulab
