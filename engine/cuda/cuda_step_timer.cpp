// Reading a step's phases from its events.
#include "engine/cuda/cuda_step_timer.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

CudaStepTimer::CudaStepTimer() {
  for (auto& set : events_)
    for (kc::Event& e : set) e = kc::make_event();
}

void CudaStepTimer::begin_step() {
  ++steps_;
  for (bool& recorded : recorded_[slot()]) recorded = false;
}

void CudaStepTimer::record(Mark mark, cudaStream_t stream) {
  GPULAB_CUDA_CHECK(cudaEventRecord(current()[mark].get(), stream));
  recorded_[slot()][mark] = true;
}

StepTimes CudaStepTimer::read() const {
  const int done = steps_ > 0 ? int((steps_ + 1) % 2) : slot();
  const auto phase_ms = [&](Mark from, Mark to) {
    if (!recorded_[done][from] || !recorded_[done][to]) return 0.0;
    return kc::elapsed_ms_if_completed(events_[done][from].get(), events_[done][to].get())
        .value_or(0.0);
  };
  StepTimes times;
  times.data_ms = phase_ms(kStart, kPrepared) + phase_ms(kCopied, kGathered);
  times.copy_ms = phase_ms(kPrepared, kCopied);
  times.forward_ms = phase_ms(kGathered, kForward);
  if (steps_ > 0) {
    times.backward_ms = phase_ms(kForward, kBackward);
    times.allreduce_ms = phase_ms(kBackward, kReduced);
    times.optimizer_ms = phase_ms(kReduced, kOptimizer);
  }
  return times;
}

}  // namespace gpulab
