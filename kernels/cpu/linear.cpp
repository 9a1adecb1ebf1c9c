// Fast fully connected layer: every product is one SGEMM (split over the threads by
// parallel_sgemm), with W stored (out, in) as PyTorch's Linear.
#include <cstring>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

namespace gpulab::kernels::cpu {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int batch,
                    int in_features, int out_features) {
  // out (N,OC), inp (N,IC), weight (OC,IC), bias (OC) or nullptr
  if (bias != nullptr)
    for (int n = 0; n < batch; ++n)
      std::memcpy(out + size_t(n) * out_features, bias, sizeof(float) * out_features);
  // out (N, OC) = inp (N, IC) x weight^T (IC, OC) [+ out, which holds the bias]
  detail::parallel_sgemm(false, true, batch, out_features, in_features, 1.0f, inp, in_features,
                         weight, in_features, bias != nullptr ? 1.0f : 0.0f, out, out_features);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int batch, int in_features, int out_features) {
  // dinp (N,IC) or nullptr, dweight (OC,IC) or nullptr, dbias (OC) or nullptr,
  // dout (N,OC), inp (N,IC), weight (OC,IC)
  if (dinp != nullptr)  // dinp (N, IC) += dout (N, OC) x weight (OC, IC)
    detail::parallel_sgemm(false, false, batch, in_features, out_features, 1.0f, dout, out_features,
                           weight, in_features, 1.0f, dinp, in_features);
  if (dweight != nullptr)  // dweight (OC, IC) += dout^T (OC, N) x inp (N, IC)
    detail::parallel_sgemm(true, false, out_features, in_features, batch, 1.0f, dout, out_features,
                           inp, in_features, 1.0f, dweight, in_features);
  if (dbias != nullptr)
    // Column sums of dout in batch order: O(N*OC), too small to be worth a thread.
    for (int n = 0; n < batch; ++n)
      for (int o = 0; o < out_features; ++o) dbias[o] += dout[size_t(n) * out_features + o];
}

}  // namespace gpulab::kernels::cpu
