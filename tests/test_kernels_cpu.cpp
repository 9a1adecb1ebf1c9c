// Tests of the CPU kernels: forwards worked out by hand, finite-difference gradient checks of the
// reference backward passes, the fast kernels against the reference, and the dropout mask.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/shape_check.hpp"

namespace {

namespace k = gpulab::kernels;
using Vec = std::vector<float>;

Vec random_vector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Values `gap` apart in a random order, none closer than gap/2 to zero: no ties for max pooling
// to break and no ReLU kink for a finite difference smaller than gap/2 to cross.
Vec distinct_vector(size_t n, uint32_t seed, float gap) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (float(i) - float(n) / 2.0f + 0.5f) * gap;
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

// mse(a, b) / mse(b, 0), ggml's test-backend-ops measure; plain mse when b is all zeros.
double normalized_error(const Vec& a, const Vec& b) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm > 0 ? err / norm : err;
}

bool all_finite(const Vec& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

constexpr double kMaxNormalizedError = 1e-9;

void expect_match(const Vec& fast, const Vec& ref, const std::string& what) {
  ASSERT_EQ(fast.size(), ref.size()) << what;
  EXPECT_TRUE(all_finite(fast)) << what << ": fast output has NaN or Inf";
  EXPECT_TRUE(all_finite(ref)) << what << ": reference output has NaN or Inf";
  EXPECT_LE(normalized_error(fast, ref), kMaxNormalizedError) << what;
}

double dot(const Vec& a, const Vec& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * b[i];
  return sum;
}

// Compares `analytic` with double-sided differences of `loss` over every element of `x`.
void check_gradient(Vec& x, const std::function<double()>& loss, const Vec& analytic, float eps,
                    const std::string& what, double tolerance = 2e-3) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  for (size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    x[i] = saved + eps;
    const double up = loss();
    const float x_up = x[i];
    x[i] = saved - eps;
    const double down = loss();
    const float x_down = x[i];
    x[i] = saved;
    // The float step actually taken, not 2*eps, which rounding changes.
    const double numeric = (up - down) / (double(x_up) - double(x_down));
    EXPECT_NEAR(analytic[i], numeric, tolerance * (1.0 + std::fabs(numeric)))
        << what << " element " << i;
  }
}

using k::detail::describe;

size_t input_size(const k::Conv2dShape& s) {
  return size_t(s.batch) * s.in_channels * s.in_height * s.in_width;
}
size_t output_size(const k::Conv2dShape& s) {
  return size_t(s.batch) * s.out_channels * s.out_height() * s.out_width();
}
size_t weight_size(const k::Conv2dShape& s) {
  return size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
}

// The two CPU implementations behind one table, so the hand-worked tests run on both.
struct Backend {
  const char* name;
  decltype(&k::ref::conv2d_forward) conv2d_forward;
  decltype(&k::ref::linear_forward) linear_forward;
  decltype(&k::ref::maxpool2d_forward) maxpool2d_forward;
  decltype(&k::ref::relu_forward) relu_forward;
  decltype(&k::ref::tanh_forward) tanh_forward;
  decltype(&k::ref::dropout_forward) dropout_forward;
  decltype(&k::ref::softmax_cross_entropy) softmax_cross_entropy;
};

const Backend kReference{"reference",
                         k::ref::conv2d_forward,
                         k::ref::linear_forward,
                         k::ref::maxpool2d_forward,
                         k::ref::relu_forward,
                         k::ref::tanh_forward,
                         k::ref::dropout_forward,
                         k::ref::softmax_cross_entropy};
const Backend kFast{"fast",
                    k::cpu::conv2d_forward,
                    k::cpu::linear_forward,
                    k::cpu::maxpool2d_forward,
                    k::cpu::relu_forward,
                    k::cpu::tanh_forward,
                    k::cpu::dropout_forward,
                    k::cpu::softmax_cross_entropy};

// Names the backend in test output (ctest lists "GetParam() = fast", not an address).
void PrintTo(const Backend* backend, std::ostream* os) { *os << backend->name; }

class HandWorked : public ::testing::TestWithParam<const Backend*> {};

// ---------------------------------------------------------------------------------------------
// (1) Forwards worked out by hand (the values agree with torch.nn.functional).

const Vec kImage3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const Vec kSobelX = {1, 0, -1, 2, 0, -2, 1, 0, -1};

TEST_P(HandWorked, Conv2dNoPadding) {
  k::Conv2dShape s{.batch = 1,
                   .in_channels = 1,
                   .in_height = 3,
                   .in_width = 3,
                   .out_channels = 1,
                   .kernel_h = 3,
                   .kernel_w = 3};
  const float bias = 1.0f;
  Vec out(1);
  // (1-3) + 2*(4-6) + (7-9) = -8, plus the bias.
  GetParam()->conv2d_forward(out.data(), kImage3x3.data(), kSobelX.data(), &bias, s);
  EXPECT_FLOAT_EQ(out[0], -7.0f);
}

TEST_P(HandWorked, Conv2dPaddingOneStrideTwo) {
  k::Conv2dShape s{.batch = 1,
                   .in_channels = 1,
                   .in_height = 3,
                   .in_width = 3,
                   .out_channels = 1,
                   .kernel_h = 3,
                   .kernel_w = 3,
                   .stride = 2,
                   .padding = 1};
  ASSERT_EQ(s.out_height(), 2);
  const float bias = 1.0f;
  Vec out(4);
  // The window centred on the top-left pixel sees only 1 2 / 4 5 under 0 -2 / 0 -1: -4-5 = -9.
  GetParam()->conv2d_forward(out.data(), kImage3x3.data(), kSobelX.data(), &bias, s);
  EXPECT_EQ(out, (Vec{-8, 10, -20, 22}));
}

