// Reference elementwise activations. Backward passes take the forward output, which is all
// that ReLU and tanh need, so the input can be freed or overwritten.
#include <cmath>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::ref {

void relu_forward(float* out, const float* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float* dinp, const float* dout, const float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dout[i];  // loaded unconditionally, so that the select vectorizes
    dinp[i] += out[i] > 0.0f ? g : 0.0f;
  }
}

void tanh_forward(float* out, const float* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = std::tanh(inp[i]);
}

void tanh_backward(float* dinp, const float* dout, const float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

}  // namespace gpulab::kernels::ref
