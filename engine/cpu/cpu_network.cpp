// The CPU side of the shared layer walk: host vectors and a table of CPU kernels.
#include "engine/cpu/cpu_network.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/model/layer_stack.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/cpu/ops.hpp"

namespace gpulab {
namespace {

namespace k = gpulab::kernels;

// One table of entry points so the same network runs on the fast or the reference kernels.
struct KernelTable {
  decltype(&k::cpu::conv2d_forward) conv2d_forward;
  decltype(&k::cpu::conv2d_backward) conv2d_backward;
  decltype(&k::cpu::conv2d_relu_forward) conv2d_relu_forward;
  decltype(&k::cpu::conv2d_relu_backward) conv2d_relu_backward;
  decltype(&k::cpu::conv2d_relu_maxpool_forward) conv2d_relu_maxpool_forward;
  decltype(&k::cpu::conv2d_relu_maxpool_backward) conv2d_relu_maxpool_backward;
  decltype(&k::cpu::linear_forward) linear_forward;
  decltype(&k::cpu::linear_backward) linear_backward;
  decltype(&k::cpu::maxpool2d_forward) maxpool2d_forward;
  decltype(&k::cpu::maxpool2d_backward) maxpool2d_backward;
  decltype(&k::cpu::relu_forward) relu_forward;
  decltype(&k::cpu::relu_backward) relu_backward;
  decltype(&k::cpu::tanh_forward) tanh_forward;
  decltype(&k::cpu::tanh_backward) tanh_backward;
  decltype(&k::cpu::dropout_forward) dropout_forward;
  decltype(&k::cpu::dropout_backward) dropout_backward;
  decltype(&k::cpu::softmax_cross_entropy) softmax_cross_entropy;
};

#define GPULAB_KERNEL_TABLE(ns)                                                                 \
  KernelTable {                                                                                 \
    ns::conv2d_forward, ns::conv2d_backward, ns::conv2d_relu_forward, ns::conv2d_relu_backward, \
        ns::conv2d_relu_maxpool_forward, ns::conv2d_relu_maxpool_backward, ns::linear_forward,  \
        ns::linear_backward, ns::maxpool2d_forward, ns::maxpool2d_backward, ns::relu_forward,   \
        ns::relu_backward, ns::tanh_forward, ns::tanh_backward, ns::dropout_forward,            \
        ns::dropout_backward, ns::softmax_cross_entropy                                         \
  }
const KernelTable kFastKernels = GPULAB_KERNEL_TABLE(k::cpu);
const KernelTable kReferenceKernels = GPULAB_KERNEL_TABLE(k::ref);
#undef GPULAB_KERNEL_TABLE

// Adds the time of one kernel call to `total_ms`. Two clock reads (tens of nanoseconds) around a
// call that does a whole layer's products for a batch (tens of microseconds and more) cost
// nothing measurable, so the timing is always on and every CPU record has it.
class MatmulTimer {
 public:
  explicit MatmulTimer(double& total_ms)
      : total_ms_(total_ms), start_(std::chrono::steady_clock::now()) {}
  ~MatmulTimer() {
    total_ms_ +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
  }
  MatmulTimer(const MatmulTimer&) = delete;
  MatmulTimer& operator=(const MatmulTimer&) = delete;

 private:
  double& total_ms_;
  std::chrono::steady_clock::time_point start_;
};

// LayerStack's Ops over host memory; the loss lands in `loss`, the time in convolution and
// fully connected kernels in `matmul_ms` (from the start of each forward).
struct CpuOps {
  template <class T>
  using Buffer = std::vector<T>;
  template <class T>
  static Buffer<T> allocate(size_t n, const std::string&) {
    return Buffer<T>(n);
  }

  const KernelTable* kernels = &kFastKernels;
  uint64_t seed = 0, step = 0;
  int batch = 0;  // this forward's rows, the shard's position in the whole batch and its size
  Shard shard;
  LossStats loss;
  double matmul_ms = 0;