TEST_P(HandWorked, Conv2dPaddingOneTwoChannelsNoBias) {
  // Channel 1 is channel 0 times 2 with the same kernel: the sum is 3x the one-channel result.
  k::Conv2dShape s{.batch = 1,
                   .in_channels = 2,
                   .in_height = 3,
                   .in_width = 3,
                   .out_channels = 1,
                   .kernel_h = 3,
                   .kernel_w = 3,
                   .stride = 1,
                   .padding = 1};
  Vec inp = kImage3x3, weight = kSobelX;
  for (float v : kImage3x3) inp.push_back(2 * v);
  weight.insert(weight.end(), kSobelX.begin(), kSobelX.end());
  Vec out(9);
  GetParam()->conv2d_forward(out.data(), inp.data(), weight.data(), nullptr, s);
  const Vec one_channel = {-9, -6, 9, -20, -8, 20, -21, -6, 21};  // torch, minus its bias 1
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(out[i], 3 * one_channel[i]) << i;
}

TEST_P(HandWorked, Linear) {
  const Vec inp = {1, 2, 3, 4, 5, 6};               // (2, 3)
  const Vec weight = {1, 0, -1, 0.5f, 0.5f, 0.5f};  // (2, 3)
  const Vec bias = {0.1f, -0.1f};
  Vec out(4);
  GetParam()->linear_forward(out.data(), inp.data(), weight.data(), bias.data(), 2, 3, 2);
  EXPECT_FLOAT_EQ(out[0], 1 - 3 + 0.1f);
  EXPECT_FLOAT_EQ(out[1], 3 - 0.1f);
  EXPECT_FLOAT_EQ(out[2], 4 - 6 + 0.1f);
  EXPECT_FLOAT_EQ(out[3], 7.5f - 0.1f);
}

TEST_P(HandWorked, MaxPool2x2) {
  const Vec inp = {1, 5, 2,  0,   //
                   3, 4, 8,  8,   //  ties keep the first maximum (index 6, not 7)
                   0, 0, -1, -2,  //
                   0, 9, -3, -4};
  k::Pool2dShape s{.batch = 1, .channels = 1, .in_height = 4, .in_width = 4};
  Vec out(4);
  std::vector<int32_t> argmax(4);
  GetParam()->maxpool2d_forward(out.data(), argmax.data(), inp.data(), s);
  EXPECT_EQ(out, (Vec{5, 8, 9, -1}));
  EXPECT_EQ(argmax, (std::vector<int32_t>{1, 6, 13, 10}));
}

TEST_P(HandWorked, ReluAndTanh) {
  const Vec inp = {-1, 0, 2, 1, -2};
  Vec out(5);
  GetParam()->relu_forward(out.data(), inp.data(), inp.size());
  EXPECT_EQ(out, (Vec{0, 0, 2, 1, 0}));
  GetParam()->tanh_forward(out.data(), inp.data(), inp.size());
  EXPECT_FLOAT_EQ(out[1], 0.0f);
  EXPECT_FLOAT_EQ(out[3], 0.76159415595576488f);
  EXPECT_FLOAT_EQ(out[4], -0.96402758007581690f);
}

TEST_P(HandWorked, Dropout) {
  const Vec inp = {1, 2, 3}, mask = {0, 2, 2};
  Vec out(3);
  GetParam()->dropout_forward(out.data(), inp.data(), mask.data(), 3);
  EXPECT_EQ(out, (Vec{0, 4, 6}));
}

TEST_P(HandWorked, CrossEntropyIsTheBatchMean) {
  // Row 0: logits [0, 0], label 0: loss ln 2. Row 1: softmax [1/4, 3/4], label 1: ln(4/3).
  const Vec logits = {0, 0, 0, std::log(3.0f)};
  const uint8_t labels[] = {0, 1};
  Vec dlogits(4);
  double loss_sum = 0;
  int correct = 0;
  GetParam()->softmax_cross_entropy(dlogits.data(), &loss_sum, &correct, logits.data(), labels, 2,
                                    2, 0);
  EXPECT_NEAR(loss_sum, std::log(2.0) + std::log(4.0 / 3.0), 1e-6);
  EXPECT_NEAR(loss_sum / 2, 0.4904, 1e-4);  // torch.nn.functional.cross_entropy
  EXPECT_EQ(correct, 2);                    // row 0's tie goes to the first class
  // (softmax - onehot) / N
  EXPECT_NEAR(dlogits[0], -0.25, 1e-6);
  EXPECT_NEAR(dlogits[1], 0.25, 1e-6);
  EXPECT_NEAR(dlogits[2], 0.125, 1e-6);
  EXPECT_NEAR(dlogits[3], -0.125, 1e-6);
}

// Two shards normalized by the whole batch give the rows the whole batch gives them.
TEST_P(HandWorked, CrossEntropyShardsTakeTheBatchNormalizer) {
  const Vec logits = {1, 1, 0, 1, 2, -1, 0.5f, 0.25f};
  const uint8_t labels[] = {0, 1, 0, 1};
  Vec whole(8), shards(8);
  double loss_sum = 0, first = 0, second = 0;
  int correct = 0;
  GetParam()->softmax_cross_entropy(whole.data(), &loss_sum, &correct, logits.data(), labels, 4, 2,
                                    0);
  GetParam()->softmax_cross_entropy(shards.data(), &first, &correct, logits.data(), labels, 3, 2,
                                    4);
  GetParam()->softmax_cross_entropy(shards.data() + 6, &second, &correct, logits.data() + 6,
                                    labels + 3, 1, 2, 4);
  EXPECT_EQ(whole, shards);
  EXPECT_NEAR(first + second, loss_sum, 1e-12);
}

