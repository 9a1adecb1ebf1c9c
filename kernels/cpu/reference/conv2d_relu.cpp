// Reference convolution followed by ReLU (and max pooling): the reference ops one after the
// other, the oracle for the fused fast versions.
#include <vector>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/shape_check.hpp"

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

void conv2d_relu_maxpool_forward(float* out, int32_t* argmax, const float* inp, const float* weight,
                                 const float* bias, const Conv2dShape& s, const Pool2dShape& pool) {
  // out (N,K,Hp,Wp), argmax (N,K,Hp,Wp), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  kernels::detail::check_conv2d_pool_shapes(s, pool, "conv2d_relu_maxpool_forward");
  std::vector<float> conv(size_t(s.batch) * s.out_channels * s.out_height() * s.out_width());
  conv2d_relu_forward(conv.data(), inp, weight, bias, s);
  maxpool2d_forward(out, argmax, conv.data(), pool);
}

void conv2d_relu_maxpool_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                                  const float* out, const int32_t* argmax, const float* inp,
                                  const float* weight, const Conv2dShape& s,
                                  const Pool2dShape& pool) {
  // dout (N,K,Hp,Wp) and out (N,K,Hp,Wp): the pooling's output gradient and output
  kernels::detail::check_conv2d_pool_shapes(s, pool, "conv2d_relu_maxpool_backward");
  // The ReLU's derivative where the pooling took its maximum is (pooled output > 0), the pooled
  // value being the ReLU's output there; elsewhere the pooling passes no gradient.
  const size_t pooled = size_t(pool.batch) * pool.channels * pool.out_height() * pool.out_width();
  std::vector<float> dpooled(pooled);
  relu_backward(dpooled.data(), dout, out, pooled);
  std::vector<float> dconv(size_t(s.batch) * s.out_channels * s.out_height() * s.out_width());
  maxpool2d_backward(dconv.data(), dpooled.data(), argmax, pool);
  conv2d_backward(dinp, dweight, dbias, dconv.data(), inp, weight, s);
}

}  // namespace gpulab::kernels::ref
