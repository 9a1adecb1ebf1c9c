// Telling a run that diverged from one that learns, from its step losses alone: a NaN or an
// infinite loss stops a run at once (the trainer marks it failed); this catches what stays finite,
// as a learning rate of 5 does: the loss far above where it started, or no better than at the
// start after many steps while the accuracy stays where it began (at chance).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

namespace gpulab {

class DivergenceWatch {
 public:
  void add(double loss, double accuracy);
  // Empty when the run looks sane (or is too short to tell); else what happened, with a hint
  // about the learning rate the run used.
  std::string verdict(float lr) const;

  static constexpr int kLastSteps = 20;        // the "end" of a run: the mean of its last steps
  static constexpr double kRiseFactor = 2;     // loss this many times its start: diverged
  static constexpr int64_t kStuckSteps = 100;  // no better after this many steps: not learning

 private:
  int64_t steps_ = 0;
  double first_loss_ = 0, first_accuracy_ = 0;  // the first step: the model as initialized
  std::deque<double> last_loss_, last_accuracy_;
};

}  // namespace gpulab
