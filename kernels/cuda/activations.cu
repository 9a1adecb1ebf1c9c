// ReLU and tanh: grid-stride elementwise loops, the formulas of the CPU reference.
#include "kernels/cuda/activations.cuh"
#include "kernels/cuda/launch.cuh"

namespace gpulab::kernels::cuda {
namespace {

__global__ void relu_forward_kernel(float* out, const float* inp, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

__global__ void relu_backward_kernel(float* dinp, const float* dout, const float* out, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

__global__ void tanh_forward_kernel(float* out, const float* inp, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) out[i] = tanhf(inp[i]);
}

__global__ void tanh_backward_kernel(float* dinp, const float* dout, const float* out, size_t n) {
  GPULAB_GRID_STRIDE_LOOP(i, n) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

}  // namespace

#define GPULAB_ELEMENTWISE_LAUNCH(kernel, ...)                                  \
  do {                                                                          \
    if (n == 0) return;                                                         \
    kernel<<<detail::grid_for(n), detail::kBlock, 0, stream>>>(__VA_ARGS__, n); \
    GPULAB_CUDA_CHECK_LAUNCH(#kernel);                                          \
  } while (0)

void relu_forward(float* out, const float* inp, size_t n, cudaStream_t stream) {
  GPULAB_ELEMENTWISE_LAUNCH(relu_forward_kernel, out, inp);
}

void relu_backward(float* dinp, const float* dout, const float* out, size_t n,
                   cudaStream_t stream) {
  GPULAB_ELEMENTWISE_LAUNCH(relu_backward_kernel, dinp, dout, out);
}

void tanh_forward(float* out, const float* inp, size_t n, cudaStream_t stream) {
  GPULAB_ELEMENTWISE_LAUNCH(tanh_forward_kernel, out, inp);
}

void tanh_backward(float* dinp, const float* dout, const float* out, size_t n,
                   cudaStream_t stream) {
  GPULAB_ELEMENTWISE_LAUNCH(tanh_backward_kernel, dinp, dout, out);
}

#undef GPULAB_ELEMENTWISE_LAUNCH

}  // namespace gpulab::kernels::cuda
