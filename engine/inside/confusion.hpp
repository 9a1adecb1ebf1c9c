// The confusion matrix of a model on a labelled image set, its per-class accuracy and the images
// it gets wrong, from the model's own probabilities (engine/inside/model_weights.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/base/output_kind.hpp"
#include "engine/inside/model_weights.hpp"

namespace gpulab {

// One image the model got wrong.
struct Mistake {
  int index = 0;  // position in the image set
  int truth = 0;
  int predicted = 0;
  float p_predicted = 0;  // the probability the model gave its prediction
  float p_truth = 0;      // and the true class
};

struct Confusion {
  int classes = 0;
  std::vector<int64_t> counts;    // (classes, classes): [truth][predicted]
  std::vector<Mistake> mistakes;  // in the order of the set
  int64_t count(int truth, int predicted) const {
    return counts[size_t(truth) * classes + predicted];
  }
  int64_t total() const;
  int64_t correct() const;  // the diagonal
  double accuracy() const;  // correct / total
  // Each true class's share of its images predicted correctly; 0 for a class with no images.
  std::vector<double> class_accuracy() const;
  // (classes, classes): each row divided by its sum (a row of zeros stays zeros).
  std::vector<double> row_normalized() const;
};

// Told how many images of how many are counted, now and then; returning false stops the count.
using ConfusionProgress = std::function<bool(int done, int total)>;

// The model's verdict on every image of `set`, forward passes of `batch` images. With `progress`,
// a confusion stopped by it counts only the images before the stop (total() says how many).
Confusion confusion_matrix(const ModelWeights& model, const data::ImageSet& set, int batch = 256,
                           const ConfusionProgress& progress = {});

// "true\predicted,0,1,...,9" then a row per true class: its label then the counts, or with
// `row_normalized` each row's shares (6 decimals).
std::string confusion_csv(const Confusion& confusion, bool row_normalized = false);

// A confusion matrix's CSV as confusion_csv writes it (its first cell "true\\predicted"): what
// eval --confusion and the Inside tab's CSV export may replace.
const OutputKind& confusion_csv_kind();

}  // namespace gpulab
