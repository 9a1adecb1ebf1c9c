// CPU compute kernels: a plain reference version of every op (namespace ref) and a fast
// version with the same name and arguments (namespace cpu). The reference stays as the oracle.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpulab::kernels {

struct Conv2dShape {
  int batch = 0;           // N
  int in_channels = 0;     // C
  int in_height = 0;       // H
  int in_width = 0;        // W
  int out_channels = 0;    // K
  int kernel_h = 0;        // R
  int kernel_w = 0;        // S
  int stride = 1;
  int padding = 0;
  int out_height() const { return (in_height + 2 * padding - kernel_h) / stride + 1; }
  int out_width() const { return (in_width + 2 * padding - kernel_w) / stride + 1; }
};

struct Pool2dShape {
  int batch = 0, channels = 0, in_height = 0, in_width = 0;
  int kernel = 2, stride = 2;
  int out_height() const { return (in_height - kernel) / stride + 1; }
  int out_width() const { return (in_width - kernel) / stride + 1; }
};

// Conventions (as llm.c): outputs first, then inputs, then dimensions. Forward functions
// overwrite their output. Backward functions ACCUMULATE (+=) into dinp, dweight and dbias;
// the caller zeroes gradient buffers before a backward pass. Any of dinp/dweight/dbias may be
// nullptr when that gradient is not wanted (the first layer's dinp, a layer without bias).

#define GPULAB_CPU_OPS                                                                          \
  /* out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr */                   \
  void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,     \
                      const Conv2dShape& s);                                                    \
  void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout,            \
                       const float* inp, const float* weight, const Conv2dShape& s);            \
  /* A convolution and the ReLU after it in one pass: out = relu(conv2d(inp)), and backward     \
     from the ReLU's output gradient dout and output out (as relu_backward takes them). */      \
  void conv2d_relu_forward(float* out, const float* inp, const float* weight,                   \
                           const float* bias, const Conv2dShape& s);                            \
  void conv2d_relu_backward(float* dinp, float* dweight, float* dbias, const float* dout,       \
                            const float* out, const float* inp, const float* weight,            \
                            const Conv2dShape& s);                                              \
  /* The same with the max pooling after the ReLU: out and argmax as maxpool2d_forward gives     \
     them, backward from the pooling's output gradient dout; the pooling's input is never      \
     stored. pool reads the convolution's output (N, K, Ho, Wo). */                            \
  void conv2d_relu_maxpool_forward(float* out, int32_t* argmax, const float* inp,               \
                                   const float* weight, const float* bias,                      \
                                   const Conv2dShape& s, const Pool2dShape& pool);              \
  void conv2d_relu_maxpool_backward(float* dinp, float* dweight, float* dbias,                  \
                                    const float* dout, const float* out, const int32_t* argmax, \
                                    const float* inp, const float* weight,                      \
                                    const Conv2dShape& s, const Pool2dShape& pool);             \
  /* out (N,OC), inp (N,IC), weight (OC,IC) as PyTorch, bias (OC) or nullptr */                 \
  void linear_forward(float* out, const float* inp, const float* weight, const float* bias,     \
                      int batch, int in_features, int out_features);                            \
  void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,            \
                       const float* inp, const float* weight, int batch, int in_features,       \
                       int out_features);                                                       \
  /* out (N,C,Ho,Wo), argmax (N,C,Ho,Wo): flat index into the (H,W) plane of the max */         \
  void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, const Pool2dShape& s);  \
  void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax,                \
                          const Pool2dShape& s);                                                \
  void relu_forward(float* out, const float* inp, size_t n);                                    \
  void relu_backward(float* dinp, const float* dout, const float* out, size_t n);               \
  void tanh_forward(float* out, const float* inp, size_t n);                                    \
  void tanh_backward(float* dinp, const float* dout, const float* out, size_t n);               \
  /* mask holds 0 or 1/(1-p); out = inp * mask. The mask is drawn by dropout_mask. */           \
  void dropout_forward(float* out, const float* inp, const float* mask, size_t n);              \
  void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n);           \
  /* Softmax cross-entropy, mean over the batch (PyTorch's CrossEntropyLoss). logits (N,C),     \
     labels (N). Writes dlogits (N,C) = (softmax - onehot) / normalizer (overwrites, it starts  \
     the backward pass) when dlogits is not nullptr; normalizer 0 means N. A replica holding a  \
     shard of a batch passes the whole batch's size, so the shards' gradients sum to the        \
     batch's. Returns the summed loss over the rows in *loss_sum and the number of correct      \
     argmax predictions in *correct. */                                                         \
  void softmax_cross_entropy(float* dlogits, double* loss_sum, int* correct,                    \
                             const float* logits, const uint8_t* labels, int batch,             \
                             int classes, int normalizer = 0);

namespace ref {
GPULAB_CPU_OPS
}  // namespace ref

namespace cpu {
GPULAB_CPU_OPS
// Threads used by the fast kernels (OpenMP and the BLAS); 0 means all cores. This is the
// process's default; a ThreadCountScope overrides it on one thread, so that two backends in one
// process (a race, data-parallel replicas) each run with their own count.
void set_num_threads(int threads);
// The count the kernels use on the calling thread: its scope's, else the process default.
int num_threads();
// 0 (all cores) as the core count; any other count as it is.
int resolve_num_threads(int threads);
// Makes the kernels called from this thread use `threads` (0: all cores) until it is destroyed.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_;
};
// x (n) = 0 on those threads: gradient buffers before a backward pass, tens of MB a step.
void zero(float* x, size_t n);
// The BLAS behind the fast kernels, for run records, e.g. "OpenBLAS 0.3.21 NO_LAPACKE
// DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64" (the core name is the SIMD kernel set).
const char* blas_info();
// The SIMD kernel set OpenBLAS runs, e.g. "Cooperlake (AVX-512)", or "Haswell (AVX2), from
// OPENBLAS_CORETYPE=Haswell" where the environment chose it; "" for another BLAS.
const char* blas_kernels();
}  // namespace cpu

#undef GPULAB_CPU_OPS

// Dropout mask from a counter-based generator: element i of call `counter` with `seed` is kept
// with probability 1-p. The same (seed, counter, i) gives the same decision on every backend.
// mask[j] is element first + j: a replica holding images from position b of the global batch
// passes first = b * features, and draws the very bits one replica holding the batch draws.
void dropout_mask(float* mask, size_t n, float p, uint64_t seed, uint64_t counter,
                  uint64_t first = 0);

}  // namespace gpulab::kernels
