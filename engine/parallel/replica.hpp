// Data parallelism's first piece: a replica, one copy of the model on one device, with its step
// in phases (take its shard of the batch, forward and backward, expose its gradients and where
// they live, apply the update). engine/parallel/gradient_reducer.hpp is the second piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "datasets/mnist.hpp"
#include "engine/backend/backend.hpp"

namespace gpulab {

enum class MemoryKind { Host, Device };

// A replica's parameters or gradients and where they live, so that a reducer can reach them:
// host memory on the CPU; a CUDA replica gives its device, the pointer and its stream.
struct BufferView {
  float* data = nullptr;  // (count)
  size_t count = 0;
  MemoryKind memory = MemoryKind::Host;
  int device = -1;         // the CUDA device of device memory
  void* stream = nullptr;  // the replica's cudaStream_t, for device memory
};

// Called on a replica's thread during its backward pass: gradients()[from, count) are final
// (for a device replica: their kernels are enqueued on its stream).
using GradientsReady = std::function<void(size_t from)>;

class Replica {
 public:
  virtual ~Replica() = default;
  // Whom compute_gradients tells, layer by layer, which gradients are final, so that a reducer
  // can start on them while backward goes on. A replica that never calls it is still correct:
  // the reducer then starts everything after backward.
  virtual void set_gradients_ready(GradientsReady ready) { (void)ready; }
  // Phases 1 and 2: gathers the images `shard` of the training set (at position
  // `position.first_image` of a batch of `position.global_batch`), runs forward, the loss and
  // backward. Fills times' data, copy, forward and backward.
  virtual BatchStats compute_gradients(std::span<const int32_t> shard, Shard position, int64_t step,
                                       StepTimes& times) = 0;
  // Phase 3: where the gradients of the last backward, and the parameters, live.
  virtual BufferView gradients() = 0;
  virtual BufferView parameters() = 0;
  // Phase 4: the optimizer step on gradients() (by then the whole batch's); the one update of
  // this device kind.
  virtual void apply_update(float lr, int64_t step) = 0;
  virtual void set_parameters(std::span<const float> params) = 0;
  virtual void get_parameters(std::span<float> params) = 0;
  // Loss and accuracy over `indices` of `set`, no dropout, no update; ends at its next batch
  // once *evaluation_stop_ is set (Backend::stop_evaluations_on).
  virtual BatchStats evaluate(const data::ImageSet& set, std::span<const int32_t> indices) = 0;
  void stop_evaluations_on(const std::atomic<bool>* stop) { evaluation_stop_ = stop; }
  // True for a replica whose phases run on a device after its calls return (a GPU's stream): it
  // fills every phase of `times` itself, from device events and a step late, and the host's
  // timing of apply_update, which only enqueues the update, is not its optimizer time.
  virtual bool times_itself() const { return false; }
  // Waits for the work its calls left running (a GPU's stream); throws the device's error.
  virtual void synchronize() {}
  // Called once an error left the backend unusable (leaves_backend_unusable): frees what it
  // holds on its device, after waiting for its own work (errors ignored); later calls throw.
  virtual void release() {}

 protected:
  bool evaluation_stopped() const { return evaluation_stop_ && evaluation_stop_->load(); }

 private:
  const std::atomic<bool>* evaluation_stop_ = nullptr;
};

// Images [first, first + count) of a batch of `batch` for replica `replica` of `replicas`: an
// even split, the first `batch % replicas` replicas taking one image more.
struct ShardRange {
  int first = 0, count = 0;
};
inline ShardRange shard_range(int batch, int replicas, int replica) {
  const int base = batch / replicas, extra = batch % replicas;
  return {replica * base + (replica < extra ? replica : extra), base + (replica < extra ? 1 : 0)};
}

}  // namespace gpulab
