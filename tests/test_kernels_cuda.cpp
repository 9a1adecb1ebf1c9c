// Every CUDA op against its CPU reference (kernels/cpu/reference) on several shapes, odd sizes
// and long inner dimensions included: normalized error within a bound per precision (fp32 GEMMs
// within one that TF32 exceeds; tf32 and bf16, where they differ from fp32, further from the CPU
// than fp32; bf16 the CPU's product of the operands rounded to bf16, and never tf32's bits),
// NaN/Inf checks on outputs filled with NaN before the kernel writes them, exact
// equality where the op is exact (pooling, dropout masks, batch gathering), optimizer updates and
// state against the CPU twin. Skips where there is no GPU. The error-check macros, the compute
// types and the comparisons themselves (fed a deliberately wrong result) are tested everywhere.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "datasets/batching.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/optimizer.hpp"
#include "kernels/cpu/shape_check.hpp"
#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/conv2d.cuh"
#include "kernels/cuda/dropout.cuh"
#include "kernels/cuda/gather.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/linear.cuh"
#include "kernels/cuda/loss.cuh"
#include "kernels/cuda/optimizer.cuh"
#include "kernels/cuda/pool.cuh"
#include "kernels/cuda/reduce.cuh"

namespace gpulab {
namespace {

namespace k = gpulab::kernels;
namespace kc = gpulab::kernels::cuda;
using test::download;
using test::expect_close;
using test::random_floats;
using test::upload;
using Vec = std::vector<float>;

// ---------------------------------------------------------------------------------------------
// The check macros: these need no GPU.

TEST(CudaCheck, ThrowsTypedErrorWithCallFileAndLine) {
  const int line = __LINE__ + 2;
  try {
    GPULAB_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "no exception";
  } catch (const kc::CudaError& e) {
    EXPECT_EQ(e.kind(), kc::ErrorKind::OutOfMemory);
    EXPECT_EQ(e.code(), int(cudaErrorMemoryAllocation));
    EXPECT_EQ(e.expression(), "cudaErrorMemoryAllocation");
    EXPECT_NE(e.file().find("test_kernels_cuda.cpp"), std::string::npos);
    EXPECT_EQ(e.line(), line);
    const std::string text = e.what();
    EXPECT_NE(text.find("cudaErrorMemoryAllocation"), std::string::npos) << text;
    EXPECT_NE(text.find("test_kernels_cuda.cpp:" + std::to_string(line)), std::string::npos)
        << text;
  }
}

TEST(CudaCheck, CublasAndLibraryErrorsAreTyped) {
  try {
    GPULAB_CUBLAS_CHECK(CUBLAS_STATUS_ALLOC_FAILED);
    FAIL() << "no exception";
  } catch (const kc::CudaError& e) {
    EXPECT_EQ(e.kind(), kc::ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos);
  }
  auto describe = [](int) { return "unhandled system error"; };
  EXPECT_THROW(kc::check_nccl(2, describe, "ncclAllReduce(...)", __FILE__, __LINE__),
               kc::CudaError);
  EXPECT_NO_THROW(kc::check_nccl(0, describe, "ncclAllReduce(...)", __FILE__, __LINE__));
}

TEST(CudaCheck, ErrorKindsTellHowARunEnds) {
  EXPECT_EQ(kc::error_kind(cudaErrorMemoryAllocation), kc::ErrorKind::OutOfMemory);
  EXPECT_EQ(kc::error_kind(cudaErrorInsufficientDriver), kc::ErrorKind::NoDevice);
  EXPECT_EQ(kc::error_kind(cudaErrorNoDevice), kc::ErrorKind::NoDevice);
  EXPECT_EQ(kc::error_kind(cudaErrorIllegalAddress), kc::ErrorKind::DeviceFault);
  EXPECT_EQ(kc::error_kind(cudaErrorLaunchFailure), kc::ErrorKind::DeviceFault);
  EXPECT_EQ(kc::error_kind(cudaErrorInvalidValue), kc::ErrorKind::Other);
}

TEST(CudaCheck, AllocationWithoutADriverSaysSo) {
  if (test::gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the no-driver path";
  try {
    kc::DeviceBuffer<float> buffer(1024, "a test buffer");
    FAIL() << "allocated without a device";
  } catch (const kc::CudaError& e) {
    EXPECT_EQ(e.kind(), kc::ErrorKind::NoDevice) << e.what();
    EXPECT_NE(std::string(e.what()).find("a test buffer"), std::string::npos) << e.what();
  }
}

TEST(CudaCheck, EachPrecisionReachesCublasAsItsComputeAndOperandTypes) {
  // fp32 must never let cuBLAS round its inputs; tf32 asks cuBLAS to; bf16 hands it operands
  // already rounded to bf16, with fp32 accumulation (_FAST_16BF on fp32 operands only allows
  // bf16, and cuBLAS ran TF32 kernels for it).
  EXPECT_EQ(kc::compute_type(kc::Precision::Fp32), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(kc::compute_type(kc::Precision::Tf32), CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(kc::compute_type(kc::Precision::Bf16), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(kc::operand_type(kc::Precision::Fp32), CUDA_R_32F);
  EXPECT_EQ(kc::operand_type(kc::Precision::Tf32), CUDA_R_32F);
  EXPECT_EQ(kc::operand_type(kc::Precision::Bf16), CUDA_R_16BF);
}

TEST(CudaCheck, ABf16GemmWithoutRoomForItsOperandsIsAnError) {
  // Checked before any cuBLAS or CUDA call: no GPU needed, and never an allocation in a step.
  // op(A) (3, 7) takes 21 elements, 24 with B's start on 16 bytes, op(B) (7, 5) 35 more.
  EXPECT_EQ(kc::gemm_bf16_elements(3, 5, 7), 24u + 35u);
  EXPECT_EQ(kc::gemm_bf16_elements(3, 5, 8, 2, 1), 48u + 40u);
  const std::vector<float> a(21), b(35);
  std::vector<float> c(15);
  kc::Gemm gemm{nullptr, kc::Precision::Bf16, nullptr, 0, nullptr, 0};
  try {
    kc::gemm(gemm, false, false, 3, 5, 7, 1.0f, a.data(), 7, b.data(), 5, 0.0f, c.data(), 5,
             nullptr);
    FAIL() << "a bf16 GEMM ran without room for its operands";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16 operands need 59 elements"), std::string::npos)
        << e.what();
  }
  gemm.bf16_elements = 58;  // one short, and still no buffer
  EXPECT_THROW(kc::gemm(gemm, false, false, 3, 5, 7, 1.0f, a.data(), 7, b.data(), 5, 0.0f, c.data(),
                        5, nullptr),
               std::invalid_argument);
  // The linear layer's three products at the largest: its forward, 24 + 35 for (3, 7) -> 5.
  EXPECT_EQ(kc::linear_bf16_elements(3, 7, 5), 59u);
}

// ---------------------------------------------------------------------------------------------
// The comparisons the GPU tests make, fed a deliberately wrong result on the CPU: each must fail
// for the bug it is there to catch. These need no GPU.

struct LinearShape {
  int batch, in_features, out_features;
};

// Long inner dimensions among them (9216 and 4096 products per output), where fp32 run as TF32
// shows most surely.
const std::vector<LinearShape> kLinearShapes = {{3, 7, 5},       {17, 33, 10},  {1, 1, 1},
                                                {64, 9216, 128}, {37, 128, 10}, {5, 4096, 64}};

const std::vector<k::Conv2dShape> kConvShapes = {
    {2, 3, 7, 9, 4, 3, 3, 1, 1},      // odd sizes, padding
    {3, 5, 11, 7, 6, 3, 3, 2, 1},     // stride 2
    {2, 4, 5, 5, 3, 1, 1, 1, 0},      // 1x1
    {5, 2, 12, 12, 6, 5, 5, 1, 2},    // LeNet-5's first layer shape, small
    {3, 1, 28, 28, 32, 3, 3, 1, 0},   // pytorch-example conv1
    {2, 32, 26, 26, 64, 3, 3, 1, 0},  // pytorch-example conv2
    {2, 64, 12, 12, 32, 5, 5, 1, 2},  // a long inner dimension: 1600 products per output
    {16, 1, 28, 28, 8, 3, 3, 1, 0},   // 10816 positions: bias and weight gradients summed in parts
};

Vec tf32_rounded(Vec v) {
  for (float& x : v) x = test::round_to_tf32(x);
  return v;
}
Vec bf16_rounded(Vec v) {
  for (float& x : v) x = test::round_to_bf16(x);
  return v;
}

// An fp32 GEMM silently run as TF32 (its inputs rounded to 10 mantissa bits) is outside
// kFp32GemmBound on every shape the GPU tests use with more than a few products per output, while
// a right fp32 GEMM in another order (the fast CPU kernels, OpenBLAS's float sums) is inside it.
TEST(CudaTestChecks, AnFp32GemmRunAsTf32FailsTheFp32GemmBound) {
  for (const LinearShape& l : kLinearShapes) {
    const std::string what = "linear " + std::to_string(l.batch) + "x" +
                             std::to_string(l.in_features) + " -> " +
                             std::to_string(l.out_features);
    const Vec inp = random_floats(size_t(l.batch) * l.in_features, 21),
              weight = random_floats(size_t(l.out_features) * l.in_features, 22);
    Vec exact(size_t(l.batch) * l.out_features), as_tf32(exact.size()), fast(exact.size());
    k::ref::linear_forward(exact.data(), inp.data(), weight.data(), nullptr, l.batch, l.in_features,
                           l.out_features);
    k::ref::linear_forward(as_tf32.data(), tf32_rounded(inp).data(), tf32_rounded(weight).data(),
                           nullptr, l.batch, l.in_features, l.out_features);
    k::cpu::linear_forward(fast.data(), inp.data(), weight.data(), nullptr, l.batch, l.in_features,
                           l.out_features);
    EXPECT_LE(test::normalized_error(fast, exact), test::kFp32GemmBound / 10) << what;
    if (l.in_features < 4) continue;  // a product or two: TF32 may round to fp32's bits
    EXPECT_GT(test::normalized_error(as_tf32, exact), test::kFp32GemmBound) << what;
  }
  for (const k::Conv2dShape& s : kConvShapes) {
    const std::string what = "conv2d " + k::detail::describe(s);
    const Vec inp = random_floats(size_t(s.batch) * s.in_channels * s.in_height * s.in_width, 1),
              weight = random_floats(
                  size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w, 2);
    Vec exact(size_t(s.batch) * s.out_channels * s.out_height() * s.out_width()),
        as_tf32(exact.size()), fast(exact.size());
    k::ref::conv2d_forward(exact.data(), inp.data(), weight.data(), nullptr, s);
    k::ref::conv2d_forward(as_tf32.data(), tf32_rounded(inp).data(), tf32_rounded(weight).data(),
                           nullptr, s);
    k::cpu::conv2d_forward(fast.data(), inp.data(), weight.data(), nullptr, s);
    EXPECT_LE(test::normalized_error(fast, exact), test::kFp32GemmBound / 10) << what;
    if (s.in_channels * s.kernel_h * s.kernel_w < 4) continue;
    EXPECT_GT(test::normalized_error(as_tf32, exact), test::kFp32GemmBound) << what;
  }
}

Vec bf16_truncated(Vec v) {  // toward zero: a conversion that forgets to round
  for (float& x : v) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits &= 0xFFFF0000u;
    std::memcpy(&x, &bits, sizeof bits);
  }
  return v;
}

// A bf16 GEMM is checked three ways on the GPU (CudaOps.Bf16GemmsMultiplyTheirOperandsRoundedToBf16
// and CudaOps.Bf16IsNotTf32): against the CPU's product of the operands rounded to bf16, within
// kBf16SumBound; against the exact product, within kBf16Bound and each output within
// bf16_output_bound, but outside kTf32RoundingBound, which tf32 stays within. Here, on the CPU, a
// right bf16 GEMM (operands rounded to nearest even, fp32 sums) passes each check, and one that
// rounds to TF32 or truncates to bf16 fails the first; the TF32 one also the last.
TEST(CudaTestChecks, ABf16GemmRunAsTf32OrTruncatedFailsTheBf16Checks) {
  const LinearShape l{64, 9216, 128};  // pytorch-example's fc1, as the GPU test
  const Vec inp = random_floats(size_t(l.batch) * l.in_features, 21),
            weight = random_floats(size_t(l.out_features) * l.in_features, 22);
  const size_t n = size_t(l.batch) * l.out_features;
  auto product = [&](const Vec& a, const Vec& w) {  // double sums
    Vec out(n);
    k::ref::linear_forward(out.data(), a.data(), w.data(), nullptr, l.batch, l.in_features,
                           l.out_features);
    return out;
  };
  const Vec exact = product(inp, weight);
  const Vec bf16 = product(bf16_rounded(inp), bf16_rounded(weight));
  const Vec as_tf32 = product(tf32_rounded(inp), tf32_rounded(weight));
  const Vec truncated = product(bf16_truncated(inp), bf16_truncated(weight));
  Vec bf16_fp32_sums(n);  // the GPU's picture: bf16 operands, fp32 sums
  k::cpu::linear_forward(bf16_fp32_sums.data(), bf16_rounded(inp).data(),
                         bf16_rounded(weight).data(), nullptr, l.batch, l.in_features,
                         l.out_features);
  Vec abs_inp = inp, abs_weight = weight;
  for (float& x : abs_inp) x = std::fabs(x);
  for (float& x : abs_weight) x = std::fabs(x);
  const Vec magnitude = product(abs_inp, abs_weight);  // sum |a_i b_i| per output

  EXPECT_LE(test::normalized_error(bf16_fp32_sums, bf16), test::kBf16SumBound);
  EXPECT_GT(test::normalized_error(as_tf32, bf16), test::kBf16SumBound) << "tf32 for bf16";
  EXPECT_GT(test::normalized_error(truncated, bf16), test::kBf16SumBound) << "truncated";
  for (const Vec* right : std::vector<const Vec*>{&bf16, &bf16_fp32_sums}) {
    EXPECT_LE(test::normalized_error(*right, exact), test::kBf16Bound);
    EXPECT_GT(test::normalized_error(*right, exact), test::kTf32RoundingBound);
    for (size_t i = 0; i < n; ++i)
      ASSERT_LE(std::fabs(double((*right)[i]) - exact[i]),
                test::bf16_output_bound(magnitude[i], l.in_features))
          << "output " << i;
  }
  EXPECT_LE(test::normalized_error(as_tf32, exact), test::kTf32RoundingBound);
  std::printf(
      "normalized error against the bf16 product: tf32 %.2g, truncated %.2g, fp32 sums "
      "%.2g; against the exact one: bf16 %.2g, tf32 %.2g\n",
      test::normalized_error(as_tf32, bf16), test::normalized_error(truncated, bf16),
      test::normalized_error(bf16_fp32_sums, bf16), test::normalized_error(bf16, exact),
      test::normalized_error(as_tf32, exact));
}

// One optimizer, run on the CPU as the CUDA kernels' twin is (three steps, lr 0.01 / step).
struct OptimizerCase {
  const char* name;
  bool adam, decoupled;
  float momentum, weight_decay;
};
const std::vector<OptimizerCase> kOptimizerCases = {
    {"sgd", false, false, 0.0f, 0.0f},
    {"sgd with weight decay", false, false, 0.0f, 0.01f},
    {"momentum", false, false, 0.9f, 0.01f},
    {"adam", true, false, 0.0f, 0.01f},
    {"adamw", true, true, 0.0f, 0.01f}};

struct OptimizerState {
  Vec params, first, second;  // the parameters; velocity or Adam's m; Adam's v
};

Vec optimizer_grads(uint64_t step, size_t n) { return random_floats(n, 72 + uint32_t(step)); }
float optimizer_lr(uint64_t step) { return 0.01f / float(step); }

OptimizerState cpu_optimizer_steps(const OptimizerCase& c, const Vec& params0, int steps) {
  const size_t n = params0.size();
  OptimizerState s{params0, Vec(n, 0.0f), Vec(n, 0.0f)};
  for (uint64_t step = 1; step <= uint64_t(steps); ++step) {
    const Vec grads = optimizer_grads(step, n);
    if (c.adam)
      k::adam_update(s.params.data(), s.first.data(), s.second.data(), grads.data(), n,
                     optimizer_lr(step), 0.9f, 0.999f, 1e-8f, c.weight_decay, c.decoupled,
                     long(step));
    else
      k::sgd_update(s.params.data(), c.momentum != 0.0f ? s.first.data() : nullptr, grads.data(), n,
                    optimizer_lr(step), c.momentum, c.weight_decay);
  }
  return s;
}

// A kernel that forgets its weight decay (momentum-SGD without it; AdamW with it as L2 or none at
// all) moves the parameters by ~1e-4 of themselves less or more: the update p - p0, and the state
// where the decay feeds it, are held to the twin's within kFp32Bound and fail.
TEST(CudaTestChecks, AnOptimizerThatForgetsItsWeightDecayFailsOnTheUpdateOrTheState) {
  const Vec params0 = random_floats(10007, 71);
  struct Bug {
    OptimizerCase right, wrong;
    bool state_differs;
  };
  for (const Bug& bug :
       {Bug{kOptimizerCases[2], {"momentum without decay", false, false, 0.9f, 0}, true},
        Bug{kOptimizerCases[4], {"adamw as L2", true, false, 0.0f, 0.01f}, true},
        Bug{kOptimizerCases[4], {"adamw without decay", true, true, 0.0f, 0}, false}}) {
    const OptimizerState right = cpu_optimizer_steps(bug.right, params0, 3),
                         wrong = cpu_optimizer_steps(bug.wrong, params0, 3);
    const double params_error = test::normalized_error(wrong.params, right.params);
    EXPECT_GT(test::update_error(wrong.params, right.params, params0), test::kFp32Bound)
        << bug.wrong.name << " (its parameters alone: " << params_error << ")";
    if (bug.state_differs) {
      EXPECT_GT(test::normalized_error(wrong.first, right.first), test::kFp32Bound)
          << bug.wrong.name;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The ops. One stream, one cuBLAS handle and a conv scratch per test.

class CudaOps : public ::testing::Test {
 public:
  void SetUp() override {
    GPULAB_REQUIRE_GPU();
    stream_ = kc::make_stream();
    blas_ = kc::CublasHandle::create();
  }
  // A conv's scratch for `chunk` images (0: all), or none; in bf16, the operands' room that
  // conv2d_bf16_elements asks for, or linear_bf16 elements: exactly, so that a size function
  // that asks too little fails the GEMM.
  kc::Gemm gemm(k::Conv2dShape s = {}, int chunk = 0, kc::Precision precision = kc::Precision::Fp32,
                size_t linear_bf16 = 0) {
    const size_t floats = s.batch ? kc::conv2d_scratch_floats(s, chunk ? chunk : s.batch) : 0;
    scratch_ = kc::DeviceBuffer<float>(floats, "conv scratch");
    const size_t bf16 = precision != kc::Precision::Bf16 ? 0
                        : s.batch                        ? kc::conv2d_bf16_elements(s, floats)
                                                         : linear_bf16;
    bf16_ = kc::DeviceBuffer<__nv_bfloat16>(bf16, "bf16 operands");
    return kc::Gemm{blas_.get(), precision, scratch_.data(), floats, bf16_.data(), bf16};
  }
  cudaStream_t stream() const { return stream_.get(); }

  kc::Stream stream_;
  kc::CublasHandle blas_;
  kc::DeviceBuffer<float> scratch_;
  kc::DeviceBuffer<__nv_bfloat16> bf16_;
};

using k::detail::describe;

// The outputs of an op that cuBLAS computes, each with its CPU reference (double sums) of the
// exact operands and of the operands rounded to bf16: what reduced precision must change.
struct GemmOutputs {
  std::vector<std::string> names;
  std::vector<Vec> gpu, cpu, cpu_bf16;
  void add(std::string name, Vec from_gpu, Vec from_cpu, Vec from_cpu_bf16) {
    names.push_back(std::move(name));
    gpu.push_back(std::move(from_gpu));
    cpu.push_back(std::move(from_cpu));
    cpu_bf16.push_back(std::move(from_cpu_bf16));
  }
};

GemmOutputs run_conv(CudaOps& t, const k::Conv2dShape& s, int chunk, kc::Precision precision,
                     double bound) {
  const std::string what = describe(s) + " chunk " + std::to_string(chunk);
  const size_t in_n = size_t(s.batch) * s.in_channels * s.in_height * s.in_width;
  const size_t out_n = size_t(s.batch) * s.out_channels * s.out_height() * s.out_width();
  const size_t w_n = size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
  const Vec inp = random_floats(in_n, 1), weight = random_floats(w_n, 2);
  const Vec bias = random_floats(s.out_channels, 3), dout = random_floats(out_n, 4);
  // Gradients start non-zero: backward accumulates.
  const Vec dinp0 = random_floats(in_n, 5), dweight0 = random_floats(w_n, 6),
            dbias0 = random_floats(s.out_channels, 7);
  const kc::Gemm gemm = t.gemm(s, chunk, precision);
  const Vec inp16 = bf16_rounded(inp), weight16 = bf16_rounded(weight), dout16 = bf16_rounded(dout);

  Vec out(out_n), out16(out_n);
  k::ref::conv2d_forward(out.data(), inp.data(), weight.data(), bias.data(), s);
  k::ref::conv2d_forward(out16.data(), inp16.data(), weight16.data(), bias.data(), s);
  auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias);
  auto d_out = test::nan_filled<float>(out_n, "out");
  kc::conv2d_forward(d_out.data(), d_inp.data(), d_weight.data(), d_bias.data(), s, gemm,
                     t.stream());
  GemmOutputs outputs;
  outputs.add("conv2d_forward " + what, download(d_out), out, out16);
  expect_close(outputs.gpu.back(), out, bound, outputs.names.back());

  Vec dinp = dinp0, dweight = dweight0, dbias = dbias0;
  k::ref::conv2d_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(),
                          weight.data(), s);
  Vec dinp16 = dinp0, dweight16 = dweight0;
  k::ref::conv2d_backward(dinp16.data(), dweight16.data(), nullptr, dout16.data(), inp16.data(),
                          weight16.data(), s);
  auto d_dinp = upload(dinp0), d_dweight = upload(dweight0), d_dbias = upload(dbias0),
       d_dout = upload(dout);
  kc::conv2d_backward(d_dinp.data(), d_dweight.data(), d_dbias.data(), d_dout.data(), d_inp.data(),
                      d_weight.data(), s, gemm, t.stream());
  outputs.add("conv2d_backward dinp " + what, download(d_dinp), dinp, dinp16);
  expect_close(outputs.gpu.back(), dinp, bound, outputs.names.back());
  outputs.add("conv2d_backward dweight " + what, download(d_dweight), dweight, dweight16);
  expect_close(outputs.gpu.back(), dweight, bound, outputs.names.back());
  // The bias gradient is a row sum, not a GEMM: the same in every precision.
  expect_close(download(d_dbias), dbias, bound, "conv2d_backward dbias " + what);
  return outputs;
}

TEST_F(CudaOps, Conv2dMatchesReference) {
  for (const auto& s : kConvShapes)
    run_conv(*this, s, 0, kc::Precision::Fp32, test::kFp32GemmBound);
}

TEST_F(CudaOps, Conv2dInChunksMatchesReference) {
  // A scratch for two images at a time: batches of 5 and 3 run as 2+2+1 and 2+1.
  run_conv(*this, kConvShapes[3], 2, kc::Precision::Fp32, test::kFp32GemmBound);
  run_conv(*this, kConvShapes[1], 2, kc::Precision::Fp32, test::kFp32GemmBound);
}

TEST_F(CudaOps, Conv2dWithoutBiasOrSomeGradients) {
  const k::Conv2dShape s = kConvShapes[0];
  const size_t in_n = size_t(s.batch) * s.in_channels * s.in_height * s.in_width;
  const size_t out_n = size_t(s.batch) * s.out_channels * s.out_height() * s.out_width();
  const size_t w_n = size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
  const Vec inp = random_floats(in_n, 11), weight = random_floats(w_n, 12),
            dout = random_floats(out_n, 13);
  const kc::Gemm gemm = this->gemm(s);
  Vec out(out_n), dweight(w_n, 0.0f);
  k::ref::conv2d_forward(out.data(), inp.data(), weight.data(), nullptr, s);
  k::ref::conv2d_backward(nullptr, dweight.data(), nullptr, dout.data(), inp.data(), weight.data(),
                          s);
  auto d_inp = upload(inp), d_weight = upload(weight), d_dout = upload(dout);
  auto d_out = test::nan_filled<float>(out_n, "out");
  auto d_dweight = upload(Vec(w_n, 0.0f));
  kc::conv2d_forward(d_out.data(), d_inp.data(), d_weight.data(), nullptr, s, gemm, stream());
  kc::conv2d_backward(nullptr, d_dweight.data(), nullptr, d_dout.data(), d_inp.data(),
                      d_weight.data(), s, gemm, stream());
  expect_close(download(d_out), out, test::kFp32GemmBound, "conv2d_forward without bias");
  expect_close(download(d_dweight), dweight, test::kFp32GemmBound, "conv2d_backward dweight only");
}

TEST_F(CudaOps, Conv2dTooSmallScratchIsAnError) {
  const k::Conv2dShape s = kConvShapes[0];
  kc::Gemm gemm{blas_.get(), kc::Precision::Fp32, nullptr, 0};
  EXPECT_THROW(kc::conv2d_forward(nullptr, nullptr, nullptr, nullptr, s, gemm, stream()),
               std::invalid_argument);
}

GemmOutputs run_linear(CudaOps& t, LinearShape l, bool with_bias, kc::Precision precision,
                       double bound) {
  const std::string what = std::to_string(l.batch) + "x" + std::to_string(l.in_features) + " -> " +
                           std::to_string(l.out_features);
  const size_t in_n = size_t(l.batch) * l.in_features, out_n = size_t(l.batch) * l.out_features;
  const size_t w_n = size_t(l.out_features) * l.in_features;
  const Vec inp = random_floats(in_n, 21), weight = random_floats(w_n, 22),
            bias = random_floats(l.out_features, 23), dout = random_floats(out_n, 24);
  const Vec dinp0 = random_floats(in_n, 25), dweight0 = random_floats(w_n, 26),
            dbias0 = random_floats(l.out_features, 27);
  const kc::Gemm gemm =
      t.gemm({}, 0, precision, kc::linear_bf16_elements(l.batch, l.in_features, l.out_features));
  const float* b = with_bias ? bias.data() : nullptr;

  Vec out(out_n), dinp = dinp0, dweight = dweight0, dbias = dbias0;
  k::ref::linear_forward(out.data(), inp.data(), weight.data(), b, l.batch, l.in_features,
                         l.out_features);
  k::ref::linear_backward(dinp.data(), dweight.data(), with_bias ? dbias.data() : nullptr,
                          dout.data(), inp.data(), weight.data(), l.batch, l.in_features,
                          l.out_features);
  const Vec inp16 = bf16_rounded(inp), weight16 = bf16_rounded(weight), dout16 = bf16_rounded(dout);
  Vec out16(out_n), dinp16 = dinp0, dweight16 = dweight0;
  k::ref::linear_forward(out16.data(), inp16.data(), weight16.data(), b, l.batch, l.in_features,
                         l.out_features);
  k::ref::linear_backward(dinp16.data(), dweight16.data(), nullptr, dout16.data(), inp16.data(),
                          weight16.data(), l.batch, l.in_features, l.out_features);
  auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias), d_dout = upload(dout),
       d_dinp = upload(dinp0), d_dweight = upload(dweight0), d_dbias = upload(dbias0);
  auto d_out = test::nan_filled<float>(out_n, "out");
  kc::linear_forward(d_out.data(), d_inp.data(), d_weight.data(),
                     with_bias ? d_bias.data() : nullptr, l.batch, l.in_features, l.out_features,
                     gemm, t.stream());
  kc::linear_backward(d_dinp.data(), d_dweight.data(), with_bias ? d_dbias.data() : nullptr,
                      d_dout.data(), d_inp.data(), d_weight.data(), l.batch, l.in_features,
                      l.out_features, gemm, t.stream());
  GemmOutputs outputs;
  outputs.add("linear_forward " + what, download(d_out), out, out16);
  outputs.add("linear_backward dinp " + what, download(d_dinp), dinp, dinp16);
  outputs.add("linear_backward dweight " + what, download(d_dweight), dweight, dweight16);
  for (size_t i = 0; i < outputs.gpu.size(); ++i)
    expect_close(outputs.gpu[i], outputs.cpu[i], bound, outputs.names[i]);
  // The bias gradient is a column sum, not a GEMM: the same in every precision.
  expect_close(download(d_dbias), dbias, bound, "linear_backward dbias " + what);
  return outputs;
}

TEST_F(CudaOps, LinearMatchesReference) {
  for (const auto& l : kLinearShapes) {
    run_linear(*this, l, true, kc::Precision::Fp32, test::kFp32GemmBound);
    run_linear(*this, l, false, kc::Precision::Fp32, test::kFp32GemmBound);
  }
}

// CUBLAS_COMPUTE_32F_FAST_TF32 allows tensor cores, it does not demand them: cuBLAS may pick an
// exact fp32 kernel, and fp32's bits are a right tf32 result then (that the precision reaches
// cuBLAS at all is CudaCheck.EachPrecisionReachesCublasAsItsComputeAndOperandTypes's,
// everywhere). bf16 rounds its operands itself, so its results never have fp32's bits on these
// shapes. A result that differs must differ as rounded inputs do: further from the CPU's than
// fp32's (TF32 by ~1e-7 in normalized error, bf16 by ~5e-6; fp32 by ~1e-10 at most, from the
// order of its sums). Returns how many tf32 outputs had fp32's bits, which the caller prints.
int expect_reduced(const GemmOutputs& reduced, const GemmOutputs& fp32, kc::Precision precision) {
  EXPECT_EQ(reduced.gpu.size(), fp32.gpu.size());
  const char* name = precision == kc::Precision::Tf32 ? "tf32" : "bf16";
  int exact = 0;
  for (size_t i = 0; i < reduced.gpu.size() && i < fp32.gpu.size(); ++i) {
    if (reduced.gpu[i] == fp32.gpu[i]) {
      EXPECT_NE(precision, kc::Precision::Bf16) << "bf16 ran as fp32: " << reduced.names[i];
      ++exact;
      continue;
    }
    const double reduced_error = test::normalized_error(reduced.gpu[i], reduced.cpu[i]);
    const double fp32_error = test::normalized_error(fp32.gpu[i], fp32.cpu[i]);
    EXPECT_GT(reduced_error, 10 * fp32_error) << name << ": " << reduced.names[i];
  }
  return exact;
}

// pytorch-example's fc1 and conv2: large enough that cuBLAS usually takes tensor cores.
bool tensor_core_sized(const LinearShape& l) {
  return l.batch == 64 && l.in_features == 9216 && l.out_features == 128;
}
bool tensor_core_sized(const k::Conv2dShape& c) {
  return c.in_channels == 32 && c.out_channels == 64 && c.in_height == 26;
}

TEST_F(CudaOps, ReducedPrecisionGemmsStayWithinTheirBoundsAndDifferFromFp32AsRounding) {
  const auto fp32 = kc::Precision::Fp32;
  const double fp32_bound = test::kFp32GemmBound;
  int large = 0, exact = 0;
  for (const auto& [precision, bound] : {std::pair{kc::Precision::Tf32, test::kTf32Bound},
                                         std::pair{kc::Precision::Bf16, test::kBf16Bound}}) {
    // Every shape within the precision's bound (run_linear and run_conv check it).
    for (const LinearShape& l : kLinearShapes) {
      const GemmOutputs reduced = run_linear(*this, l, true, precision, bound);
      if (!tensor_core_sized(l)) continue;
      ++large;
      exact += expect_reduced(reduced, run_linear(*this, l, true, fp32, fp32_bound), precision);
    }
    for (const k::Conv2dShape& c : kConvShapes) {
      const GemmOutputs reduced = run_conv(*this, c, 0, precision, bound);
      if (!tensor_core_sized(c)) continue;
      ++large;
      exact += expect_reduced(reduced, run_conv(*this, c, 0, fp32, fp32_bound), precision);
    }
  }
  EXPECT_EQ(large, 4) << "a large shape went missing from kLinearShapes or kConvShapes";
  if (exact > 0) std::printf("note: cuBLAS gave fp32's bits for %d tf32 outputs\n", exact);
}

// bf16 multiplies the operands rounded to bf16 and adds in fp32: on every shape (odd sizes, a
// product or two, long inner dimensions, the weight gradient in slices, a conv in chunks) each
// output is the CPU's product of the rounded operands within kBf16SumBound, and the exact
// product within kBf16Bound (run_linear and run_conv check that one).
TEST_F(CudaOps, Bf16GemmsMultiplyTheirOperandsRoundedToBf16) {
  const auto bf16 = kc::Precision::Bf16;
  std::vector<GemmOutputs> all;
  for (const LinearShape& l : kLinearShapes) {
    all.push_back(run_linear(*this, l, true, bf16, test::kBf16Bound));
    all.push_back(run_linear(*this, l, false, bf16, test::kBf16Bound));
  }
  for (const k::Conv2dShape& c : kConvShapes)
    all.push_back(run_conv(*this, c, 0, bf16, test::kBf16Bound));
  all.push_back(run_conv(*this, kConvShapes[3], 2, bf16, test::kBf16Bound));
  all.push_back(run_conv(*this, kConvShapes[7], 3, bf16, test::kBf16Bound));
  for (const GemmOutputs& outputs : all)
    for (size_t i = 0; i < outputs.gpu.size(); ++i)
      EXPECT_LE(test::normalized_error(outputs.gpu[i], outputs.cpu_bf16[i]), test::kBf16SumBound)
          << outputs.names[i];
}

// Each output of a bf16 forward within bf16_output_bound of the exact product: the bound of the
// rounding itself, derived in cuda_test_support.hpp, not a measured margin.
TEST_F(CudaOps, Bf16OutputsStayWithinTheirErrorBound) {
  auto magnitude = [](Vec v) {
    for (float& x : v) x = std::fabs(x);
    return v;
  };
  for (const LinearShape& l : kLinearShapes) {
    const Vec inp = random_floats(size_t(l.batch) * l.in_features, 21),
              weight = random_floats(size_t(l.out_features) * l.in_features, 22),
              bias = random_floats(l.out_features, 23);
    const size_t n = size_t(l.batch) * l.out_features;
    Vec exact(n), sizes(n);
    k::ref::linear_forward(exact.data(), inp.data(), weight.data(), bias.data(), l.batch,
                           l.in_features, l.out_features);
    k::ref::linear_forward(sizes.data(), magnitude(inp).data(), magnitude(weight).data(),
                           magnitude(bias).data(), l.batch, l.in_features, l.out_features);
    const kc::Gemm gemm =
        this->gemm({}, 0, kc::Precision::Bf16,
                   kc::linear_bf16_elements(l.batch, l.in_features, l.out_features));
    auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias);
    auto d_out = test::nan_filled<float>(n, "out");
    kc::linear_forward(d_out.data(), d_inp.data(), d_weight.data(), d_bias.data(), l.batch,
                       l.in_features, l.out_features, gemm, stream());
    const Vec out = download(d_out);
    for (size_t i = 0; i < n; ++i)
      ASSERT_LE(std::fabs(double(out[i]) - exact[i]),
                test::bf16_output_bound(sizes[i], l.in_features + 1))
          << "linear " << l.batch << "x" << l.in_features << " -> " << l.out_features << ", output "
          << i;
  }
  for (const k::Conv2dShape& s : kConvShapes) {
    const size_t in_n = size_t(s.batch) * s.in_channels * s.in_height * s.in_width;
    const size_t out_n = size_t(s.batch) * s.out_channels * s.out_height() * s.out_width();
    const size_t w_n = size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
    const Vec inp = random_floats(in_n, 1), weight = random_floats(w_n, 2),
              bias = random_floats(s.out_channels, 3);
    Vec exact(out_n), sizes(out_n);
    k::ref::conv2d_forward(exact.data(), inp.data(), weight.data(), bias.data(), s);
    k::ref::conv2d_forward(sizes.data(), magnitude(inp).data(), magnitude(weight).data(),
                           magnitude(bias).data(), s);
    const kc::Gemm gemm = this->gemm(s, 0, kc::Precision::Bf16);
    auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias);
    auto d_out = test::nan_filled<float>(out_n, "out");
    kc::conv2d_forward(d_out.data(), d_inp.data(), d_weight.data(), d_bias.data(), s, gemm,
                       stream());
    const Vec out = download(d_out);
    const int terms = s.in_channels * s.kernel_h * s.kernel_w + 1;
    for (size_t i = 0; i < out_n; ++i)
      ASSERT_LE(std::fabs(double(out[i]) - exact[i]), test::bf16_output_bound(sizes[i], terms))
          << "conv2d_forward " << describe(s) << ", output " << i;
  }
}

// bf16 is not tf32 under another name: on the shapes large enough for tensor cores no bf16
// output has tf32's bits; tf32 stays within kTf32RoundingBound of the exact product and bf16 does
// not; and tf32 is not the product of the operands rounded to bf16, which bf16 is.
TEST_F(CudaOps, Bf16IsNotTf32) {
  int large = 0;
  auto compare = [&](const GemmOutputs& bf16, const GemmOutputs& tf32) {
    ++large;
    ASSERT_EQ(bf16.gpu.size(), tf32.gpu.size());
    for (size_t i = 0; i < bf16.gpu.size(); ++i) {
      const std::string& what = bf16.names[i];
      EXPECT_NE(bf16.gpu[i], tf32.gpu[i]) << "bf16 ran as tf32: " << what;
      const double bf16_error = test::normalized_error(bf16.gpu[i], bf16.cpu[i]);
      const double tf32_error = test::normalized_error(tf32.gpu[i], tf32.cpu[i]);
      EXPECT_LE(tf32_error, test::kTf32RoundingBound) << "tf32: " << what;
      EXPECT_GT(bf16_error, test::kTf32RoundingBound) << "bf16 as close as tf32: " << what;
      EXPECT_LE(test::normalized_error(bf16.gpu[i], bf16.cpu_bf16[i]), test::kBf16SumBound)
          << "bf16: " << what;
      EXPECT_GT(test::normalized_error(tf32.gpu[i], tf32.cpu_bf16[i]), test::kBf16SumBound)
          << "tf32 as if rounded to bf16: " << what;
    }
  };
  const auto bf16 = kc::Precision::Bf16, tf32 = kc::Precision::Tf32;
  for (const LinearShape& l : kLinearShapes)
    if (tensor_core_sized(l))
      compare(run_linear(*this, l, true, bf16, test::kBf16Bound),
              run_linear(*this, l, true, tf32, test::kTf32Bound));
  for (const k::Conv2dShape& c : kConvShapes)
    if (tensor_core_sized(c))
      compare(run_conv(*this, c, 0, bf16, test::kBf16Bound),
              run_conv(*this, c, 0, tf32, test::kTf32Bound));
  EXPECT_EQ(large, 2) << "a large shape went missing from kLinearShapes or kConvShapes";
}

TEST_F(CudaOps, RowAndColumnSumsMatchALoop) {
  // The bias gradients' block reductions on their own (also what racecheck checks), at sizes
  // below, at and above a block's 256 threads: out starts non-zero, the sums are added to it.
  for (const auto& [rows, cols] : {std::pair{1, 1}, std::pair{3, 256}, std::pair{5, 1000},
                                   std::pair{1000, 7}, std::pair{257, 3}}) {
    const std::string what = std::to_string(rows) + "x" + std::to_string(cols);
    const Vec in = random_floats(size_t(rows) * cols, 81), row0 = random_floats(rows, 82),
              col0 = random_floats(cols, 83);
    Vec row_sums = row0, col_sums = col0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        row_sums[r] += in[size_t(r) * cols + c];
        col_sums[c] += in[size_t(r) * cols + c];
      }
    auto d_in = upload(in), d_rows = upload(row0), d_cols = upload(col0);
    kc::row_sums_add(d_rows.data(), d_in.data(), rows, size_t(cols), stream());
    kc::column_sums_add(d_cols.data(), d_in.data(), rows, cols, stream());
    expect_close(download(d_rows), row_sums, test::kFp32Bound, "row_sums_add " + what);
    expect_close(download(d_cols), col_sums, test::kFp32Bound, "column_sums_add " + what);
  }
}

TEST_F(CudaOps, MaxPoolMatchesReferenceExactly) {
  const std::vector<k::Pool2dShape> shapes = {{2, 3, 8, 8, 2, 2},
                                              {3, 2, 7, 9, 2, 2},
                                              {2, 4, 9, 7, 3, 2},
                                              {1, 2, 6, 5, 3, 1},
                                              {4, 64, 24, 24, 2, 2}};
  for (const auto& s : shapes) {
    const std::string what = "pool " + std::to_string(s.in_height) + "x" +
                             std::to_string(s.in_width) + " k" + std::to_string(s.kernel) + " s" +
                             std::to_string(s.stride);
    const size_t in_n = size_t(s.batch) * s.channels * s.in_height * s.in_width;
    const size_t out_n = size_t(s.batch) * s.channels * s.out_height() * s.out_width();
    // Coarse values force ties, which must break the same way.
    Vec inp = random_floats(in_n, 31, -4.0f, 4.0f);
    for (float& x : inp) x = std::round(x);
    const Vec dout = random_floats(out_n, 32), dinp0 = random_floats(in_n, 33);
    Vec out(out_n), dinp = dinp0;
    std::vector<int32_t> argmax(out_n);
    k::ref::maxpool2d_forward(out.data(), argmax.data(), inp.data(), s);
    k::ref::maxpool2d_backward(dinp.data(), dout.data(), argmax.data(), s);
    auto d_inp = upload(inp), d_dout = upload(dout), d_dinp = upload(dinp0);
    auto d_out = test::nan_filled<float>(out_n, "out");
    auto d_argmax = test::nan_filled<int32_t>(out_n, "argmax");
    kc::maxpool2d_forward(d_out.data(), d_argmax.data(), d_inp.data(), s, stream());
    kc::maxpool2d_backward(d_dinp.data(), d_dout.data(), d_argmax.data(), s, stream());
    EXPECT_EQ(download(d_out), out) << what;
    EXPECT_EQ(download(d_argmax), argmax) << what;
    EXPECT_EQ(download(d_dinp), dinp) << what;
  }
}

TEST_F(CudaOps, ActivationsMatchReference) {
  for (size_t n : {size_t(1), size_t(1000), size_t(12345)}) {
    const Vec inp = random_floats(n, 41, -3.0f, 3.0f), dout = random_floats(n, 42),
              dinp0 = random_floats(n, 43);
    auto d_inp = upload(inp), d_dout = upload(dout);
    auto d_out = test::nan_filled<float>(n, "out");
    Vec out(n), dinp = dinp0;
    k::ref::relu_forward(out.data(), inp.data(), n);
    k::ref::relu_backward(dinp.data(), dout.data(), out.data(), n);
    auto d_dinp = upload(dinp0);
    kc::relu_forward(d_out.data(), d_inp.data(), n, stream());
    kc::relu_backward(d_dinp.data(), d_dout.data(), d_out.data(), n, stream());
    EXPECT_EQ(download(d_out), out) << "relu_forward " << n;
    expect_close(download(d_dinp), dinp, test::kFp32Bound, "relu_backward");

    dinp = dinp0;
    d_out = test::nan_filled<float>(n, "out");
    k::ref::tanh_forward(out.data(), inp.data(), n);
    k::ref::tanh_backward(dinp.data(), dout.data(), out.data(), n);
    d_dinp = upload(dinp0);
    kc::tanh_forward(d_out.data(), d_inp.data(), n, stream());
    kc::tanh_backward(d_dinp.data(), d_dout.data(), d_out.data(), n, stream());
    expect_close(download(d_out), out, test::kFp32Bound, "tanh_forward");
    expect_close(download(d_dinp), dinp, test::kFp32Bound, "tanh_backward");
  }
}

TEST_F(CudaOps, DropoutMaskHasTheCpuBits) {
  for (size_t n : {size_t(1), size_t(7), size_t(4099), size_t(9216 * 3)})
    for (float p : {0.25f, 0.5f})
      for (uint64_t step : {uint64_t(1), uint64_t(1234567)})
        for (uint64_t first : {uint64_t(0), uint64_t(3), uint64_t(130)}) {  // a shard's start
          const uint64_t layer = 5, seed = 42;
          Vec mask(n);
          k::dropout_mask(mask.data(), n, p, seed, k::rng::dropout_counter(step, layer), first);
          auto d_step = upload(std::vector<uint64_t>{step});
          auto d_mask = test::nan_filled<float>(n, "mask");
          kc::dropout_mask(d_mask.data(), n, p, seed, d_step.data(), layer, first, stream());
          EXPECT_EQ(download(d_mask), mask)
              << "n " << n << " p " << p << " step " << step << " first " << first;
        }
  EXPECT_THROW(kc::dropout_mask(nullptr, 4, 1.0f, 1, nullptr, 0, 0, stream()),
               std::invalid_argument);
}

TEST_F(CudaOps, DropoutForwardAndBackwardMatchReference) {
  const size_t n = 5003;
  const Vec inp = random_floats(n, 51), dout = random_floats(n, 52), dinp0 = random_floats(n, 53);
  Vec mask(n), out(n), dinp = dinp0;
  k::dropout_mask(mask.data(), n, 0.5f, 7, 99);
  k::ref::dropout_forward(out.data(), inp.data(), mask.data(), n);
  k::ref::dropout_backward(dinp.data(), dout.data(), mask.data(), n);
  auto d_inp = upload(inp), d_dout = upload(dout), d_mask = upload(mask), d_dinp = upload(dinp0);
  auto d_out = test::nan_filled<float>(n, "out");
  kc::dropout_forward(d_out.data(), d_inp.data(), d_mask.data(), n, stream());
  kc::dropout_backward(d_dinp.data(), d_dout.data(), d_mask.data(), n, stream());
  EXPECT_EQ(download(d_out), out);
  expect_close(download(d_dinp), dinp, test::kFp32Bound, "dropout_backward");
}

TEST_F(CudaOps, SoftmaxCrossEntropyMatchesReference) {
  for (const auto& [batch, classes] : {std::pair{1, 10}, std::pair{37, 10}, std::pair{1000, 10},
                                       std::pair{5, 3}, std::pair{9, 45}}) {
    const std::string what = std::to_string(batch) + "x" + std::to_string(classes);
    const Vec logits = random_floats(size_t(batch) * classes, 61, -5.0f, 5.0f);
    std::vector<uint8_t> labels(batch);
    for (int n = 0; n < batch; ++n) labels[n] = uint8_t((n * 7 + 3) % classes);
    Vec dlogits(logits.size());
    double loss = 0;
    int correct = 0;
    k::ref::softmax_cross_entropy(dlogits.data(), &loss, &correct, logits.data(), labels.data(),
                                  batch, classes);
    auto d_logits = upload(logits);
    auto d_labels = upload(labels);
    auto d_dlogits = test::nan_filled<float>(logits.size(), "dlogits");
    auto d_loss = test::nan_filled<double>(1, "loss");
    auto d_correct = test::nan_filled<int>(1, "correct");
    kc::softmax_cross_entropy(d_dlogits.data(), d_loss.data(), d_correct.data(), d_logits.data(),
                              d_labels.data(), batch, classes, 0, stream());
    expect_close(download(d_dlogits), dlogits, test::kFp32Bound, "dlogits " + what);

    // A shard of a batch three times as large: the gradient is divided by the whole batch.
    Vec shard_dlogits(logits.size());
    k::ref::softmax_cross_entropy(shard_dlogits.data(), &loss, &correct, logits.data(),
                                  labels.data(), batch, classes, 3 * batch);
    d_dlogits = test::nan_filled<float>(logits.size(), "dlogits");
    d_loss = test::nan_filled<double>(1, "loss");
    d_correct = test::nan_filled<int>(1, "correct");
    kc::softmax_cross_entropy(d_dlogits.data(), d_loss.data(), d_correct.data(), d_logits.data(),
                              d_labels.data(), batch, classes, 3 * batch, stream());
    expect_close(download(d_dlogits), shard_dlogits, test::kFp32Bound, "shard dlogits " + what);
    const double gpu_loss = download(d_loss)[0];
    EXPECT_TRUE(std::isfinite(gpu_loss)) << what;
    EXPECT_NEAR(gpu_loss, loss, 1e-5 * std::abs(loss)) << what;
    EXPECT_EQ(download(d_correct)[0], correct) << what;

    // Evaluation: no gradient wanted.
    d_loss = test::nan_filled<double>(1, "loss");
    kc::softmax_cross_entropy(nullptr, d_loss.data(), d_correct.data(), d_logits.data(),
                              d_labels.data(), batch, classes, 0, stream());
    EXPECT_EQ(download(d_loss)[0], gpu_loss) << what;
  }
}

// The parameters, the update p - p0 and the state (velocity, Adam's m and v) after each of three
// steps, against the CPU twin's: the parameters alone pass a kernel that forgets its weight decay
// (CudaTestChecks.AnOptimizerThatForgetsItsWeightDecayFailsOnTheUpdateOrTheState).
TEST_F(CudaOps, OptimizerUpdatesAndStateMatchTheCpu) {
  const size_t n = 10007;
  const Vec params0 = random_floats(n, 71);
  for (const OptimizerCase& c : kOptimizerCases) {
    auto d_params = upload(params0), d_first = upload(Vec(n, 0.0f)),
         d_second = upload(Vec(n, 0.0f));
    for (uint64_t step = 1; step <= 3; ++step) {
      auto d_grads = upload(optimizer_grads(step, n));
      auto d_lr = upload(Vec{optimizer_lr(step)});
      auto d_step = upload(std::vector<uint64_t>{step});
      if (c.adam)
        kc::adam_update(d_params.data(), d_first.data(), d_second.data(), d_grads.data(), n,
                        d_lr.data(), 0.9f, 0.999f, 1e-8f, c.weight_decay, c.decoupled,
                        d_step.data(), stream());
      else
        kc::sgd_update(d_params.data(), c.momentum != 0.0f ? d_first.data() : nullptr,
                       d_grads.data(), n, d_lr.data(), c.momentum, c.weight_decay, stream());
      const OptimizerState cpu = cpu_optimizer_steps(c, params0, int(step));
      const std::string what = std::string(c.name) + " step " + std::to_string(step);
      const Vec params = download(d_params);
      expect_close(params, cpu.params, test::kFp32Bound, what);
      EXPECT_LE(test::update_error(params, cpu.params, params0), test::kFp32Bound)
          << what << ": the update p - p0";
      if (c.adam || c.momentum != 0.0f)
        expect_close(download(d_first), cpu.first, test::kFp32Bound,
                     what + (c.adam ? ": Adam's m" : ": the velocity"));
      if (c.adam)
        expect_close(download(d_second), cpu.second, test::kFp32Bound, what + ": Adam's v");
    }
  }
}

TEST_F(CudaOps, GatherBatchHasTheCpuBits) {
  data::ImageSet set;
  set.count = 50;
  set.rows = 28;
  set.cols = 28;
  set.pixels.resize(size_t(set.count) * 784);
  set.labels.resize(set.count);
  for (size_t i = 0; i < set.pixels.size(); ++i) set.pixels[i] = uint8_t(i * 37 % 256);
  for (int i = 0; i < set.count; ++i) set.labels[i] = uint8_t(i % 10);
  const std::vector<int32_t> indices = {49, 0, 7, 7, 23, 1, 48};
  Vec images(indices.size() * 784);
  std::vector<uint8_t> labels(indices.size());
  data::gather_batch(images.data(), labels.data(), set, indices);
  auto d_pixels = upload(set.pixels), d_set_labels = upload(set.labels);
  auto d_indices = upload(indices);
  auto d_images = test::nan_filled<float>(images.size(), "images");
  auto d_labels = test::nan_filled<uint8_t>(labels.size(), "labels");
  kc::gather_batch(d_images.data(), d_labels.data(), d_pixels.data(), d_set_labels.data(),
                   d_indices.data(), int(indices.size()), 784, data::kMnistMean, data::kMnistStd,
                   stream());
  EXPECT_EQ(download(d_images), images);
  EXPECT_EQ(download(d_labels), labels);
}

}  // namespace
}  // namespace gpulab
