// Reference fully connected layer, y = x W^T + b with W stored (out, in) as PyTorch's Linear.
#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::ref {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int batch,
                    int in_features, int out_features) {
  // out (N,OC), inp (N,IC), weight (OC,IC), bias (OC) or nullptr
  for (int n = 0; n < batch; ++n)
    for (int o = 0; o < out_features; ++o) {
      double sum = bias != nullptr ? bias[o] : 0.0;
      for (int i = 0; i < in_features; ++i)
        sum += double(inp[n * in_features + i]) * weight[o * in_features + i];
      out[n * out_features + o] = float(sum);
    }
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int batch, int in_features, int out_features) {
  // dinp (N,IC) or nullptr, dweight (OC,IC) or nullptr, dbias (OC) or nullptr,
  // dout (N,OC), inp (N,IC), weight (OC,IC)
  if (dinp != nullptr)
    for (int n = 0; n < batch; ++n)
      for (int i = 0; i < in_features; ++i) {
        double sum = 0;
        for (int o = 0; o < out_features; ++o)
          sum += double(dout[n * out_features + o]) * weight[o * in_features + i];
        dinp[n * in_features + i] += float(sum);
      }
  if (dweight != nullptr)
    for (int o = 0; o < out_features; ++o)
      for (int i = 0; i < in_features; ++i) {
        double sum = 0;
        for (int n = 0; n < batch; ++n)
          sum += double(dout[n * out_features + o]) * inp[n * in_features + i];
        dweight[o * in_features + i] += float(sum);
      }
  if (dbias != nullptr)
    for (int o = 0; o < out_features; ++o) {
      double sum = 0;
      for (int n = 0; n < batch; ++n) sum += dout[n * out_features + o];
      dbias[o] += float(sum);
    }
}

}  // namespace gpulab::kernels::ref