  void conv2d_forward(float* out, const float* in, const float* w, const float* b,
                      const k::Conv2dShape& s) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_forward(out, in, w, b, s);
  }
  void conv2d_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, const k::Conv2dShape& s) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_backward(din, dw, db, dout, in, w, s);
  }
  void conv2d_relu_forward(float* out, const float* in, const float* w, const float* b,
                           const k::Conv2dShape& s) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_relu_forward(out, in, w, b, s);
  }
  void conv2d_relu_backward(float* din, float* dw, float* db, const float* dout, const float* out,
                            const float* in, const float* w, const k::Conv2dShape& s) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_relu_backward(din, dw, db, dout, out, in, w, s);
  }
  void conv2d_relu_maxpool_forward(float* out, int32_t* argmax, const float* in, const float* w,
                                   const float* b, const k::Conv2dShape& s,
                                   const k::Pool2dShape& pool) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_relu_maxpool_forward(out, argmax, in, w, b, s, pool);
  }
  void conv2d_relu_maxpool_backward(float* din, float* dw, float* db, const float* dout,
                                    const float* out, const int32_t* argmax, const float* in,
                                    const float* w, const k::Conv2dShape& s,
                                    const k::Pool2dShape& pool) {
    const MatmulTimer timer(matmul_ms);
    kernels->conv2d_relu_maxpool_backward(din, dw, db, dout, out, argmax, in, w, s, pool);
  }
  void linear_forward(float* out, const float* in, const float* w, const float* b, int batch,
                      int in_features, int out_features) {
    const MatmulTimer timer(matmul_ms);
    kernels->linear_forward(out, in, w, b, batch, in_features, out_features);
  }
  void linear_backward(float* din, float* dw, float* db, const float* dout, const float* in,
                       const float* w, int batch, int in_features, int out_features) {
    const MatmulTimer timer(matmul_ms);
    kernels->linear_backward(din, dw, db, dout, in, w, batch, in_features, out_features);
  }
  void maxpool2d_forward(float* out, int32_t* argmax, const float* in, const k::Pool2dShape& s) {
    kernels->maxpool2d_forward(out, argmax, in, s);
  }
  void maxpool2d_backward(float* din, const float* dout, const int32_t* argmax,
                          const k::Pool2dShape& s) {
    kernels->maxpool2d_backward(din, dout, argmax, s);
  }
  void relu_forward(float* out, const float* in, size_t n) { kernels->relu_forward(out, in, n); }
  void relu_backward(float* din, const float* dout, const float* out, size_t n) {
    kernels->relu_backward(din, dout, out, n);
  }
  void tanh_forward(float* out, const float* in, size_t n) { kernels->tanh_forward(out, in, n); }
  void tanh_backward(float* din, const float* dout, const float* out, size_t n) {
    kernels->tanh_backward(din, dout, out, n);
  }
  // Keyed on each element's position in the whole batch, so shards draw what one batch draws.
  void dropout_mask(float* mask, size_t n, float p, uint64_t layer) {
    const uint64_t first = uint64_t(shard.first_image) * (n / size_t(batch));
    k::dropout_mask(mask, n, p, seed, k::rng::dropout_counter(step, layer), first);
  }
  void dropout_forward(float* out, const float* in, const float* mask, size_t n) {
    kernels->dropout_forward(out, in, mask, n);
  }
  void dropout_backward(float* din, const float* dout, const float* mask, size_t n) {
    kernels->dropout_backward(din, dout, mask, n);
  }
  void softmax_cross_entropy(float* dlogits, const float* logits, const uint8_t* labels, int batch,
                             int classes) {
    loss = LossStats{};
    loss.count = batch;
    kernels->softmax_cross_entropy(dlogits, &loss.loss_sum, &loss.correct, logits, labels, batch,
                                   classes, shard.global_batch);
  }
  void copy(float* out, const float* in, size_t n) { std::memcpy(out, in, n * sizeof(float)); }
  void zero(float* out, size_t n) { k::cpu::zero(out, n); }
};

}  // namespace

struct CpuNetwork::Impl {
  LayerStack<CpuOps> stack;
  CpuOps ops;
};

// The fast network fuses conv + ReLU (+ max pooling) blocks; the reference network stays layer by
// layer: it is the oracle the fast one is tested against.
CpuNetwork::CpuNetwork(const ModelPlan& plan, int max_batch, CpuKernels kernels)
    : impl_(std::make_unique<Impl>(
          Impl{LayerStack<CpuOps>(plan, max_batch, kernels == CpuKernels::Fast), CpuOps{}})) {
  impl_->ops.kernels = kernels == CpuKernels::Fast ? &kFastKernels : &kReferenceKernels;
}

CpuNetwork::~CpuNetwork() = default;
CpuNetwork::CpuNetwork(CpuNetwork&&) noexcept = default;

std::span<float> CpuNetwork::parameters() {
  return {impl_->stack.parameters(), impl_->stack.parameter_count()};
}

std::span<float> CpuNetwork::gradients() {
  return {impl_->stack.gradients(), impl_->stack.parameter_count()};
}

int CpuNetwork::max_batch() const { return impl_->stack.max_batch(); }

LossStats CpuNetwork::forward(const float* images, const uint8_t* labels, int batch, bool training,
                              uint64_t seed, uint64_t step, Shard shard) {
  impl_->ops.seed = seed;
  impl_->ops.step = step;
  impl_->ops.batch = batch;
  impl_->ops.shard = shard;
  impl_->ops.matmul_ms = 0;
  impl_->stack.forward(impl_->ops, images, labels, batch, training);
  return impl_->ops.loss;
}

double CpuNetwork::matmul_ms() const { return impl_->ops.matmul_ms; }

std::span<const float> CpuNetwork::logits() const {
  const size_t classes = size_t(impl_->stack.plan().layers.back().output.channels);
  return {impl_->stack.logits(), size_t(impl_->ops.batch) * classes};
}

std::span<const float> CpuNetwork::layer_output(size_t layer) const {
  if (impl_->ops.kernels != &kReferenceKernels)
    throw std::logic_error(
        "CpuNetwork::layer_output: the fast kernels fuse layers; build the "
        "network with CpuKernels::Reference");
  const ModelPlan& plan = impl_->stack.plan();
  if (layer >= plan.layers.size())
    throw std::out_of_range("CpuNetwork::layer_output: layer " + std::to_string(layer) +
                            " of a model of " + std::to_string(plan.layers.size()));
  return {impl_->stack.output(layer),
          size_t(impl_->ops.batch) * size_t(plan.layers[layer].output.size())};
}

void CpuNetwork::backward(const std::function<void(size_t)>& ready) {
  impl_->stack.backward(impl_->ops, ready);
}

}  // namespace gpulab
