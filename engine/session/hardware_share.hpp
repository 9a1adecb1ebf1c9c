// Which runs use the same hardware, and the order a fair race runs them in: runs that share a
// processor slow each other down, so a race that is to measure each one runs them one after
// another unless asked to run them at once.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

// Whether runs on devices `a` and `b` ("cpu", "cuda:0", "cuda:0,1", "cuda:0x2", "cuda:all") use
// the same hardware at the same time: two CPU runs share its cores; two runs with a GPU in common
// share it; a CPU run and a GPU run share the CPU, which feeds the GPU. Runs on different GPUs do
// not (each needs one host thread).
bool share_hardware(const std::string& a, const std::string& b);

// The runs of a race (their devices, in the order given) in waves: the runs of one wave start
// together and share no hardware, and each wave starts when the one before it has ended. A run
// goes in the first wave after every earlier run it shares hardware with, so the order is kept.
// With `concurrent`, one wave of every run.
std::vector<std::vector<size_t>> race_waves(const std::vector<std::string>& devices,
                                            bool concurrent);

}  // namespace gpulab
