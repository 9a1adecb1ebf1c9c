// Reference convolution followed by ReLU: the two reference ops one after the other, the oracle
// for the fused fast version.
#include <vector>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::ref {

void conv2d_relu_forward(float* out, const float* inp, const float* weight, const float* bias,
                         const Conv2dShape& s) {
  // out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  conv2d_forward(out, inp, weight, bias, s);
  relu_forward(out, out, size_t(s.batch) * s.out_channels * s.out_height() * s.out_width());
}

void conv2d_relu_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                          const float* out, const float* inp, const float* weight,
                          const Conv2dShape& s) {
  // dinp (N,C,H,W) or nullptr, dweight (K,C,R,S) or nullptr, dbias (K) or nullptr,
  // dout (N,K,Ho,Wo) and out (N,K,Ho,Wo): the ReLU's output gradient and output
  std::vector<float> dconv(size_t(s.batch) * s.out_channels * s.out_height() * s.out_width());
  relu_backward(dconv.data(), dout, out, dconv.size());
  conv2d_backward(dinp, dweight, dbias, dconv.data(), inp, weight, s);
}

}  // namespace gpulab::kernels::ref
