// The implicit-GEMM convolution (kernels/cuda/conv2d_implicit.cuh), part of the test_kernels_cuda
// suite: every convolution of every preset at batch 1, 3 and 64, and odd shapes (stride 2 and 3,
// 1x1, a kernel of 4x2, more than one tile of channels), against the CPU reference kernels. fp32
// within kFp32GemmBound; tf32 and bf16 within their bounds, always outside kFp32GemmBound (they
// round every operand as they stage it), and within the fp32 sums' bound of the CPU's product of
// the operands rounded as they round them; the ReLU fused both ways against conv2d_relu_*.
// Outputs start as NaN, gradients as non-zero values (backward accumulates), the weight
// gradient's partial sums as NaN; a second run gives the same bits. Skips where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/shape_check.hpp"
#include "kernels/cuda/conv2d_implicit.cuh"
#include "kernels/cuda/conv2d_implicit_products.cuh"
#include "kernels/cuda/memory.hpp"
#include "preset_conv_shapes.hpp"

namespace gpulab {
namespace {

namespace k = gpulab::kernels;
namespace kc = gpulab::kernels::cuda;
using test::download;
using test::expect_close;
using test::random_floats;
using test::upload;
using Vec = std::vector<float>;

// Shapes no preset has, at their own batch: the index arithmetic of stride, padding and
// rectangular kernels, and results larger than one 64x64 tile in every direction.
const std::vector<test::PresetConv> kOddConvs = {
    {"odd sizes, padding", {2, 3, 7, 9, 4, 3, 3, 1, 1}, true},
    {"stride 2", {3, 5, 11, 7, 6, 3, 3, 2, 1}, true},
    {"1x1", {2, 4, 5, 5, 3, 1, 1, 1, 0}, false},
    {"stride 3, padding 2, a 4x2 kernel, 70 channels out", {2, 3, 10, 9, 70, 4, 2, 3, 2}, true},
    {"padding wider than the kernel", {2, 2, 4, 4, 3, 2, 2, 1, 3}, false},
};

struct Tensors {
  Vec inp, weight, bias, dout, dinp0, dweight0, dbias0;
};
Tensors random_tensors(const k::Conv2dShape& s) {
  const size_t in_n = size_t(s.batch) * s.in_channels * s.in_height * s.in_width;
  const size_t out_n = size_t(s.batch) * s.out_channels * s.out_height() * s.out_width();
  const size_t w_n = size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
  return {random_floats(in_n, 31),           random_floats(w_n, 32),
          random_floats(s.out_channels, 33), random_floats(out_n, 34),
          random_floats(in_n, 35),           random_floats(w_n, 36),
          random_floats(s.out_channels, 37)};
}

// What the convolution gives: its output and the three gradients, accumulated onto
// dinp0/dweight0/dbias0.
struct Results {
  Vec out, dinp, dweight, dbias;
};

Vec rounded(Vec v, kc::Precision precision) {
  for (float& x : v)
    x = precision == kc::Precision::Tf32   ? test::round_to_tf32(x)
        : precision == kc::Precision::Bf16 ? test::round_to_bf16(x)
                                           : x;
  return v;
}

// The CPU reference with the GEMM operands (input, weight, output gradient) rounded as
// `precision` rounds them; bias and the bias gradient stay fp32. With relu_out, the ReLU fused:
// forward conv2d_relu_forward, backward conv2d_relu_backward through relu_out.
Results cpu_results(const k::Conv2dShape& s, const Tensors& t, kc::Precision precision, bool relu,
                    const Vec* relu_out) {
  const Vec inp = rounded(t.inp, precision), weight = rounded(t.weight, precision),
            dout = rounded(t.dout, precision);
  Results r{Vec(t.dout.size()), t.dinp0, t.dweight0, t.dbias0};
  if (relu) {
    k::ref::conv2d_relu_forward(r.out.data(), inp.data(), weight.data(), t.bias.data(), s);
    k::ref::conv2d_relu_backward(r.dinp.data(), r.dweight.data(), r.dbias.data(), dout.data(),
                                 relu_out->data(), inp.data(), weight.data(), s);
  } else {
    k::ref::conv2d_forward(r.out.data(), inp.data(), weight.data(), t.bias.data(), s);
    k::ref::conv2d_backward(r.dinp.data(), r.dweight.data(), r.dbias.data(), dout.data(),
                            inp.data(), weight.data(), s);
  }
  if (precision != kc::Precision::Fp32) {  // the bias gradient sums fp32 dout
    Results exact = cpu_results(s, t, kc::Precision::Fp32, relu, relu_out);
    r.dbias = exact.dbias;
  }
  return r;
}

// The implicit GEMM as implicit_gemm_kernel computes it in fp32, one result at a time: each
// slice's sum in depth order with fma (the tile loop's fmaf over its staged tiles, whose padding
// adds exact zeros), stored by the product; the partial sums then added in slice order
// (add_slices_kernel).
template <class Product>
void emulate(const Product& product, int M, int N, int depth, int slices, int slice_depth) {
  for (int z = 0; z < slices; ++z) {
    const int begin = z * slice_depth, end = std::min(depth, begin + slice_depth);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = 0.0f;
        for (int d = begin; d < end; ++d) acc = std::fma(product.a(m, d), product.b(d, n), acc);
        product.store(m, n, acc, z);
      }
  }
}

// conv2d_implicit_forward and _backward in fp32 on the host through the kernels' own products and
// split (one chunk of images); the bias gradient as a double sum (the GPU's is a block's tree).
Results emulated(const k::Conv2dShape& s, const Tensors& t, bool relu, const Vec* relu_out,
                 size_t scratch_floats) {
  namespace d = kc::detail;
  const d::Geometry g = d::geometry_of(s);
  const int positions = s.batch * g.P;
  const float* mask = relu_out != nullptr ? relu_out->data() : nullptr;
  Results r{Vec(t.dout.size()), t.dinp0, t.dweight0, t.dbias0};
  emulate(d::ForwardProduct{r.out.data(), t.inp.data(), t.weight.data(), t.bias.data(), g, relu},
          g.K, positions, g.CRS, 1, g.CRS);
  emulate(d::InputGradProduct{r.dinp.data(), t.dout.data(), mask, t.weight.data(), g}, g.C,
          s.batch * g.HW, g.K * g.RS, 1, g.K * g.RS);
  Vec partial(scratch_floats);
  const d::WeightGradSplit split = d::split_weight_gradient(
      g, positions, scratch_floats ? partial.data() : nullptr, scratch_floats);
  emulate(d::WeightGradProduct{r.dweight.data(), split.slices > 1 ? partial.data() : nullptr,
                               t.dout.data(), mask, t.inp.data(), g},
          g.K, g.CRS, positions, split.slices, split.slice_depth);
  if (split.slices > 1)
    for (size_t i = 0; i < r.dweight.size(); ++i) {
      float sum = 0.0f;
      for (int z = 0; z < split.slices; ++z) sum += partial[size_t(z) * r.dweight.size() + i];
      r.dweight[i] += sum;
    }
  for (int k = 0; k < g.K; ++k) {
    double sum = 0;
    for (int n = 0; n < s.batch; ++n)
      for (int p = 0; p < g.P; ++p) sum += g.dout_at(t.dout.data(), mask, n, k, p);
    r.dbias[size_t(k)] += float(sum);
  }
  return r;
}

// The ReLU's output whose mask a fused backward reads, from the exact forward.
Vec relu_output(const k::Conv2dShape& s, const Tensors& t) {
  Vec out(t.dout.size());
  k::ref::conv2d_relu_forward(out.data(), t.inp.data(), t.weight.data(), t.bias.data(), s);
  return out;
}

// What the suite can check without a GPU: the products' index arithmetic (stride, padding, the
// taps an input position meets, the layouts they store into), the fused ReLU's mask and the
// weight gradient's split, emulated on the host with the kernels' own code, against the CPU
// reference on every preset's convolutions at batch 2 and on the odd shapes.
TEST(CudaImplicitConvProducts, IndexTheTensorsAsTheReferenceDoes) {
  std::vector<test::PresetConv> cases = test::kPresetConvs;
  for (test::PresetConv& c : cases) c.shape.batch = 2;
  cases.insert(cases.end(), kOddConvs.begin(), kOddConvs.end());
  test::PresetConv split = test::kPresetConvs[2];  // pytorch-example conv1 at batch 16
  split.shape.batch = 16;
  cases.push_back(split);
  int splits = 0;
  for (const test::PresetConv& c : cases) {
    const k::Conv2dShape& s = c.shape;
    const Tensors t = random_tensors(s);
    for (const bool relu : {false, true}) {
      if (relu && !c.relu_after) continue;
      const Vec out = relu ? relu_output(s, t) : Vec();
      const Vec* mask = relu ? &out : nullptr;
      const Results exact = cpu_results(s, t, kc::Precision::Fp32, relu, mask);
      const size_t scratch = kc::conv2d_implicit_scratch_floats(s);
      std::vector<size_t> scratches = {scratch};
      if (scratch > 0) scratches.push_back(0);  // and in one pass
      for (const size_t floats : scratches) {
        const std::string what = std::string(c.what) + " " + k::detail::describe(s) +
                                 (relu ? " relu" : "") + " scratch " + std::to_string(floats);
        splits += floats > 0;
        const Results host = emulated(s, t, relu, mask, floats);
        expect_close(host.out, exact.out, test::kFp32GemmBound, what + " forward");
        expect_close(host.dinp, exact.dinp, test::kFp32GemmBound, what + " dinp");
        expect_close(host.dweight, exact.dweight, test::kFp32GemmBound, what + " dweight");
        expect_close(host.dbias, exact.dbias, test::kFp32GemmBound, what + " dbias");
      }
    }
  }
  EXPECT_GT(splits, 0) << "no shape split its weight gradient";
}

class CudaImplicitConv : public ::testing::Test {
 public:
  void SetUp() override {
    GPULAB_REQUIRE_GPU();
    stream_ = kc::make_stream();
  }
  cudaStream_t stream() const { return stream_.get(); }

