// Reference dropout: multiply by a mask of 0 and 1/(1-p) drawn beforehand by dropout_mask.
#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::ref {

void dropout_forward(float* out, const float* inp, const float* mask, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] * mask[i];
}

void dropout_backward(float* dinp, const float* dout, const float* mask, size_t n) {
  for (size_t i = 0; i < n; ++i) dinp[i] += dout[i] * mask[i];
}

}  // namespace gpulab::kernels::ref
