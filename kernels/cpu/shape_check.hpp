// Argument checks shared by the reference and fast CPU kernels: a bad shape throws
// std::invalid_argument naming the op, before any loop runs.
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/cpu/ops.hpp"

namespace gpulab::kernels::detail {

// "N=2 C=3 H=7 W=9 K=4 R=3 S=3 stride=1 padding=1", for error messages and test names.
inline std::string describe(const Conv2dShape& s) {
  return "N=" + std::to_string(s.batch) + " C=" + std::to_string(s.in_channels) +
         " H=" + std::to_string(s.in_height) + " W=" + std::to_string(s.in_width) +
         " K=" + std::to_string(s.out_channels) + " R=" + std::to_string(s.kernel_h) +
         " S=" + std::to_string(s.kernel_w) + " stride=" + std::to_string(s.stride) +
         " padding=" + std::to_string(s.padding);
}

inline void check_conv2d_shape(const Conv2dShape& s, const char* op) {
  if (s.batch < 0 || s.in_channels <= 0 || s.in_height <= 0 || s.in_width <= 0 ||
      s.out_channels <= 0 || s.kernel_h <= 0 || s.kernel_w <= 0 || s.stride <= 0 || s.padding < 0 ||
      s.out_height() <= 0 || s.out_width() <= 0)
    throw std::invalid_argument(std::string(op) + ": invalid shape " + describe(s));
}

inline void check_pool2d_shape(const Pool2dShape& s, const char* op) {
  if (s.batch < 0 || s.channels <= 0 || s.kernel <= 0 || s.stride <= 0 || s.in_height < s.kernel ||
      s.in_width < s.kernel)
    throw std::invalid_argument(
        std::string(op) + ": invalid shape N=" + std::to_string(s.batch) +
        " C=" + std::to_string(s.channels) + " H=" + std::to_string(s.in_height) +
        " W=" + std::to_string(s.in_width) + " kernel=" + std::to_string(s.kernel) +
        " stride=" + std::to_string(s.stride));
}

// A pooling that reads a convolution's output, as the fused conv2d_relu_maxpool ops need.
inline void check_conv2d_pool_shapes(const Conv2dShape& conv, const Pool2dShape& pool,
                                     const char* op) {
  check_conv2d_shape(conv, op);
  check_pool2d_shape(pool, op);
  if (pool.batch != conv.batch || pool.channels != conv.out_channels ||
      pool.in_height != conv.out_height() || pool.in_width != conv.out_width())
    throw std::invalid_argument(
        std::string(op) + ": the pooling's input N=" + std::to_string(pool.batch) +
        " C=" + std::to_string(pool.channels) + " H=" + std::to_string(pool.in_height) +
        " W=" + std::to_string(pool.in_width) + " is not the convolution's output");
}

}  // namespace gpulab::kernels::detail
