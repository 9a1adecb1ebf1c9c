// engine/devices: what stands between this machine and GPU training, in lines for the learner:
// the CUDA this build has (or why not), the driver's, and what to install on Debian 12.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

// 12020 -> "12.2", as cudaDriverGetVersion and cudaRuntimeGetVersion count; 0 -> "".
std::string cuda_version_text(int version);

// "this build has no CUDA backend: built without CUDA (GPULAB_CUDA=OFF)", or "...: nvcc was not
// found when gpulab was built": what every refusal of a GPU in a build without CUDA says.
std::string no_cuda_backend_reason();

// What was found: whether this build has the CUDA backend (and else why not), whether the driver
// library loads, and the CUDA version the driver supports (cuDriverGetVersion; 0 unknown).
struct GpuPathFacts {
  bool cuda_built = false;
  std::string no_cuda_why;      // "built without CUDA (GPULAB_CUDA=OFF)", ... where !cuda_built
  std::string toolkit_version;  // the nvcc it was built with, "13.0.88"; "" without CUDA
  bool driver_found = false;
  int driver_cuda = 0;  // 12020; 0 where unknown or no driver
};
GpuPathFacts gpu_path_facts(bool driver_found, int driver_cuda);  // with this build's facts

// "cuda: built with CUDA 13.0 (nvcc 13.0.88); NVIDIA driver: supports CUDA 12.2" (or "not found"),
// gpulab-cli devices' line on versions.
std::string cuda_versions_line(const GpuPathFacts& facts);

// For a build without CUDA: why there is no GPU (the first line, the "no GPU: " reason), then
// what to install for GPU training on Debian 12 and that everything else works meanwhile. Only the
// first line where no driver was found (no GPU to install for).
std::vector<std::string> no_cuda_build_lines(const GpuPathFacts& facts);

// The refusal where the driver is older than the CUDA runtime gpulab was built with
// (cudaErrorInsufficientDriver): both versions and what to do. driver_version is the driver's own
// ("535.104.05", "" unknown); driver_cuda and runtime_cuda count as cudaDriverGetVersion does.
std::string driver_too_old_reason(const std::string& driver_version, int driver_cuda,
                                  int runtime_cuda);

}  // namespace gpulab
