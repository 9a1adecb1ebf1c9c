// What an error does to a backend, on the CPU with replicas that fail on purpose: an ordinary
// error (std::out_of_range, a ConfigError, a bad argument) passes through unchanged and the
// backend goes on; a device fault or out of device memory releases every replica and the
// reducer, says what the release led to, and later calls say the backend failed earlier. The
// rule is one function for every backend, so the GPU backend follows it too.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/base/errors.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/replicated_backend.hpp"
#include "kernels/device_error.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

using kernels::DeviceError;
using kernels::ErrorKind;

// What a replica throws, and from which call.
enum class Call { SetParameters, Step, Evaluate };

// A replica with no model (its gradients are ones) that throws `throw_error` once, from `call`,
// and counts its releases.
class FailingReplica final : public Replica {
 public:
  FailingReplica(size_t count, Call call, std::function<void()> throw_error)
      : params_(count, 0.0f), grads_(count, 0.0f), call_(call), throw_(std::move(throw_error)) {}
  BatchStats compute_gradients(std::span<const int32_t> shard, Shard, int64_t,
                               StepTimes&) override {
    maybe_fail(Call::Step);
    std::fill(grads_.begin(), grads_.end(), 1.0f);
    return {0.5 * double(shard.size()), 0, int(shard.size())};
  }
  BufferView gradients() override { return {grads_.data(), grads_.size()}; }
  BufferView parameters() override { return {params_.data(), params_.size()}; }
  void apply_update(float lr, int64_t) override {
    for (size_t i = 0; i < params_.size(); ++i) params_[i] -= lr * grads_[i];
  }
  void set_parameters(std::span<const float> params) override {
    maybe_fail(Call::SetParameters);
    std::copy(params.begin(), params.end(), params_.begin());
  }
  void get_parameters(std::span<float> params) override {
    std::copy(params_.begin(), params_.end(), params.begin());
  }
  BatchStats evaluate(const data::ImageSet&, std::span<const int32_t> indices) override {
    maybe_fail(Call::Evaluate);
    return {0.5 * double(indices.size()), int(indices.size()), int(indices.size())};
  }
  void release() override { ++releases; }
  int releases = 0;

 private:
  void maybe_fail(Call call) {
    if (call != call_ || !throw_) return;
    const std::function<void()> once = std::exchange(throw_, nullptr);
    once();
  }
  std::vector<float> params_, grads_;
  Call call_;
  std::function<void()> throw_;
};

// R FailingReplicas on threads (the threads reducer for several); replica `bad` throws. The
// backend adds `note` to a fatal error's message, as the GPU backend says what a reset did.
class FailingReplicas final : public ReplicatedBackend {
 public:
  FailingReplicas(int replicas, int bad, Call call, std::function<void()> throw_error,
                  std::string note = {})
      : note_(std::move(note)) {
    constexpr size_t kCount = 100;
    std::vector<std::unique_ptr<Replica>> list;
    for (int r = 0; r < replicas; ++r) {
      auto replica =
          std::make_unique<FailingReplica>(kCount, call, r == bad ? throw_error : nullptr);
      replicas_.push_back(replica.get());
      list.push_back(std::move(replica));
    }
    auto reducer =
        replicas > 1 ? make_threads_reducer(replicas, kCount, 1 << 20, 30) : make_no_reducer();
    assemble(std::move(list), std::move(reducer), nullptr, data_.sets, kCount, 1,
             "failing replicas");
  }
  int releases() const {
    int total = 0;
    for (const FailingReplica* r : replicas_) total += r->releases;
    return total;
  }

 private:
  std::string after_release(const std::exception_ptr&) override { return note_; }

  struct Data {
    data::ImageSet train = test::synthetic_set(12, 1), test = test::synthetic_set(12, 2);
    DataSets sets{&train, nullptr, &test};
  };
  Data data_;
  std::string note_;
  std::vector<FailingReplica*> replicas_;  // owned by ReplicatedBackend
};

const std::vector<int32_t> kBatch = {0, 1, 2, 3, 4, 5};

// Runs `call` on the backend; returns the exception it threw (null when none).
std::exception_ptr run(ReplicatedBackend& backend, Call call) {
  try {
    StepTimes times;
    switch (call) {
      case Call::SetParameters:
        backend.set_parameters(std::vector<float>(100, 0.25f));
        break;
      case Call::Step:
        backend.train_step(kBatch, 0.1f, 1, times);
        break;
      case Call::Evaluate:
        backend.evaluate(Split::Test, kBatch);
        break;
    }
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// The error itself, or the cause a ReplicaError carries.
std::exception_ptr unwrapped(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ReplicaError& e) {
    return e.cause();
  } catch (...) {
    return error;
  }
}

std::string message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

template <class Error>
bool is(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error&) {
    return true;
  } catch (...) {
    return false;
  }
}

