// The deterministic shuffle (splitmix64 seeding xoshiro256**, Lemire's bounded draw,
// Fisher-Yates), the batch sampler, and gathering a batch into normalized floats.
#include "datasets/batching.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpulab::data {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): turns any seed, even 0, into well-mixed state words.
uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman, Vigna 2018). Spelled out here because the order it produces is part of
// what a run's seed means: changing this code changes every shuffled run.
class Xoshiro256StarStar {
 public:
  Xoshiro256StarStar(uint64_t seed, uint64_t stream) {
    // The seed is mixed before the epoch is folded in, so (1, 0) and (0, 1) differ.
    uint64_t seed_state = seed;
    uint64_t state = splitmix64_next(seed_state) ^ stream;
    for (uint64_t& word : s_) word = splitmix64_next(state);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, range), unbiased (Lemire 2019: multiply, reject the short first interval).
  uint32_t bounded(uint32_t range) {
    uint64_t product = uint64_t(uint32_t(next() >> 32)) * range;
    uint32_t low = uint32_t(product);
    if (low < range) {
      const uint32_t threshold = uint32_t(-range) % range;
      while (low < threshold) {
        product = uint64_t(uint32_t(next() >> 32)) * range;
        low = uint32_t(product);
      }
    }
    return uint32_t(product >> 32);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Fisher-Yates over 0..n-1, in place, so the sampler reuses its buffer every epoch.
void fill_shuffled(std::vector<int32_t>& order, uint64_t seed, uint64_t epoch) {
  std::iota(order.begin(), order.end(), 0);
  Xoshiro256StarStar generator(seed, epoch);
  for (size_t i = order.size(); i > 1; --i) {
    const uint32_t j = generator.bounded(uint32_t(i));
    std::swap(order[i - 1], order[j]);
  }
}

}  // namespace

std::vector<int32_t> shuffled_indices(int count, uint64_t seed, uint64_t epoch) {
  if (count < 0)
    throw std::invalid_argument("shuffled_indices: count is " + std::to_string(count) +
                                ", expected 0 or more");
  std::vector<int32_t> order(count);
  fill_shuffled(order, seed, epoch);
  return order;
}

BatchSampler::BatchSampler(int count, int batch_size, bool shuffle, uint64_t seed, bool drop_last)
    : count_(count),
      batch_size_(batch_size),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  if (count < 1)
    throw std::invalid_argument("BatchSampler: count is " + std::to_string(count) +
                                ", expected at least 1 image");
  if (batch_size < 1)
    throw std::invalid_argument("BatchSampler: batch size is " + std::to_string(batch_size) +
                                ", expected at least 1");
  if (drop_last && batch_size > count)
    throw std::invalid_argument(
        "BatchSampler: batch size " + std::to_string(batch_size) + " with drop_last on " +
        std::to_string(count) +
        " images leaves no batch; expected batch size <= " + std::to_string(count));
  order_.resize(count);
  std::iota(order_.begin(), order_.end(), 0);
  start_epoch(0);
}

void BatchSampler::start_epoch(uint64_t epoch) {
  if (shuffle_) fill_shuffled(order_, seed_, epoch);
}

int BatchSampler::batches_per_epoch() const {
  return drop_last_ ? count_ / batch_size_ : (count_ + batch_size_ - 1) / batch_size_;
}

std::span<const int32_t> BatchSampler::batch(int i) const {
  if (i < 0 || i >= batches_per_epoch())
    throw std::out_of_range("BatchSampler: batch " + std::to_string(i) + " of an epoch with " +
                            std::to_string(batches_per_epoch()) + " batches");
  const size_t begin = size_t(i) * size_t(batch_size_);
  const size_t size = std::min(size_t(batch_size_), order_.size() - begin);
  return std::span<const int32_t>(order_).subspan(begin, size);
}

void gather_batch(float* images_out, uint8_t* labels_out, const ImageSet& set,
                  std::span<const int32_t> indices) {
  const size_t image_size = size_t(set.image_size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const int32_t index = indices[k];
    if (index < 0 || index >= set.count)
      throw std::out_of_range("gather_batch: index " + std::to_string(index) +
                              " is outside a set of " + std::to_string(set.count) + " images");
    normalize_pixels(images_out + k * image_size, set.pixels.data() + size_t(index) * image_size,
                     image_size);
    labels_out[k] = set.labels[index];
  }
}

}  // namespace gpulab::data