  // The GPU's results; relu_out (the CPU's relu output) given, the ReLU fused. scratch_floats:
  // the weight gradient's room for partial sums (NaN-filled); -1: what
  // conv2d_implicit_scratch_floats asks for.
  Results run(const k::Conv2dShape& s, const Tensors& t, kc::Precision precision, bool relu,
              const Vec* relu_out, long long scratch_floats = -1) {
    const size_t floats =
        scratch_floats < 0 ? kc::conv2d_implicit_scratch_floats(s) : size_t(scratch_floats);
    auto scratch = test::nan_filled<float>(floats, "the partial sums");
    const kc::Gemm gemm{nullptr, precision, scratch.data(), floats};
    auto d_inp = upload(t.inp), d_weight = upload(t.weight), d_bias = upload(t.bias),
         d_dout = upload(t.dout);
    auto d_out = test::nan_filled<float>(t.dout.size(), "out");
    kc::conv2d_implicit_forward(d_out.data(), d_inp.data(), d_weight.data(), d_bias.data(), s, relu,
                                gemm, stream());
    auto d_dinp = upload(t.dinp0), d_dweight = upload(t.dweight0), d_dbias = upload(t.dbias0);
    kc::DeviceBuffer<float> d_relu_out;
    if (relu_out != nullptr) d_relu_out = upload(*relu_out);
    kc::conv2d_implicit_backward(d_dinp.data(), d_dweight.data(), d_dbias.data(), d_dout.data(),
                                 d_relu_out.data(), d_inp.data(), d_weight.data(), s, gemm,
                                 stream());
    return {download(d_out), download(d_dinp), download(d_dweight), download(d_dbias)};
  }