TEST_P(HandWorked, CrossEntropyRejectsLabelsOutOfRange) {
  const Vec logits = {0, 0};
  const uint8_t labels[] = {2};
  double loss_sum = 0;
  int correct = 0;
  EXPECT_THROW(GetParam()->softmax_cross_entropy(nullptr, &loss_sum, &correct, logits.data(),
                                                 labels, 1, 2, 0),
               std::invalid_argument);
}

TEST_P(HandWorked, Conv2dRejectsAnEmptyOutput) {
  k::Conv2dShape s{.batch = 1,
                   .in_channels = 1,
                   .in_height = 2,
                   .in_width = 2,
                   .out_channels = 1,
                   .kernel_h = 3,
                   .kernel_w = 3};
  Vec out(1);
  EXPECT_THROW(GetParam()->conv2d_forward(out.data(), kImage3x3.data(), kSobelX.data(), nullptr, s),
               std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Cpu, HandWorked, ::testing::Values(&kReference, &kFast),
                         [](const auto& info) { return std::string(info.param->name); });

// ---------------------------------------------------------------------------------------------
// (2) Finite-difference gradient checks of the reference backward passes. Each uses the scalar
// loss sum(out * G) for a fixed random G, whose gradient with respect to out is G.

TEST(ReferenceGradient, Conv2dStrideAndPadding) {
  for (auto [stride, padding] : {std::pair{1, 0}, {2, 1}, {2, 2}}) {
    k::Conv2dShape s{.batch = 2,
                     .in_channels = 2,
                     .in_height = 5,
                     .in_width = 6,
                     .out_channels = 3,
                     .kernel_h = 3,
                     .kernel_w = 2,
                     .stride = stride,
                     .padding = padding};
    Vec inp = random_vector(input_size(s), 1), weight = random_vector(weight_size(s), 2);
    Vec bias = random_vector(s.out_channels, 3);
    const Vec g = random_vector(output_size(s), 4);
    Vec out(output_size(s));
    auto loss = [&] {
      k::ref::conv2d_forward(out.data(), inp.data(), weight.data(), bias.data(), s);
      return dot(out, g);
    };
    Vec dinp(inp.size()), dweight(weight.size()), dbias(bias.size());
    k::ref::conv2d_backward(dinp.data(), dweight.data(), dbias.data(), g.data(), inp.data(),
                            weight.data(), s);
    check_gradient(inp, loss, dinp, 1e-2f, "conv dinp " + describe(s));
    check_gradient(weight, loss, dweight, 1e-2f, "conv dweight " + describe(s));
    check_gradient(bias, loss, dbias, 1e-2f, "conv dbias " + describe(s));
  }
}

TEST(ReferenceGradient, Linear) {
  const int batch = 3, in_features = 7, out_features = 4;
  Vec inp = random_vector(batch * in_features, 5);
  Vec weight = random_vector(out_features * in_features, 6), bias = random_vector(out_features, 7);
  const Vec g = random_vector(batch * out_features, 8);
  Vec out(g.size());
  auto loss = [&] {
    k::ref::linear_forward(out.data(), inp.data(), weight.data(), bias.data(), batch, in_features,
                           out_features);
    return dot(out, g);
  };
  Vec dinp(inp.size()), dweight(weight.size()), dbias(bias.size());
  k::ref::linear_backward(dinp.data(), dweight.data(), dbias.data(), g.data(), inp.data(),
                          weight.data(), batch, in_features, out_features);
  check_gradient(inp, loss, dinp, 1e-2f, "linear dinp");
  check_gradient(weight, loss, dweight, 1e-2f, "linear dweight");
  check_gradient(bias, loss, dbias, 1e-2f, "linear dbias");
}

TEST(ReferenceGradient, MaxPool) {
  for (auto [kernel, stride] : {std::pair{2, 2}, {3, 2}, {2, 1}}) {
    k::Pool2dShape s{.batch = 2,
                     .channels = 2,
                     .in_height = 5,
                     .in_width = 7,
                     .kernel = kernel,
                     .stride = stride};
    const size_t out_size = size_t(s.batch) * s.channels * s.out_height() * s.out_width();
    Vec inp = distinct_vector(size_t(s.batch) * s.channels * s.in_height * s.in_width, 9, 0.01f);
    const Vec g = random_vector(out_size, 10);
    Vec out(out_size);
    std::vector<int32_t> argmax(out_size);
    auto loss = [&] {
      k::ref::maxpool2d_forward(out.data(), argmax.data(), inp.data(), s);
      return dot(out, g);
    };
    loss();
    Vec dinp(inp.size());
    k::ref::maxpool2d_backward(dinp.data(), g.data(), argmax.data(), s);
    check_gradient(
        inp, loss, dinp, 1e-3f,
        "maxpool kernel " + std::to_string(kernel) + " stride " + std::to_string(stride));
  }
}

TEST(ReferenceGradient, ReluAndTanh) {
  Vec inp = distinct_vector(40, 11, 0.05f);
  const Vec g = random_vector(inp.size(), 12);
  Vec out(inp.size()), dinp(inp.size());
  auto relu_loss = [&] {
    k::ref::relu_forward(out.data(), inp.data(), inp.size());
    return dot(out, g);
  };
  relu_loss();
  k::ref::relu_backward(dinp.data(), g.data(), out.data(), inp.size());
  check_gradient(inp, relu_loss, dinp, 1e-2f, "relu");

  auto tanh_loss = [&] {
    k::ref::tanh_forward(out.data(), inp.data(), inp.size());
    return dot(out, g);
  };
  tanh_loss();
  std::fill(dinp.begin(), dinp.end(), 0.0f);
  k::ref::tanh_backward(dinp.data(), g.data(), out.data(), inp.size());
  check_gradient(inp, tanh_loss, dinp, 1e-2f, "tanh");
}

TEST(ReferenceGradient, Dropout) {
  Vec inp = random_vector(1000, 13), mask(inp.size());
  k::dropout_mask(mask.data(), mask.size(), 0.3f, 42, 0);
  const Vec g = random_vector(inp.size(), 14);
  Vec out(inp.size()), dinp(inp.size());
  auto loss = [&] {
    k::ref::dropout_forward(out.data(), inp.data(), mask.data(), inp.size());
    return dot(out, g);
  };
  k::ref::dropout_backward(dinp.data(), g.data(), mask.data(), inp.size());
  check_gradient(inp, loss, dinp, 1e-2f, "dropout");
}

TEST(ReferenceGradient, SoftmaxCrossEntropyMean) {
  const int batch = 4, classes = 5;
  Vec logits = random_vector(batch * classes, 15, -3, 3);
  const uint8_t labels[batch] = {0, 4, 2, 2};
  Vec dlogits(logits.size());
  double loss_sum = 0;
  int correct = 0;
  auto mean_loss = [&] {
    k::ref::softmax_cross_entropy(nullptr, &loss_sum, &correct, logits.data(), labels, batch,
                                  classes);
    return loss_sum / batch;
  };
  k::ref::softmax_cross_entropy(dlogits.data(), &loss_sum, &correct, logits.data(), labels, batch,
                                classes);
  check_gradient(logits, mean_loss, dlogits, 1e-2f, "softmax cross-entropy");
}

// ---------------------------------------------------------------------------------------------
// (3) Fast kernels against the reference. Backward passes start from random gradients, since
// they accumulate, and run with one thread and with three (an uneven split on any machine).

class FastVsReference : public ::testing::Test {
 protected:
  void SetUp() override { saved_threads_ = k::cpu::num_threads(); }
  void TearDown() override { k::cpu::set_num_threads(saved_threads_); }
  int saved_threads_ = 1;
};

const int kThreadCounts[] = {1, 3};

// 3x3 kernels at stride 1 with >= 8 channels each way (the 26x26 shape and the last four) take
// the Winograd path: odd output sizes cut tiles in half, padding 1 to 3 puts tiles over the
// border, a 1x1 output is a single partial tile.
const k::Conv2dShape kConvShapes[] = {
    // N, C, H, W, K, R, S, stride, padding
    {1, 1, 5, 7, 2, 3, 3, 1, 0},    {3, 3, 5, 7, 4, 3, 3, 2, 1},     {7, 5, 28, 28, 3, 3, 3, 1, 2},
    {3, 1, 28, 28, 32, 3, 3, 1, 0}, {2, 32, 26, 26, 64, 3, 3, 1, 0}, {3, 5, 7, 5, 6, 1, 1, 1, 0},
    {1, 3, 8, 9, 2, 5, 3, 2, 2},    {7, 3, 5, 7, 5, 3, 3, 2, 0},     {3, 3, 6, 6, 4, 2, 2, 2, 0},
    {1, 5, 7, 5, 3, 1, 1, 2, 1},    {3, 16, 7, 9, 16, 3, 3, 1, 1},   {2, 17, 6, 5, 19, 3, 3, 1, 2},
    {1, 16, 3, 3, 16, 3, 3, 1, 0},  {2, 8, 4, 5, 9, 3, 3, 1, 3},
};

TEST_F(FastVsReference, Conv2dForward) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& s : kConvShapes) {
      const Vec inp = random_vector(input_size(s), 20), weight = random_vector(weight_size(s), 21);
      const Vec bias = random_vector(s.out_channels, 22);
      for (const float* b : {bias.data(), static_cast<const float*>(nullptr)}) {
        Vec ref(output_size(s)), fast(output_size(s), NAN);
        k::ref::conv2d_forward(ref.data(), inp.data(), weight.data(), b, s);
        k::cpu::conv2d_forward(fast.data(), inp.data(), weight.data(), b, s);
        expect_match(fast, ref,
                     "conv forward " + describe(s) + (b ? " bias" : " no bias") + " threads " +
                         std::to_string(threads));
      }
    }
  }
}

