// Reading a step's phases from its events.
#include "engine/cuda_step_timer.hpp"

namespace gpulab {

namespace kc = kernels::cuda;

namespace {
double elapsed_ms(const kc::Event& from, const kc::Event& to) {
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}
}  // namespace

CudaStepTimer::CudaStepTimer() {
  for (auto& set : events_)
    for (kc::Event& e : set) e = kc::make_event();
}

void CudaStepTimer::begin_step() { ++steps_; }

void CudaStepTimer::record(Mark mark, cudaStream_t stream) {
  GPULAB_CUDA_CHECK(cudaEventRecord(current()[mark].get(), stream));
}

StepTimes CudaStepTimer::read() const {
  const kc::Event* done = steps_ > 0 ? events_[(steps_ + 1) % 2] : current();
  StepTimes times;
  times.copy_ms = elapsed_ms(done[kStart], done[kCopied]);
  times.data_ms = elapsed_ms(done[kCopied], done[kGathered]);
  times.forward_ms = elapsed_ms(done[kGathered], done[kForward]);
  if (steps_ > 0) {
    times.backward_ms = elapsed_ms(done[kForward], done[kBackward]);
    times.allreduce_ms = elapsed_ms(done[kBackward], done[kReduced]);
    times.optimizer_ms = elapsed_ms(done[kReduced], done[kOptimizer]);
  }
  return times;
}

}  // namespace gpulab
