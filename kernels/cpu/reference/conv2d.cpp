// Reference 2-D convolution (cross-correlation, as PyTorch's Conv2d): direct loops with double
// accumulators. The oracle for the fast and CUDA versions; clarity over speed.
#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/shape_check.hpp"

namespace gpulab::kernels::ref {

void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const Conv2dShape& s) {
  // out (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S), bias (K) or nullptr
  kernels::detail::check_conv2d_shape(s, "conv2d_forward");
  const int Ho = s.out_height(), Wo = s.out_width();
  for (int n = 0; n < s.batch; ++n)
    for (int k = 0; k < s.out_channels; ++k)
      for (int ho = 0; ho < Ho; ++ho)
        for (int wo = 0; wo < Wo; ++wo) {
          double sum = bias != nullptr ? bias[k] : 0.0;
          for (int c = 0; c < s.in_channels; ++c)
            for (int r = 0; r < s.kernel_h; ++r)
              for (int q = 0; q < s.kernel_w; ++q) {
                const int hi = ho * s.stride - s.padding + r;
                const int wi = wo * s.stride - s.padding + q;
                if (hi < 0 || hi >= s.in_height || wi < 0 || wi >= s.in_width) continue;
                sum += double(inp[((n * s.in_channels + c) * s.in_height + hi) * s.in_width + wi]) *
                       weight[((k * s.in_channels + c) * s.kernel_h + r) * s.kernel_w + q];
              }
          out[((n * s.out_channels + k) * Ho + ho) * Wo + wo] = float(sum);
        }
}

void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s) {
  // dinp (N,C,H,W) or nullptr, dweight (K,C,R,S) or nullptr, dbias (K) or nullptr,
  // dout (N,K,Ho,Wo), inp (N,C,H,W), weight (K,C,R,S)
  kernels::detail::check_conv2d_shape(s, "conv2d_backward");
  const int Ho = s.out_height(), Wo = s.out_width();
  auto dout_at = [&](int n, int k, int ho, int wo) {
    return double(dout[((n * s.out_channels + k) * Ho + ho) * Wo + wo]);
  };
  if (dbias != nullptr)
    for (int k = 0; k < s.out_channels; ++k) {
      double sum = 0;
      for (int n = 0; n < s.batch; ++n)
        for (int ho = 0; ho < Ho; ++ho)
          for (int wo = 0; wo < Wo; ++wo) sum += dout_at(n, k, ho, wo);
      dbias[k] += float(sum);
    }
  if (dweight != nullptr)
    for (int k = 0; k < s.out_channels; ++k)
      for (int c = 0; c < s.in_channels; ++c)
        for (int r = 0; r < s.kernel_h; ++r)
          for (int q = 0; q < s.kernel_w; ++q) {
            double sum = 0;
            for (int n = 0; n < s.batch; ++n)
              for (int ho = 0; ho < Ho; ++ho)
                for (int wo = 0; wo < Wo; ++wo) {
                  const int hi = ho * s.stride - s.padding + r;
                  const int wi = wo * s.stride - s.padding + q;
                  if (hi < 0 || hi >= s.in_height || wi < 0 || wi >= s.in_width) continue;
                  sum += dout_at(n, k, ho, wo) *
                         inp[((n * s.in_channels + c) * s.in_height + hi) * s.in_width + wi];
                }
            dweight[((k * s.in_channels + c) * s.kernel_h + r) * s.kernel_w + q] += float(sum);
          }
  if (dinp != nullptr)
    // Gather form: input pixel (hi, wi) met output (ho, wo) through tap (r, q) when
    // hi = ho*stride - padding + r, i.e. when (hi + padding - r) is a multiple of the stride.
    for (int n = 0; n < s.batch; ++n)
      for (int c = 0; c < s.in_channels; ++c)
        for (int hi = 0; hi < s.in_height; ++hi)
          for (int wi = 0; wi < s.in_width; ++wi) {
            double sum = 0;
            for (int k = 0; k < s.out_channels; ++k)
              for (int r = 0; r < s.kernel_h; ++r)
                for (int q = 0; q < s.kernel_w; ++q) {
                  const int th = hi + s.padding - r, tw = wi + s.padding - q;
                  if (th < 0 || tw < 0 || th % s.stride != 0 || tw % s.stride != 0) continue;
                  const int ho = th / s.stride, wo = tw / s.stride;
                  if (ho >= Ho || wo >= Wo) continue;
                  sum += dout_at(n, k, ho, wo) *
                         weight[((k * s.in_channels + c) * s.kernel_h + r) * s.kernel_w + q];
                }
            dinp[((n * s.in_channels + c) * s.in_height + hi) * s.in_width + wi] += float(sum);
          }
}

}  // namespace gpulab::kernels::ref