TEST_F(FastVsReference, Conv2dBackwardAccumulatesAndHonorsNullptr) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& s : kConvShapes) {
      const Vec inp = random_vector(input_size(s), 23), weight = random_vector(weight_size(s), 24);
      const Vec dout = random_vector(output_size(s), 25);
      const Vec dinp0 = random_vector(inp.size(), 26), dweight0 = random_vector(weight.size(), 27);
      const Vec dbias0 = random_vector(s.out_channels, 28);
      for (int variant = 0; variant < 3; ++variant) {
        // 0: every gradient; 1: no dinp (a first layer); 2: no dbias and no dweight.
        const bool want_dinp = variant != 1, want_dweight = variant != 2, want_dbias = variant == 0;
        Vec ref_dinp = dinp0, ref_dweight = dweight0, ref_dbias = dbias0;
        Vec dinp = dinp0, dweight = dweight0, dbias = dbias0;
        k::ref::conv2d_backward(
            want_dinp ? ref_dinp.data() : nullptr, want_dweight ? ref_dweight.data() : nullptr,
            want_dbias ? ref_dbias.data() : nullptr, dout.data(), inp.data(), weight.data(), s);
        k::cpu::conv2d_backward(
            want_dinp ? dinp.data() : nullptr, want_dweight ? dweight.data() : nullptr,
            want_dbias ? dbias.data() : nullptr, dout.data(), inp.data(), weight.data(), s);
        const std::string what = describe(s) + " variant " + std::to_string(variant) + " threads " +
                                 std::to_string(threads);
        expect_match(dinp, ref_dinp, "conv dinp " + what);
        expect_match(dweight, ref_dweight, "conv dweight " + what);
        expect_match(dbias, ref_dbias, "conv dbias " + what);
        if (!want_dinp) {
          EXPECT_EQ(dinp, dinp0) << what;
        }
        if (!want_dweight) {
          EXPECT_EQ(dweight, dweight0) << what;
        }
        if (!want_dbias) {
          EXPECT_EQ(dbias, dbias0) << what;
        }
      }
      // Two calls from zero give twice one call.
      Vec once_dinp(inp.size()), once_dweight(weight.size()), once_dbias(s.out_channels);
      k::cpu::conv2d_backward(once_dinp.data(), once_dweight.data(), once_dbias.data(), dout.data(),
                              inp.data(), weight.data(), s);
      Vec twice_dinp = once_dinp, twice_dweight = once_dweight, twice_dbias = once_dbias;
      k::cpu::conv2d_backward(twice_dinp.data(), twice_dweight.data(), twice_dbias.data(),
                              dout.data(), inp.data(), weight.data(), s);
      for (Vec* v : {&once_dinp, &once_dweight, &once_dbias})
        for (float& x : *v) x *= 2;
      expect_match(twice_dinp, once_dinp, "conv dinp twice " + describe(s));
      expect_match(twice_dweight, once_dweight, "conv dweight twice " + describe(s));
      expect_match(twice_dbias, once_dbias, "conv dbias twice " + describe(s));
    }
  }
}

