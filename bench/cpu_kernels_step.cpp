// Times one training step (forward + backward, optionally Adam) of PyTorch's MNIST example net
// at batch 64 on the fast CPU kernels, with a per-op breakdown: the ops CpuNetwork calls for it
// (conv1 fused with its ReLU, conv2 with its ReLU and the pooling, gradients zeroed on all
// threads). Not built by default.
// Usage: cpu_kernels_step [threads=2] [steps=100] [batch=64]. Build (one command line) from the
// repository root, after building gpulab_kernels in build/:
//   g++ -O2 -std=c++20 -fopenmp -I. -o cpu_kernels_step bench/cpu_kernels_step.cpp
//       build/kernels/libgpulab_kernels.a -lopenblas
// Compare with bench/cpu_kernels_torch_step.py (same net in PyTorch).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/optimizer.hpp"

namespace k = gpulab::kernels;
using Clock = std::chrono::steady_clock;
using Vec = std::vector<float>;

namespace {

Vec random_vector(size_t n, uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  Vec v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

struct Param {
  Vec value, grad, m, v;
  explicit Param(Vec init) : value(std::move(init)) {
    grad.assign(value.size(), 0.0f);
    m.assign(value.size(), 0.0f);
    v.assign(value.size(), 0.0f);
  }
};

// Accumulated time per op name over the timed steps.
std::map<std::string, double> op_ms;
bool timing_ops = false;

template <class F>
void timed(const char* name, F&& f) {
  if (!timing_ops) {
    f();
    return;
  }
  const auto t0 = Clock::now();
  f();
  op_ms[name] += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void zero(Vec& v) { k::cpu::zero(v.data(), v.size()); }

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const int N = argc > 3 ? std::atoi(argv[3]) : 64;
  k::cpu::set_num_threads(threads);
  std::printf("BLAS: %s\n", k::cpu::blas_info());

  const k::Conv2dShape c1{N, 1, 28, 28, 32, 3, 3, 1, 0};
  const k::Conv2dShape c2{N, 32, 26, 26, 64, 3, 3, 1, 0};
  const k::Pool2dShape pool{N, 64, 24, 24, 2, 2};
  const int flat = 64 * 12 * 12, hidden = 128, classes = 10;

  Param w1(random_vector(32 * 9, 1, 1.0f / 3)), b1(random_vector(32, 2, 1.0f / 3));
  Param w2(random_vector(64 * 32 * 9, 3, 0.06f)), b2(random_vector(64, 4, 0.06f));
  Param w3(random_vector(size_t(hidden) * flat, 5, 0.01f)), b3(random_vector(hidden, 6, 0.01f));
  Param w4(random_vector(classes * hidden, 7, 0.09f)), b4(random_vector(classes, 8, 0.09f));
  Param* params[] = {&w1, &b1, &w2, &b2, &w3, &b3, &w4, &b4};

  const Vec x = random_vector(size_t(N) * 28 * 28, 9, 1.0f);
  std::vector<uint8_t> labels(N);
  for (int n = 0; n < N; ++n) labels[n] = uint8_t(n % classes);

  Vec r1(size_t(N) * 32 * 26 * 26);  // the first ReLU's output
  Vec p(size_t(N) * flat), mask1(p.size()), d1(p.size());
  std::vector<int32_t> argmax(p.size());
  Vec h(size_t(N) * hidden), hr(h.size()), mask2(h.size()), hd(h.size());
  Vec logits(size_t(N) * classes), dlogits(logits.size());
  Vec dhd(h.size()), dhr(h.size()), dh(h.size()), dd1(p.size()), dp(p.size());
  Vec dr1(r1.size());

  uint64_t counter = 0;
  int adam_t = 0;
  auto step = [&](bool adam) {
    timed("zero grads", [&] {
      for (Param* q : params) zero(q->grad);
    });
    timed("dropout_mask", [&] {
      k::dropout_mask(mask1.data(), mask1.size(), 0.25f, 1234, counter++);
      k::dropout_mask(mask2.data(), mask2.size(), 0.5f, 1234, counter++);
    });
    timed("conv1+relu fwd", [&] {
      k::cpu::conv2d_relu_forward(r1.data(), x.data(), w1.value.data(), b1.value.data(), c1);
    });
    timed("conv2+relu+pool fwd", [&] {
      k::cpu::conv2d_relu_maxpool_forward(p.data(), argmax.data(), r1.data(), w2.value.data(),
                                          b2.value.data(), c2, pool);
    });
    timed("dropout fwd",
          [&] { k::cpu::dropout_forward(d1.data(), p.data(), mask1.data(), p.size()); });
    timed("fc1 fwd", [&] {
      k::cpu::linear_forward(h.data(), d1.data(), w3.value.data(), b3.value.data(), N, flat,
                             hidden);
    });
    timed("relu fwd", [&] { k::cpu::relu_forward(hr.data(), h.data(), h.size()); });
    timed("dropout fwd",
          [&] { k::cpu::dropout_forward(hd.data(), hr.data(), mask2.data(), h.size()); });
    timed("fc2 fwd", [&] {
      k::cpu::linear_forward(logits.data(), hd.data(), w4.value.data(), b4.value.data(), N, hidden,
                             classes);
    });
    double loss_sum = 0;
    int correct = 0;
    timed("loss", [&] {
      k::cpu::softmax_cross_entropy(dlogits.data(), &loss_sum, &correct, logits.data(),
                                    labels.data(), N, classes);
    });
    // Backward: activation gradients are zeroed first, since backward passes accumulate.
    timed("zero grads", [&] {
      for (Vec* g : {&dhd, &dhr, &dh, &dd1, &dp, &dr1}) zero(*g);
    });
    timed("fc2 bwd", [&] {
      k::cpu::linear_backward(dhd.data(), w4.grad.data(), b4.grad.data(), dlogits.data(), hd.data(),
                              w4.value.data(), N, hidden, classes);
    });
    timed("dropout bwd",
          [&] { k::cpu::dropout_backward(dhr.data(), dhd.data(), mask2.data(), h.size()); });
    timed("relu bwd", [&] { k::cpu::relu_backward(dh.data(), dhr.data(), hr.data(), h.size()); });
    timed("fc1 bwd", [&] {
      k::cpu::linear_backward(dd1.data(), w3.grad.data(), b3.grad.data(), dh.data(), d1.data(),
                              w3.value.data(), N, flat, hidden);
    });
    timed("dropout bwd",
          [&] { k::cpu::dropout_backward(dp.data(), dd1.data(), mask1.data(), p.size()); });
    timed("conv2+relu+pool bwd", [&] {
      k::cpu::conv2d_relu_maxpool_backward(dr1.data(), w2.grad.data(), b2.grad.data(), dp.data(),
                                           p.data(), argmax.data(), r1.data(), w2.value.data(), c2,
                                           pool);
    });
    timed("conv1+relu bwd", [&] {
      k::cpu::conv2d_relu_backward(nullptr, w1.grad.data(), b1.grad.data(), dr1.data(), r1.data(),
                                   x.data(), w1.value.data(), c1);
    });
    if (adam) {
      timed("adam", [&] {  // per parameter tensor; the engine makes one call on a flat buffer
        ++adam_t;
        for (Param* q : params)
          k::adam_update(q->value.data(), q->m.data(), q->v.data(), q->grad.data(), q->value.size(),
                         1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, false, adam_t);
      });
    }
    return loss_sum / N;
  };

  for (bool adam : {false, true}) {
    for (int i = 0; i < 10; ++i) step(adam);
    std::vector<double> ms;
    for (int i = 0; i < steps; ++i) {
      const auto t0 = Clock::now();
      step(adam);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "gpulab fast CPU kernels, threads=%d batch=%d adam=%d: median %.2f ms/step, "
        "min %.2f, p90 %.2f (%d steps)\n",
        threads, N, int(adam), ms[ms.size() / 2], ms.front(), ms[ms.size() * 9 / 10], steps);
  }
  timing_ops = true;
  for (int i = 0; i < steps; ++i) step(true);
  std::printf("per-op mean ms (timed separately, adds a little overhead):\n");
  for (const auto& [name, total] : op_ms)
    std::printf("  %-20s %7.3f\n", name.c_str(), total / steps);
  return 0;
}
