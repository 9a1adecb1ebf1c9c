// Fast softmax cross-entropy (mean over the batch, as PyTorch's CrossEntropyLoss): float math,
// rows split over the threads, per-thread sums added in thread order for repeatable bits.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

namespace gpulab::kernels::cpu {

void softmax_cross_entropy(float* dlogits, double* loss_sum, int* correct, const float* logits,
                           const uint8_t* labels, int batch, int classes, int normalizer) {
  // dlogits (N,C) or nullptr, logits (N,C), labels (N)
  for (int n = 0; n < batch; ++n)  // checked up front: an OpenMP region must not throw
    if (labels[n] >= classes)
      throw std::invalid_argument("softmax_cross_entropy: label " + std::to_string(labels[n]) +
                                  " of sample " + std::to_string(n) + " is not below " +
                                  std::to_string(classes));
  constexpr int kMaxThreads = 256;
  double thread_loss[kMaxThreads] = {};
  int thread_hits[kMaxThreads] = {};
  const int team = size_t(batch) * classes >= detail::kMinParallelElements / 4
                       ? std::min(detail::threads(), kMaxThreads)
                       : 1;
  const float inv_batch = 1.0f / float(normalizer > 0 ? normalizer : batch);
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num();
    double loss = 0;
    int hits = 0;
#pragma omp for schedule(static)
    for (int n = 0; n < batch; ++n) {
      const float* row = logits + size_t(n) * classes;
      const int label = labels[n];
      const int best = int(std::max_element(row, row + classes) - row);  // first maximum
      const float shift = row[best];
      // The label's term is kept out of the sum: its gradient p - 1 is then -(others / sum),
      // free of the cancellation that computing p - 1 suffers when p is close to 1.
      float others = 0.0f;
      for (int c = 0; c < classes; ++c)
        if (c != label) others += std::exp(row[c] - shift);
      const float label_exp = std::exp(row[label] - shift);
      const float sum_exp = others + label_exp;
      loss += double(std::log(sum_exp)) - (row[label] - shift);
      hits += best == label;
      if (dlogits != nullptr) {
        float* drow = dlogits + size_t(n) * classes;
        const float scale = inv_batch / sum_exp;
        for (int c = 0; c < classes; ++c) drow[c] = std::exp(row[c] - shift) * scale;
        drow[label] = -others * scale;
      }
    }
    thread_loss[t] = loss;
    thread_hits[t] = hits;
  }
  double total = 0;
  int total_hits = 0;
  for (int t = 0; t < team; ++t) {
    total += thread_loss[t];
    total_hits += thread_hits[t];
  }
  if (loss_sum != nullptr) *loss_sum = total;
  if (correct != nullptr) *correct = total_hits;
}

}  // namespace gpulab::kernels::cpu