// The fused convolution + ReLU against the two reference ops. Inputs are shifted so that about
// half the outputs are negative: the mask matters in both directions.
TEST_F(FastVsReference, Conv2dReluForwardAndBackward) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& s : kConvShapes) {
      const Vec inp = random_vector(input_size(s), 30), weight = random_vector(weight_size(s), 31);
      const Vec bias = random_vector(s.out_channels, 32, -0.5f, 0.5f);
      const std::string what = describe(s) + " threads " + std::to_string(threads);
      Vec ref_out(output_size(s)), out(output_size(s), NAN);
      k::ref::conv2d_relu_forward(ref_out.data(), inp.data(), weight.data(), bias.data(), s);
      k::cpu::conv2d_relu_forward(out.data(), inp.data(), weight.data(), bias.data(), s);
      expect_match(out, ref_out, "conv+relu forward " + what);
      EXPECT_EQ(std::count(out.begin(), out.end(), 0.0f),
                std::count(ref_out.begin(), ref_out.end(), 0.0f))
          << "ReLU zeros " << what;
      const Vec dout = random_vector(output_size(s), 33);
      Vec ref_dinp = random_vector(inp.size(), 34), ref_dweight = random_vector(weight.size(), 35);
      Vec ref_dbias = random_vector(s.out_channels, 36);
      Vec dinp = ref_dinp, dweight = ref_dweight, dbias = ref_dbias;
      k::ref::conv2d_relu_backward(ref_dinp.data(), ref_dweight.data(), ref_dbias.data(),
                                   dout.data(), ref_out.data(), inp.data(), weight.data(), s);
      k::cpu::conv2d_relu_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(),
                                   ref_out.data(), inp.data(), weight.data(), s);
      expect_match(dinp, ref_dinp, "conv+relu dinp " + what);
      expect_match(dweight, ref_dweight, "conv+relu dweight " + what);
      expect_match(dbias, ref_dbias, "conv+relu dbias " + what);
    }
  }
}

// Convolution + ReLU + max pooling against the three reference ops, with 2x2 stride-2 pooling
// and an overlapping 3x3 stride-2 one wherever the convolution's output is large enough.
TEST_F(FastVsReference, Conv2dReluMaxpoolForwardAndBackward) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& s : kConvShapes)
      for (int kernel : {2, 3}) {
        const k::Pool2dShape pool{s.batch,       s.out_channels, s.out_height(),
                                  s.out_width(), kernel,         2};
        if (pool.in_height < kernel || pool.in_width < kernel) continue;
        const std::string what =
            describe(s) + " pool " + std::to_string(kernel) + " threads " + std::to_string(threads);
        const Vec inp = random_vector(input_size(s), 40),
                  weight = random_vector(weight_size(s), 41);
        const Vec bias = random_vector(s.out_channels, 42, -0.5f, 0.5f);
        const size_t pooled =
            size_t(s.batch) * s.out_channels * pool.out_height() * pool.out_width();
        Vec ref_out(pooled), out(pooled, NAN);
        std::vector<int32_t> ref_arg(pooled), arg(pooled, -1);
        k::ref::conv2d_relu_maxpool_forward(ref_out.data(), ref_arg.data(), inp.data(),
                                            weight.data(), bias.data(), s, pool);
        k::cpu::conv2d_relu_maxpool_forward(out.data(), arg.data(), inp.data(), weight.data(),
                                            bias.data(), s, pool);
        expect_match(out, ref_out, "conv+relu+pool forward " + what);
        EXPECT_EQ(arg, ref_arg) << "argmax " << what;
        const Vec dout = random_vector(pooled, 43);
        Vec ref_dinp = random_vector(inp.size(), 44),
            ref_dweight = random_vector(weight.size(), 45);
        Vec ref_dbias = random_vector(s.out_channels, 46);
        Vec dinp = ref_dinp, dweight = ref_dweight, dbias = ref_dbias;
        k::ref::conv2d_relu_maxpool_backward(ref_dinp.data(), ref_dweight.data(), ref_dbias.data(),
                                             dout.data(), ref_out.data(), ref_arg.data(),
                                             inp.data(), weight.data(), s, pool);
        k::cpu::conv2d_relu_maxpool_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(),
                                             ref_out.data(), ref_arg.data(), inp.data(),
                                             weight.data(), s, pool);
        expect_match(dinp, ref_dinp, "conv+relu+pool dinp " + what);
        expect_match(dweight, ref_dweight, "conv+relu+pool dweight " + what);
        expect_match(dbias, ref_dbias, "conv+relu+pool dbias " + what);
      }
  }
}