  // Every result of `s` in `precision` against the CPU: within `bound` of the exact reference;
  // tf32 and bf16 outside kFp32GemmBound of it, and within kBf16SumBound (fp32 sums of exact
  // products) of the reference of their rounded operands. The bias gradient sums fp32 values in
  // every precision.
  void check(const std::string& what, const k::Conv2dShape& s, const Tensors& t,
             kc::Precision precision, double bound, bool relu, const Results& exact,
             const Vec* relu_out, bool thorough) {
    const std::string name = what + " " + k::detail::describe(s) + " " +
                             (precision == kc::Precision::Fp32   ? "fp32"
                              : precision == kc::Precision::Tf32 ? "tf32"
                                                                 : "bf16") +
                             (relu ? " relu" : "");
    const Results gpu = run(s, t, precision, relu, relu_out);
    const Results same_operands = precision == kc::Precision::Fp32 || !thorough
                                      ? exact
                                      : cpu_results(s, t, precision, relu, relu_out);
    // Each GEMM's result: the GPU's, the exact reference's, the reference's of the rounded
    // operands, and the value the kernel accumulated onto (none for the forward).
    struct Part {
      const char* name;
      const Vec &gpu, &exact, &same_operands;
      const Vec* start;
    };
    for (const Part& part :
         {Part{"forward", gpu.out, exact.out, same_operands.out, nullptr},
          Part{"dinp", gpu.dinp, exact.dinp, same_operands.dinp, &t.dinp0},
          Part{"dweight", gpu.dweight, exact.dweight, same_operands.dweight, &t.dweight0}}) {
      const std::string where = name + " " + part.name;
      expect_close(part.gpu, part.exact, bound, where);
      if (precision == kc::Precision::Fp32) continue;
      if (thorough) {
        EXPECT_LE(test::normalized_error(part.gpu, part.same_operands), test::kBf16SumBound)
            << where << ": not the product of the rounded operands";
      }
      // What the kernel added, without the start value that would dilute the error.
      const Vec added = part.start ? test::update_of(part.gpu, *part.start) : part.gpu;
      const Vec exact_added = part.start ? test::update_of(part.exact, *part.start) : part.exact;
      EXPECT_GT(test::normalized_error(added, exact_added), test::kFp32GemmBound)
          << where << ": as close as fp32, so its operands were not rounded";
    }
    expect_close(gpu.dbias, exact.dbias, test::kFp32GemmBound, name + " dbias");
  }

