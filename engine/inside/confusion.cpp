// Counting the model's predictions against the labels.
#include "engine/inside/confusion.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <span>
#include <stdexcept>

#include "engine/backend/backend.hpp"

namespace gpulab {

int64_t Confusion::total() const {
  return std::accumulate(counts.begin(), counts.end(), int64_t(0));
}

int64_t Confusion::correct() const {
  int64_t sum = 0;
  for (int c = 0; c < classes; ++c) sum += count(c, c);
  return sum;
}

double Confusion::accuracy() const {
  const int64_t all = total();
  return all ? double(correct()) / double(all) : 0.0;
}

std::vector<double> Confusion::row_normalized() const {
  std::vector<double> rows(counts.size(), 0.0);
  for (int t = 0; t < classes; ++t) {
    int64_t sum = 0;
    for (int p = 0; p < classes; ++p) sum += count(t, p);
    if (sum == 0) continue;
    for (int p = 0; p < classes; ++p)
      rows[size_t(t) * classes + p] = double(count(t, p)) / double(sum);
  }
  return rows;
}

std::vector<double> Confusion::class_accuracy() const {
  const std::vector<double> rows = row_normalized();
  std::vector<double> accuracy(static_cast<size_t>(classes));
  for (int c = 0; c < classes; ++c) accuracy[c] = rows[size_t(c) * classes + c];
  return accuracy;
}

Confusion confusion_matrix(const ModelWeights& model, const data::ImageSet& set, int batch,
                           const ConfusionProgress& progress) {
  check_images_fit(model.plan.layers.front().input, set, "the test set");
  check_model_input(model, kDigitShape, "the confusion matrix");
  Confusion confusion;
  confusion.classes = model.plan.layers.back().output.channels;
  const int classes = confusion.classes;
  confusion.counts.assign(size_t(classes) * classes, 0);
  // In parts, so a window can show progress and stop between them; one part without a listener.
  const int part = progress ? std::max(batch, 1024) : std::max(set.count, 1);
  const size_t image_size = size_t(set.image_size());
  for (int first = 0; first < set.count; first += part) {
    const int n = std::min(part, set.count - first);
    const std::vector<float> probabilities = class_probabilities(
        model, std::span(set.pixels).subspan(size_t(first) * image_size, size_t(n) * image_size), n,
        batch);
    for (int k = 0; k < n; ++k) {
      const int i = first + k;
      const float* row = probabilities.data() + size_t(k) * classes;
      const int truth = set.labels[i];
      if (truth >= classes)
        throw std::invalid_argument("confusion_matrix: label " + std::to_string(truth) +
                                    " of image " + std::to_string(i) + " is not below " +
                                    std::to_string(classes));
      const int predicted = predicted_class(row, classes);
      ++confusion.counts[size_t(truth) * classes + predicted];
      if (predicted != truth)
        confusion.mistakes.push_back({i, truth, predicted, row[predicted], row[truth]});
    }
    if (progress && !progress(first + n, set.count)) break;
  }
  return confusion;
}

const OutputKind& confusion_csv_kind() {
  static const OutputKind kind =
      first_line_kind("a confusion matrix's CSV",
                      [](std::string_view line) { return line.starts_with("true\\predicted,"); });
  return kind;
}

std::string confusion_csv(const Confusion& confusion, bool row_normalized) {
  const std::vector<double> rows =
      row_normalized ? confusion.row_normalized() : std::vector<double>{};
  std::string csv = "true\\predicted";
  for (int p = 0; p < confusion.classes; ++p) (csv += ',') += std::to_string(p);
  csv += "\n";
  for (int t = 0; t < confusion.classes; ++t) {
    csv += std::to_string(t);
    for (int p = 0; p < confusion.classes; ++p) {
      csv += ',';
      if (row_normalized) {
        char share[32];
        std::snprintf(share, sizeof share, "%.6f", rows[size_t(t) * confusion.classes + p]);
        csv += share;
      } else {
        csv += std::to_string(confusion.count(t, p));
      }
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace gpulab
