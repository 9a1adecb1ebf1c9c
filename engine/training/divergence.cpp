// Divergence of a run's loss.
#include "engine/training/divergence.hpp"

#include <numeric>
#include <sstream>

namespace gpulab {
namespace {

double mean(const std::deque<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
}

}  // namespace

void DivergenceWatch::add(double loss, double accuracy) {
  if (steps_++ == 0) {
    first_loss_ = loss;
    first_accuracy_ = accuracy;
  }
  last_loss_.push_back(loss);
  last_accuracy_.push_back(accuracy);
  if (int(last_loss_.size()) > kLastSteps) {
    last_loss_.pop_front();
    last_accuracy_.pop_front();
  }
}

std::string DivergenceWatch::verdict(float lr) const {
  if (steps_ < 2 * kLastSteps || !(first_loss_ > 0)) return {};
  const double end_loss = mean(last_loss_), end_accuracy = mean(last_accuracy_);
  std::ostringstream text;
  text.precision(3);
  if (end_loss > kRiseFactor * first_loss_) {
    text << "diverged: the loss rose from " << first_loss_ << " at the first step to " << end_loss
         << " over the last " << kLastSteps << " steps";
  } else if (steps_ >= kStuckSteps && end_loss >= 0.95 * first_loss_ &&
             end_accuracy <= first_accuracy_ + 0.05) {
    text << "diverged: after " << steps_ << " steps the loss (" << end_loss
         << ") is no lower than at the first step (" << first_loss_ << ") and the accuracy ("
         << 100 * end_accuracy << " %) is where it started, at chance";
  } else {
    return {};
  }
  text << "; try a lower learning rate (--lr " << lr << " now)";
  return text.str();
}

}  // namespace gpulab