TEST(BackendFailure, OnlyAFaultOrOutOfMemoryLeavesABackendUnusable) {
  EXPECT_TRUE(kernels::leaves_device_unusable(ErrorKind::DeviceFault));
  EXPECT_TRUE(kernels::leaves_device_unusable(ErrorKind::OutOfMemory));
  EXPECT_FALSE(kernels::leaves_device_unusable(ErrorKind::Other));
  EXPECT_FALSE(kernels::leaves_device_unusable(ErrorKind::NoDevice));
  const auto fault = std::make_exception_ptr(DeviceError(ErrorKind::DeviceFault, "trap"));
  EXPECT_TRUE(leaves_backend_unusable(fault));
  EXPECT_TRUE(leaves_backend_unusable(
      std::make_exception_ptr(DeviceError(ErrorKind::OutOfMemory, "out of GPU memory"))));
  // A replica's fault reaches the backend wrapped, naming the replica: still a fault.
  EXPECT_TRUE(leaves_backend_unusable(
      std::make_exception_ptr(ReplicaError("replica 1 failed at step 3: trap", fault))));
  EXPECT_EQ(device_error_kind(std::make_exception_ptr(ReplicaError("replica 1", fault))),
            ErrorKind::DeviceFault);
  for (const std::exception_ptr& ordinary :
       {std::make_exception_ptr(DeviceError(ErrorKind::Other, "invalid argument")),
        std::make_exception_ptr(ConfigError("no validation set was loaded")),
        std::make_exception_ptr(std::out_of_range("index 12 is outside a set of 12 images")),
        std::make_exception_ptr(ReplicaError("replica 1: loss became NaN")),
        std::make_exception_ptr(CollectiveError("timed out")), std::exception_ptr()})
    EXPECT_FALSE(leaves_backend_unusable(ordinary)) << (ordinary ? message(ordinary) : "null");
}

TEST(BackendFailure, AnOrdinaryErrorPassesThroughAndTheBackendGoesOn) {
  const std::vector<std::pair<std::string, std::function<void()>>> errors = {
      {"out_of_range", [] { throw std::out_of_range("index 12 is outside a set of 12"); }},
      {"ConfigError", [] { throw ConfigError("no validation set was loaded"); }},
      {"invalid_argument", [] { throw std::invalid_argument("12 values for 100 parameters"); }},
      {"DeviceError(Other)", [] { throw DeviceError(ErrorKind::Other, "invalid argument"); }},
  };
  for (const int replicas : {1, 3}) {
    for (const Call call : {Call::SetParameters, Call::Step, Call::Evaluate}) {
      for (const auto& [name, throw_error] : errors) {
        const std::string what =
            name + ", " + std::to_string(replicas) + " replicas, call " + std::to_string(int(call));
        FailingReplicas backend(replicas, replicas - 1, call, throw_error);
        const std::exception_ptr error = run(backend, call);
        ASSERT_TRUE(error) << what;
        // With one replica (or on the caller's thread) the error comes as it was thrown; from a
        // replica's thread it comes as a ReplicaError naming the replica, carrying it.
        const std::exception_ptr cause = unwrapped(error);
        if (name == "out_of_range") {
          EXPECT_TRUE(is<std::out_of_range>(cause)) << what;
        } else if (name == "ConfigError") {
          EXPECT_TRUE(is<ConfigError>(cause)) << what;
        } else if (name == "invalid_argument") {
          EXPECT_TRUE(is<std::invalid_argument>(cause)) << what;
        }
        if (replicas == 1 || call == Call::SetParameters) {
          EXPECT_EQ(cause, error) << what << ": " << message(error);
        }
        EXPECT_EQ(backend.releases(), 0) << what;
        // The backend goes on: every call works again.
        EXPECT_FALSE(run(backend, Call::SetParameters)) << what;
        EXPECT_FALSE(run(backend, Call::Step)) << what;
        EXPECT_FALSE(run(backend, Call::Evaluate)) << what;
      }
    }
  }
}

TEST(BackendFailure, AFaultOrOutOfMemoryReleasesEveryReplicaAndLaterCallsSaySo) {
  for (const ErrorKind kind : {ErrorKind::DeviceFault, ErrorKind::OutOfMemory}) {
    for (const int replicas : {1, 3}) {
      for (const Call call : {Call::SetParameters, Call::Step, Call::Evaluate}) {
        const std::string what = std::to_string(int(kind)) + ", " + std::to_string(replicas) +
                                 " replicas, call " + std::to_string(int(call));
        FailingReplicas backend(
            replicas, replicas - 1, call,
            [kind] { throw DeviceError(kind, "cuda:0: the GPU failed"); }, "; cuda:0 was reset");
        const std::exception_ptr error = run(backend, call);
        ASSERT_TRUE(error) << what;
        EXPECT_EQ(device_error_kind(error), kind) << what;
        // What the release led to is part of the message, on the error as it was thrown.
        EXPECT_NE(message(error).find("cuda:0: the GPU failed; cuda:0 was reset"),
                  std::string::npos)
            << what << ": " << message(error);
        EXPECT_EQ(backend.releases(), replicas) << what;
        for (const Call later : {Call::SetParameters, Call::Step, Call::Evaluate}) {
          const std::exception_ptr again = run(backend, later);
          ASSERT_TRUE(again) << what;
          EXPECT_TRUE(is<std::logic_error>(again)) << what;
          EXPECT_NE(message(again).find("failed earlier: "), std::string::npos) << message(again);
          EXPECT_NE(message(again).find("the GPU failed"), std::string::npos) << message(again);
        }
        EXPECT_EQ(backend.releases(), replicas) << what << ": released once";
      }
    }
  }
}

}  // namespace
}  // namespace gpulab