TEST_F(FastVsReference, Conv2dReluMaxpoolRejectsAMismatchedPooling) {
  const k::Conv2dShape s{1, 1, 5, 5, 2, 3, 3, 1, 0};
  const k::Pool2dShape wrong{1, 2, 4, 3, 2, 2};  // the convolution's output is 3x3
  Vec inp(25), weight(18), out(4);
  std::vector<int32_t> arg(4);
  EXPECT_THROW(k::cpu::conv2d_relu_maxpool_forward(out.data(), arg.data(), inp.data(),
                                                   weight.data(), nullptr, s, wrong),
               std::invalid_argument);
}

struct LinearShape {
  int batch, in_features, out_features;
};
// The last three are big enough for parallel_sgemm to split columns (two of them) and rows.
const LinearShape kLinearShapes[] = {{1, 5, 3},       {3, 7, 5},       {7, 33, 17},
                                     {64, 2000, 100}, {64, 1000, 128}, {300, 100, 50}};

TEST_F(FastVsReference, Linear) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& [batch, in_features, out_features] : kLinearShapes) {
      const std::string what = "linear " + std::to_string(batch) + "x" +
                               std::to_string(in_features) + "->" + std::to_string(out_features) +
                               " threads " + std::to_string(threads);
      const Vec inp = random_vector(size_t(batch) * in_features, 30);
      const Vec weight = random_vector(size_t(out_features) * in_features, 31);
      const Vec bias = random_vector(out_features, 32);
      for (const float* b : {bias.data(), static_cast<const float*>(nullptr)}) {
        Vec ref(size_t(batch) * out_features), fast(ref.size(), NAN);
        k::ref::linear_forward(ref.data(), inp.data(), weight.data(), b, batch, in_features,
                               out_features);
        k::cpu::linear_forward(fast.data(), inp.data(), weight.data(), b, batch, in_features,
                               out_features);
        expect_match(fast, ref, what + (b ? " forward bias" : " forward no bias"));
      }
      const Vec dout = random_vector(size_t(batch) * out_features, 33);
      const Vec dinp0 = random_vector(inp.size(), 34), dweight0 = random_vector(weight.size(), 35);
      const Vec dbias0 = random_vector(out_features, 36);
      for (bool with_dinp_and_dbias : {true, false}) {
        Vec ref_dinp = dinp0, ref_dweight = dweight0, ref_dbias = dbias0;
        Vec dinp = dinp0, dweight = dweight0, dbias = dbias0;
        float* no = nullptr;
        k::ref::linear_backward(with_dinp_and_dbias ? ref_dinp.data() : no, ref_dweight.data(),
                                with_dinp_and_dbias ? ref_dbias.data() : no, dout.data(),
                                inp.data(), weight.data(), batch, in_features, out_features);
        k::cpu::linear_backward(with_dinp_and_dbias ? dinp.data() : no, dweight.data(),
                                with_dinp_and_dbias ? dbias.data() : no, dout.data(), inp.data(),
                                weight.data(), batch, in_features, out_features);
        expect_match(dinp, ref_dinp, what + " dinp");
        expect_match(dweight, ref_dweight, what + " dweight");
        expect_match(dbias, ref_dbias, what + " dbias");
        if (!with_dinp_and_dbias) {
          EXPECT_EQ(dinp, dinp0) << what;
          EXPECT_EQ(dbias, dbias0) << what;
        }
      }
      Vec once_dinp(inp.size()), once_dweight(weight.size()), once_dbias(out_features);
      k::cpu::linear_backward(once_dinp.data(), once_dweight.data(), once_dbias.data(), dout.data(),
                              inp.data(), weight.data(), batch, in_features, out_features);
      Vec twice_dinp = once_dinp, twice_dweight = once_dweight, twice_dbias = once_dbias;
      k::cpu::linear_backward(twice_dinp.data(), twice_dweight.data(), twice_dbias.data(),
                              dout.data(), inp.data(), weight.data(), batch, in_features,
                              out_features);
      for (Vec* v : {&once_dinp, &once_dweight, &once_dbias})
        for (float& x : *v) x *= 2;
      expect_match(twice_dinp, once_dinp, what + " dinp twice");
      expect_match(twice_dweight, once_dweight, what + " dweight twice");
      expect_match(twice_dbias, once_dbias, what + " dbias twice");
    }
  }
}

