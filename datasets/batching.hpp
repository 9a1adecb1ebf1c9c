// Batching: a deterministic shuffle that gives the same order on every platform and standard
// library, a sampler that cuts an epoch into batches, and gathering a batch into float input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "datasets/mnist.hpp"

namespace gpulab::data {

// A permutation of 0..count-1 that depends only on (seed, epoch). Hand-written generator and
// bounded draw instead of std::shuffle, whose output differs between standard libraries.
std::vector<int32_t> shuffled_indices(int count, uint64_t seed, uint64_t epoch);

class BatchSampler {
 public:
  // Throws std::invalid_argument for count < 1, batch_size < 1, or drop_last leaving no batch.
  BatchSampler(int count, int batch_size, bool shuffle, uint64_t seed, bool drop_last = false);

  // Reorders for this epoch (a no-op without shuffle: the order is file order).
  void start_epoch(uint64_t epoch);
  int batches_per_epoch() const;
  // Indices of batch i; the last one may be shorter unless drop_last. Throws std::out_of_range.
  std::span<const int32_t> batch(int i) const;
  int batch_size() const { return batch_size_; }
  int count() const { return count_; }

 private:
  int count_;
  int batch_size_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  std::vector<int32_t> order_;  // (count)
};

// Copies the chosen images, normalized, and their labels. Allocates nothing.
// images_out: (n, rows * cols), labels_out: (n), n = indices.size().
// Throws std::out_of_range for an index outside the set.
void gather_batch(float* images_out, uint8_t* labels_out, const ImageSet& set,
                  std::span<const int32_t> indices);

}  // namespace gpulab::data