  // Every precision on `cases` at `batch` (0: each case's own). Thorough: plain and, where a
  // ReLU follows, fused, and reduced precisions also against the reference of their rounded
  // operands; else (large batches, where the CPU reference takes seconds a shape) plain, against
  // the exact reference only.
  void check_all(const std::vector<test::PresetConv>& cases, int batch,
                 const std::vector<kc::Precision>& precisions, bool thorough = true) {
    for (const test::PresetConv& c : cases) {
      k::Conv2dShape s = c.shape;
      if (batch > 0) s.batch = batch;
      const Tensors t = random_tensors(s);
      for (const bool relu : {false, true}) {
        if (relu && (!c.relu_after || !thorough)) continue;
        const Vec relu_out = relu ? relu_output(s, t) : Vec();
        const Vec* mask = relu ? &relu_out : nullptr;
        const Results exact = cpu_results(s, t, kc::Precision::Fp32, relu, mask);
        for (const kc::Precision precision : precisions) {
          const double bound = precision == kc::Precision::Fp32   ? test::kFp32GemmBound
                               : precision == kc::Precision::Tf32 ? test::kTf32Bound
                                                                  : test::kBf16Bound;
          check(c.what, s, t, precision, bound, relu, exact, mask, thorough);
        }
      }
    }
  }

