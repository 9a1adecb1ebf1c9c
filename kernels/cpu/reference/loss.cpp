// Reference softmax cross-entropy, the mean over the batch as PyTorch's CrossEntropyLoss, in
// double precision with the max subtracted before exp.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::ref {

void softmax_cross_entropy(float* dlogits, double* loss_sum, int* correct, const float* logits,
                           const uint8_t* labels, int batch, int classes, int normalizer) {
  // dlogits (N,C) or nullptr, logits (N,C), labels (N)
  double total = 0;
  int hits = 0;
  for (int n = 0; n < batch; ++n) {
    const float* row = logits + size_t(n) * classes;
    if (labels[n] >= classes)
      throw std::invalid_argument("softmax_cross_entropy: label " + std::to_string(labels[n]) +
                                  " of sample " + std::to_string(n) + " is not below " +
                                  std::to_string(classes));
    int best = 0;
    for (int c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    double sum_exp = 0;
    for (int c = 0; c < classes; ++c) sum_exp += std::exp(double(row[c]) - row[best]);
    const double log_sum_exp = row[best] + std::log(sum_exp);
    total += log_sum_exp - row[labels[n]];
    hits += best == labels[n];
    if (dlogits != nullptr)
      for (int c = 0; c < classes; ++c) {
        const double p = std::exp(double(row[c]) - log_sum_exp);
        dlogits[size_t(n) * classes + c] =
            float((p - (c == labels[n])) / (normalizer > 0 ? normalizer : batch));
      }
  }
  if (loss_sum != nullptr) *loss_sum = total;
  if (correct != nullptr) *correct = hits;
}

}  // namespace gpulab::kernels::ref
