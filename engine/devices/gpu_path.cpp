// The path from this machine to GPU training, said in lines: versions, what is missing, what to
// install on Debian 12. Pure functions of what was found, so that each case is tested anywhere.
#include "engine/devices/gpu_path.hpp"

#include <algorithm>

#include "gpulab/build_config.hpp"
#include "gpulab/cuda_build.hpp"

namespace gpulab {
namespace {

constexpr int kOldestCuda = 12000;  // cudaGraphInstantiate(exec, graph, flags) is CUDA 12's

// The toolkit to install for a driver: its CUDA release from NVIDIA's repository for Debian 12,
// which begins at 12.3; a 12.3 toolkit runs on a 12.0-12.2 driver (minor version compatibility,
// for code built for the GPU present, as a configure on that machine does).
std::string toolkit_package(int driver_cuda) {
  const int major = driver_cuda / 1000;
  const int minor = major == 12 ? std::max(driver_cuda % 1000 / 10, 3) : driver_cuda % 1000 / 10;
  return "cuda-toolkit-" + std::to_string(major) + "-" + std::to_string(minor);
}

// The oldest Linux driver of a CUDA major release (NVIDIA's compatibility table).
std::string oldest_driver(int cuda) {
  if (cuda / 1000 == 12) return "525";
  if (cuda / 1000 == 13) return "580";
  return "";
}

// What to install, two lines: the toolkit that fits the driver (or the driver first).
std::vector<std::string> install_lines(int driver_cuda) {
  const std::string repo =
      "from NVIDIA's CUDA repository for Debian 12 (install its cuda-keyring package, then ";
  if (driver_cuda > 0 && driver_cuda < kOldestCuda)
    return {"missing for GPU training: a driver for CUDA 12 or newer (this one supports CUDA " +
                cuda_version_text(driver_cuda) +
                ") and the CUDA toolkit 12 or newer (nvcc and cuBLAS)",
            "install both " + repo + "apt-get install cuda-drivers cuda-toolkit)"};
  const std::string fits =
      driver_cuda > 0 ? "of CUDA " + std::to_string(driver_cuda / 1000) +
                            ", the driver's major release (a toolkit runs on any driver of its "
                            "major release)"
                      : "of CUDA 12 or newer, no newer a major release than nvidia-smi's "
                        "\"CUDA Version\"";
  const std::string package = driver_cuda > 0 ? toolkit_package(driver_cuda)
                                              : "cuda-toolkit-12-8 (cuda-toolkit-13-0 for a "
                                                "CUDA 13 driver)";
  return {"missing for GPU training: the CUDA toolkit (nvcc and cuBLAS) " + fits +
              "; Debian 12's own nvidia-cuda-toolkit is CUDA 11.8, too old",
          "install it " + repo + "apt-get install " + package + ")"};
}

}  // namespace

std::string cuda_version_text(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string no_cuda_backend_reason() {
  return std::string("this build has no CUDA backend: ") + GPULAB_NO_CUDA_REASON;
}

GpuPathFacts gpu_path_facts(bool driver_found, int driver_cuda) {
  GpuPathFacts facts;
  facts.cuda_built = GPULAB_CUDA_ENABLED;
  facts.no_cuda_why = GPULAB_NO_CUDA_REASON;
  facts.toolkit_version = GPULAB_CUDA_TOOLKIT_VERSION;
  facts.driver_found = driver_found;
  facts.driver_cuda = driver_found ? driver_cuda : 0;
  return facts;
}

std::string cuda_versions_line(const GpuPathFacts& facts) {
  std::string line = "cuda: ";
  if (facts.cuda_built) {
    const std::string& nvcc = facts.toolkit_version;
    line += "built with CUDA " + nvcc.substr(0, nvcc.find('.', nvcc.find('.') + 1)) + " (nvcc " +
            nvcc + ")";
  } else {
    line += "not built in (" + facts.no_cuda_why + ")";
  }
  line += "; NVIDIA driver: ";
  if (!facts.driver_found) return line + "not found";
  if (facts.driver_cuda <= 0) return line + "found, its CUDA version unknown";
  return line + "supports CUDA " + cuda_version_text(facts.driver_cuda);
}

std::vector<std::string> no_cuda_build_lines(const GpuPathFacts& facts) {
  if (!facts.driver_found) return {"no NVIDIA driver found (libcuda.so.1 is not installed)"};
  const std::string driver =
      facts.driver_cuda > 0 ? " (CUDA " + cuda_version_text(facts.driver_cuda) + ")" : "";
  std::vector<std::string> lines = {
      "the NVIDIA driver" + driver +
      " is installed, but this build has no CUDA backend: " + facts.no_cuda_why};
  for (std::string& line : install_lines(facts.driver_cuda)) lines.push_back(std::move(line));
  const bool on_purpose = facts.no_cuda_why.find("GPULAB_CUDA=OFF") != std::string::npos;
  lines.push_back(on_purpose
                      ? "then build gpulab from its source with it (scripts/setup in a clone); "
                        "this build was made without CUDA on purpose"
                      : "then run scripts/setup again in gpulab's source folder: it configures "
                        "the build anew and finds the toolkit");
  lines.push_back(
      "meanwhile everything else works: training on the CPU, MPI ranks, labs, charts, Inside");
  return lines;
}

std::string driver_too_old_reason(const std::string& driver_version, int driver_cuda,
                                  int runtime_cuda) {
  const std::string driver = driver_version.empty() ? "" : " " + driver_version;
  const std::string runtime = cuda_version_text(runtime_cuda);
  const std::string supports =
      driver_cuda > 0 ? " (it supports CUDA up to " + cuda_version_text(driver_cuda) + ")" : "";
  const std::string oldest = oldest_driver(runtime_cuda);
  std::string reason = "the NVIDIA driver" + driver + " is too old for CUDA " + runtime +
                       ", which gpulab was built with" + supports + ": update the driver (" +
                       (oldest.empty() ? "one for CUDA " + runtime : oldest + " or newer") +
                       "; NVIDIA's CUDA repository for Debian 12: apt-get install cuda-drivers)";
  if (driver_cuda >= kOldestCuda)
    reason += ", or build gpulab with CUDA " + std::to_string(driver_cuda / 1000) + " (" +
              toolkit_package(driver_cuda) + ")";
  return reason;
}

}  // namespace gpulab