TEST_F(FastVsReference, MaxPool) {
  const k::Pool2dShape shapes[] = {
      {1, 1, 5, 7, 2, 2},    {3, 3, 28, 28, 2, 2}, {7, 5, 5, 7, 3, 2},
      {3, 64, 24, 24, 2, 2}, {3, 2, 6, 5, 2, 1},
  };
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (const auto& s : shapes) {
      const std::string what = "maxpool N" + std::to_string(s.batch) + " C" +
                               std::to_string(s.channels) + " " + std::to_string(s.in_height) +
                               "x" + std::to_string(s.in_width) + " kernel " +
                               std::to_string(s.kernel) + " stride " + std::to_string(s.stride);
      const size_t in_size = size_t(s.batch) * s.channels * s.in_height * s.in_width;
      const size_t out_size = size_t(s.batch) * s.channels * s.out_height() * s.out_width();
      Vec inp = random_vector(in_size, 40);
      // Ties on a coarse grid, and one NaN, must resolve the same way in both.
      for (size_t i = 0; i < in_size; i += 3) inp[i] = std::round(inp[i] * 2);
      Vec ref(out_size), fast(out_size);
      std::vector<int32_t> ref_arg(out_size), fast_arg(out_size, -1);
      k::ref::maxpool2d_forward(ref.data(), ref_arg.data(), inp.data(), s);
      k::cpu::maxpool2d_forward(fast.data(), fast_arg.data(), inp.data(), s);
      EXPECT_EQ(fast_arg, ref_arg) << what;
      expect_match(fast, ref, what + " forward");
      const Vec dout = random_vector(out_size, 41), dinp0 = random_vector(in_size, 42);
      Vec ref_dinp = dinp0, dinp = dinp0;
      k::ref::maxpool2d_backward(ref_dinp.data(), dout.data(), ref_arg.data(), s);
      k::cpu::maxpool2d_backward(dinp.data(), dout.data(), ref_arg.data(), s);
      expect_match(dinp, ref_dinp, what + " backward");

      inp[in_size / 2] = NAN;
      k::ref::maxpool2d_forward(ref.data(), ref_arg.data(), inp.data(), s);
      k::cpu::maxpool2d_forward(fast.data(), fast_arg.data(), inp.data(), s);
      EXPECT_EQ(fast_arg, ref_arg) << what << " with a NaN";
    }
  }
}

TEST_F(FastVsReference, ElementwiseOps) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (size_t n : {size_t(1), size_t(1000), size_t(100003)}) {
      const std::string what = " n " + std::to_string(n) + " threads " + std::to_string(threads);
      const Vec inp = random_vector(n, 50, -3, 3), dout = random_vector(n, 51);
      const Vec dinp0 = random_vector(n, 52);
      Vec mask(n);
      k::dropout_mask(mask.data(), n, 0.4f, 7, 3);
      using Forward = void (*)(float*, const float*, size_t);
      using Backward = void (*)(float*, const float*, const float*, size_t);
      struct Pair {
        const char* name;
        Forward ref_fwd, fast_fwd;
        Backward ref_bwd, fast_bwd;
      };
      const Pair ops[] = {
          {"relu", k::ref::relu_forward, k::cpu::relu_forward, k::ref::relu_backward,
           k::cpu::relu_backward},
          {"tanh", k::ref::tanh_forward, k::cpu::tanh_forward, k::ref::tanh_backward,
           k::cpu::tanh_backward},
      };
      for (const auto& op : ops) {
        Vec ref(n), fast(n, NAN);
        op.ref_fwd(ref.data(), inp.data(), n);
        op.fast_fwd(fast.data(), inp.data(), n);
        expect_match(fast, ref, std::string(op.name) + " forward" + what);
        Vec ref_dinp = dinp0, dinp = dinp0;
        op.ref_bwd(ref_dinp.data(), dout.data(), ref.data(), n);
        op.fast_bwd(dinp.data(), dout.data(), ref.data(), n);
        expect_match(dinp, ref_dinp, std::string(op.name) + " backward" + what);
      }
      Vec ref(n), fast(n, NAN);
      k::ref::dropout_forward(ref.data(), inp.data(), mask.data(), n);
      k::cpu::dropout_forward(fast.data(), inp.data(), mask.data(), n);
      expect_match(fast, ref, "dropout forward" + what);
      Vec ref_dinp = dinp0, dinp = dinp0;
      k::ref::dropout_backward(ref_dinp.data(), dout.data(), mask.data(), n);
      k::cpu::dropout_backward(dinp.data(), dout.data(), mask.data(), n);
      expect_match(dinp, ref_dinp, "dropout backward" + what);
    }
  }
}

TEST_F(FastVsReference, SoftmaxCrossEntropy) {
  const std::pair<int, int> shapes[] = {{1, 2}, {3, 10}, {64, 10}, {7, 1000}, {1000, 50}};
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (auto [batch, classes] : shapes) {
      const std::string what = "softmax cross-entropy " + std::to_string(batch) + "x" +
                               std::to_string(classes) + " threads " + std::to_string(threads);
      const Vec logits = random_vector(size_t(batch) * classes, 60, -8, 8);
      std::vector<uint8_t> labels(batch);
      for (int n = 0; n < batch; ++n) labels[n] = uint8_t((n * 7 + 3) % std::min(classes, 256));
      Vec ref(logits.size()), fast(logits.size(), NAN);
      double ref_loss = 0, fast_loss = 0;
      int ref_correct = -1, fast_correct = -2;
      k::ref::softmax_cross_entropy(ref.data(), &ref_loss, &ref_correct, logits.data(),
                                    labels.data(), batch, classes);
      k::cpu::softmax_cross_entropy(fast.data(), &fast_loss, &fast_correct, logits.data(),
                                    labels.data(), batch, classes);
      expect_match(fast, ref, what);
      EXPECT_NEAR(fast_loss, ref_loss, 1e-5 * (1 + std::fabs(ref_loss))) << what;
      EXPECT_EQ(fast_correct, ref_correct) << what;
      // Without dlogits only the loss and the count are computed.
      k::cpu::softmax_cross_entropy(nullptr, &fast_loss, &fast_correct, logits.data(),
                                    labels.data(), batch, classes);
      EXPECT_NEAR(fast_loss, ref_loss, 1e-5 * (1 + std::fabs(ref_loss))) << what;
    }
  }
}

TEST_F(FastVsReference, ZeroClearsEveryElementOnAnyThreadCount) {
  for (int threads : kThreadCounts) {
    k::cpu::set_num_threads(threads);
    for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(1) << 18, (size_t(1) << 18) + 7}) {
      Vec x = random_vector(n + 1, 70);
      const float guard = x[n];
      k::cpu::zero(x.data(), n);
      EXPECT_EQ(std::count(x.begin(), x.end() - 1, 0.0f), std::ptrdiff_t(n)) << n;
      EXPECT_EQ(x[n], guard) << "wrote past " << n;
    }
  }
}