  kc::Stream stream_;
};

const std::vector<kc::Precision> kAllPrecisions = {kc::Precision::Fp32, kc::Precision::Tf32,
                                                   kc::Precision::Bf16};

TEST_F(CudaImplicitConv, PresetConvolutionsAtBatch1And3MatchTheReference) {
  check_all(test::kPresetConvs, 1, kAllPrecisions);
  check_all(test::kPresetConvs, 3, kAllPrecisions);
}

TEST_F(CudaImplicitConv, PresetConvolutionsAtBatch64MatchTheReference) {
  check_all(test::kPresetConvs, 64, kAllPrecisions, false);
}

TEST_F(CudaImplicitConv, OddShapesMatchTheReference) { check_all(kOddConvs, 0, kAllPrecisions); }

// fp32 is the tile loop's sums exactly: each result the host emulation's bits (the same fmas in
// the same order), so a tile staged wrong, a fragment of padding that is not zero or a result
// stored twice shows at once, on every preset's convolutions at batch 3 and the odd shapes.
TEST_F(CudaImplicitConv, Fp32GivesTheEmulatedSumsBitForBit) {
  std::vector<test::PresetConv> cases = test::kPresetConvs;
  for (test::PresetConv& c : cases) c.shape.batch = 3;
  cases.insert(cases.end(), kOddConvs.begin(), kOddConvs.end());
  for (const test::PresetConv& c : cases) {
    const k::Conv2dShape& s = c.shape;
    const Tensors t = random_tensors(s);
    for (const bool relu : {false, true}) {
      if (relu && !c.relu_after) continue;
      const Vec out = relu ? relu_output(s, t) : Vec();
      const Vec* mask = relu ? &out : nullptr;
      const std::string what = std::string(c.what) + (relu ? " relu" : "");
      const Results gpu = run(s, t, kc::Precision::Fp32, relu, mask);
      const Results host = emulated(s, t, relu, mask, kc::conv2d_implicit_scratch_floats(s));
      EXPECT_EQ(gpu.out, host.out) << what << " forward";
      EXPECT_EQ(gpu.dinp, host.dinp) << what << " dinp";
      EXPECT_EQ(gpu.dweight, host.dweight) << what << " dweight";
      expect_close(gpu.dbias, host.dbias, test::kFp32GemmBound, what + " dbias");
    }
  }
}

// The fused ReLU's mask is relu_backward's: a gradient passes where the output is > 0 and is
// dropped where it is 0, also where the pre-activation was exactly 0 or negative zero.
TEST_F(CudaImplicitConv, TheFusedReluDropsTheGradientWhereItsOutputIsNotPositive) {
  const k::Conv2dShape s = {2, 3, 6, 6, 5, 3, 3, 1, 1};
  const Tensors t = random_tensors(s);
  Vec relu_out(t.dout.size());
  for (size_t i = 0; i < relu_out.size(); ++i)
    relu_out[i] = i % 3 == 0 ? 0.0f : (i % 3 == 1 ? -0.0f : 1.0f + float(i % 7));
  Vec masked = t.dout;
  for (size_t i = 0; i < masked.size(); ++i)
    if (!(relu_out[i] > 0.0f)) masked[i] = 0.0f;
  Tensors plain = t;
  plain.dout = masked;
  const Results fused = run(s, t, kc::Precision::Fp32, false, &relu_out);
  const Results unfused = run(s, plain, kc::Precision::Fp32, false, nullptr);
  EXPECT_EQ(fused.dinp, unfused.dinp);
  EXPECT_EQ(fused.dweight, unfused.dweight);
  EXPECT_EQ(fused.dbias, unfused.dbias);
}

// The weight gradient in slices (its partial sums NaN-filled, each written before it is added),
// in one pass without a scratch, and with room for fewer slices: the same sums within fp32's
// bound; and each way twice gives the same bits.
TEST_F(CudaImplicitConv, TheWeightGradientIsRightWithAnyScratchAndDeterministic) {
  k::Conv2dShape s = test::kPresetConvs[2].shape;  // pytorch-example conv1: one tile, long depth
  s.batch = 64;
  ASSERT_GT(kc::conv2d_implicit_scratch_floats(s), size_t(0)) << "no split to test";
  const Tensors t = random_tensors(s);
  const Results exact = cpu_results(s, t, kc::Precision::Fp32, false, nullptr);
  const size_t result = size_t(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
  for (const long long floats : {-1LL, 0LL, (long long)(3 * result), (long long)(result - 1)}) {
    const std::string what = "scratch " + std::to_string(floats);
    const Results first = run(s, t, kc::Precision::Fp32, false, nullptr, floats);
    expect_close(first.dweight, exact.dweight, test::kFp32GemmBound, what + " dweight");
    const Results second = run(s, t, kc::Precision::Fp32, false, nullptr, floats);
    EXPECT_EQ(std::memcmp(first.dweight.data(), second.dweight.data(),
                          first.dweight.size() * sizeof(float)),
              0)
        << what << ": two runs differ";
    EXPECT_EQ(first.dbias, second.dbias) << what;
  }
}

// Gradients not asked for (nullptr) are left alone, and a batch of 0 does nothing.
TEST_F(CudaImplicitConv, GradientsNotAskedForAndAnEmptyBatch) {
  const k::Conv2dShape s = kOddConvs[0].shape;
  const Tensors t = random_tensors(s);
  const Results exact = cpu_results(s, t, kc::Precision::Fp32, false, nullptr);
  auto d_inp = upload(t.inp), d_weight = upload(t.weight), d_dout = upload(t.dout);
  auto d_dweight = upload(t.dweight0);
  const kc::Gemm gemm{nullptr, kc::Precision::Fp32, nullptr, 0};
  kc::conv2d_implicit_backward(nullptr, d_dweight.data(), nullptr, d_dout.data(), nullptr,
                               d_inp.data(), d_weight.data(), s, gemm, stream());
  expect_close(download(d_dweight), exact.dweight, test::kFp32GemmBound, "dweight alone");
  k::Conv2dShape empty = s;
  empty.batch = 0;
  kc::conv2d_implicit_forward(nullptr, nullptr, d_weight.data(), nullptr, empty, true, gemm,
                              stream());
  kc::conv2d_implicit_backward(nullptr, d_dweight.data(), nullptr, nullptr, nullptr, nullptr,
                               d_weight.data(), empty, gemm, stream());
  expect_close(download(d_dweight), exact.dweight, test::kFp32GemmBound, "after an empty batch");
  k::Conv2dShape bad = s;
  bad.stride = 0;
  EXPECT_THROW(
      kc::conv2d_implicit_forward(nullptr, nullptr, nullptr, nullptr, bad, false, gemm, stream()),
      std::invalid_argument);
}

// Small shapes through every kernel in every precision, plain and fused, the weight gradient in
// slices: what compute-sanitizer's racecheck and memcheck run (scripts/gpu_check_single.sh), so
// few launches of few blocks.
TEST_F(CudaImplicitConv, SanitizerShapes) {
  check_all({kOddConvs[3]}, 0, kAllPrecisions);  // two tiles of channels, stride 3, padding 2
  k::Conv2dShape s = test::kPresetConvs[2].shape;
  s.batch = 4;  // 2704 positions: the weight gradient in two slices
  ASSERT_GT(kc::conv2d_implicit_scratch_floats(s), size_t(0)) << "no split to check";
  const Tensors t = random_tensors(s);
  const Results exact = cpu_results(s, t, kc::Precision::Fp32, false, nullptr);
  for (const kc::Precision precision : kAllPrecisions)
    expect_close(run(s, t, precision, false, nullptr).dweight, exact.dweight, test::kBf16Bound,
                 "sliced dweight");
}

}  // namespace
}  // namespace gpulab
