// Every convolution of every preset, at batch 1, as the kernel suites test them; test_model holds
// the list to the presets themselves, so a preset that changes its convolutions changes this too.
#pragma once

#include <vector>

#include "kernels/cpu/ops.hpp"

namespace gpulab::test {

struct PresetConv {
  const char* what;  // "vgg-small conv2"
  kernels::Conv2dShape shape;
  bool relu_after;  // a ReLU follows it, so the implicit path fuses one
};

// batch, C, H, W, K, R, S, stride, padding
inline const std::vector<PresetConv> kPresetConvs = {
    {"lenet5 conv1", {1, 1, 28, 28, 6, 5, 5, 1, 2}, false},
    {"lenet5 conv2", {1, 6, 14, 14, 16, 5, 5, 1, 0}, false},
    {"pytorch-example conv1", {1, 1, 28, 28, 32, 3, 3, 1, 0}, true},
    {"pytorch-example conv2", {1, 32, 26, 26, 64, 3, 3, 1, 0}, true},
    {"tf-tutorial conv1", {1, 1, 28, 28, 32, 5, 5, 1, 2}, true},
    {"tf-tutorial conv2", {1, 32, 14, 14, 64, 5, 5, 1, 2}, true},
    {"vgg-small conv1", {1, 1, 28, 28, 32, 3, 3, 1, 1}, true},
    {"vgg-small conv2", {1, 32, 28, 28, 32, 3, 3, 1, 1}, true},
    {"vgg-small conv3", {1, 32, 14, 14, 64, 3, 3, 1, 1}, true},
    {"vgg-small conv4", {1, 64, 14, 14, 64, 3, 3, 1, 1}, true},
    {"vgg-small conv5", {1, 64, 7, 7, 128, 3, 3, 1, 1}, true},
    {"fast-mnist conv1", {1, 1, 28, 28, 32, 3, 3, 1, 0}, true},
    {"fast-mnist conv2", {1, 32, 13, 13, 64, 3, 3, 1, 0}, true},
};

}  // namespace gpulab::test