// Two threads, each with its own count, both inside OpenMP regions at once: each team has the
// size its own thread asked for.
TEST_F(FastVsReference, ThreadCountScopeHoldsForItsThreadOnly) {
  k::cpu::set_num_threads(1);
  int team_a = 0, team_b = 0;
  auto team_size = [](int threads, int* team) {
    const k::cpu::ThreadCountScope scope(threads);
#pragma omp parallel num_threads(k::cpu::detail::threads())
    {
#pragma omp single
      *team = omp_get_num_threads();
    }
  };
  std::thread a(team_size, 3, &team_a), b(team_size, 2, &team_b);
  a.join();
  b.join();
  EXPECT_EQ(team_a, 3);
  EXPECT_EQ(team_b, 2);
  EXPECT_EQ(k::cpu::num_threads(), 1);
}

TEST_F(FastVsReference, SetNumThreadsAndBlasInfo) {
  k::cpu::set_num_threads(3);
  EXPECT_EQ(k::cpu::num_threads(), 3);
  k::cpu::set_num_threads(0);  // all cores
  EXPECT_GE(k::cpu::num_threads(), 1);
  ASSERT_NE(k::cpu::blas_info(), nullptr);
  EXPECT_GT(std::string(k::cpu::blas_info()).size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (4) The dropout mask.

TEST(DropoutMask, PhiloxKnownAnswers) {
  // Known-answer vectors of Random123's philox4x32-10 (kat_vectors).
  auto r = k::rng::philox4x32_10(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
  r = k::rng::philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u,
                            0x299f31d0u);
  EXPECT_EQ(r.v[0], 0xd16cfe09u);
  EXPECT_EQ(r.v[1], 0x94fdccebu);
  EXPECT_EQ(r.v[2], 0x5001e420u);
  EXPECT_EQ(r.v[3], 0x24126ea1u);
}

TEST(DropoutMask, ZeroProbabilityKeepsEverything) {
  Vec mask(1001, -1.0f);
  k::dropout_mask(mask.data(), mask.size(), 0.0f, 1, 2);
  for (float m : mask) ASSERT_EQ(m, 1.0f);
}

TEST(DropoutMask, SameSeedAndCounterSameMask) {
  Vec a(5003), b(5003), c(5003), d(5003);
  k::dropout_mask(a.data(), a.size(), 0.5f, 123, 9);
  k::dropout_mask(b.data(), b.size(), 0.5f, 123, 9);
  k::dropout_mask(c.data(), c.size(), 0.5f, 123, 10);
  k::dropout_mask(d.data(), d.size(), 0.5f, 124, 9);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  // Element i is the same whatever the length asked for (and however it is split over threads).
  Vec prefix(7);
  k::dropout_mask(prefix.data(), prefix.size(), 0.5f, 123, 9);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), a.begin()));
}

// A shard's mask, drawn from its first element's position, is the batch's mask from there on,
// wherever the shard starts inside a block of four.
TEST(DropoutMask, ShardsDrawTheWholeMasksBits) {
  Vec whole(20011);
  k::dropout_mask(whole.data(), whole.size(), 0.4f, 77, 5);
  for (size_t first :
       {size_t(0), size_t(1), size_t(2), size_t(3), size_t(4), size_t(4097), size_t(10003)}) {
    for (size_t n : {size_t(1), size_t(3), size_t(9), size_t(5000)}) {
      Vec shard(n);
      k::dropout_mask(shard.data(), n, 0.4f, 77, 5, first);
      ASSERT_TRUE(std::equal(shard.begin(), shard.end(), whole.begin() + first))
          << "first " << first << ", n " << n;
    }
  }
}

TEST(DropoutMask, EveryElementIsTheScalarGeneratorsDecision) {
  // The vectorized, threaded fill must agree with rng::uniform_at, which the CUDA kernel uses,
  // at every index and for every thread count.
  const size_t n = 100003;
  const float p = 0.3f;
  const int saved_threads = k::cpu::num_threads();
  for (int threads : {1, 3}) {
    k::cpu::set_num_threads(threads);
    Vec mask(n);
    k::dropout_mask(mask.data(), n, p, 0x1234567890abcdefull, 77);
    size_t mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      const float expected =
          k::rng::uniform_at(0x1234567890abcdefull, 77, i) >= p ? 1 / (1 - p) : 0;
      mismatches += mask[i] != expected;
    }
    EXPECT_EQ(mismatches, 0u) << "threads " << threads;
  }
  k::cpu::set_num_threads(saved_threads);
}

TEST(DropoutMask, KeptFractionIsOneMinusP) {
  const size_t n = 100000;
  Vec mask(n);
  for (float p : {0.1f, 0.25f, 0.5f, 0.9f}) {
    k::dropout_mask(mask.data(), n, p, 2024, 1);
    size_t kept = 0;
    for (float m : mask) {
      if (m != 0.0f) {
        ++kept;
        ASSERT_FLOAT_EQ(m, 1.0f / (1.0f - p));
      }
    }
    // Binomial standard deviation is at most 0.0016 of n here; allow five of them.
    EXPECT_NEAR(double(kept) / n, 1.0 - p, 0.008) << "p " << p;
  }
}

TEST(DropoutMask, InvalidProbabilityThrows) {
  Vec mask(4);
  for (float p : {-0.1f, 1.0f, 1.5f, NAN})
    EXPECT_THROW(k::dropout_mask(mask.data(), mask.size(), p, 1, 1), std::invalid_argument)
        << "p " << p;
}

}  // namespace
