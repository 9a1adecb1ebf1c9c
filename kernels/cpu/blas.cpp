// How the fast kernels drive the BLAS: one BLAS thread per call, since the kernels split their
// GEMMs over OpenMP threads themselves, and a description of the BLAS for run records.
#include <strings.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/cpu/ops.hpp"
#include "kernels/cpu/parallel.hpp"

// OpenBLAS's own entry points are not in every cblas.h, and a generic BLAS lacks them: weak
// declarations link everywhere and are null where the BLAS does not provide them.
extern "C" {
void openblas_set_num_threads(int threads) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
char* openblas_get_config(void) __attribute__((weak));
char* openblas_get_corename(void) __attribute__((weak));
}

namespace gpulab::kernels::cpu {

const char* blas_info() {
  // OpenBLAS picks its SIMD kernels at load time from the CPU, or from OPENBLAS_CORETYPE when
  // set; the string names the choice (e.g. Haswell = AVX2, SkylakeX/Cooperlake = AVX-512),
  // which halves or doubles the convolution time.
  static const std::string text =
      openblas_get_config != nullptr ? openblas_get_config() : "a BLAS other than OpenBLAS";
  detail::prepare_blas();
  return text.c_str();
}

const char* blas_kernels() {
  static const std::string text = [] {
    if (openblas_get_corename == nullptr) return std::string();
    std::string name = openblas_get_corename();
    // The SIMD level of the common x86-64 core types; other names stand alone.
    const std::pair<const char*, const char*> levels[] = {
        {"sapphirerapids", "AVX-512"}, {"cooperlake", "AVX-512"}, {"skylakex", "AVX-512"},
        {"haswell", "AVX2"},           {"zen", "AVX2"},           {"sandybridge", "AVX"}};
    for (const auto& [core, level] : levels)
      if (strcasecmp(name.c_str(), core) == 0) name += std::string(" (") + level + ")";
    const char* forced = std::getenv("OPENBLAS_CORETYPE");
    if (forced != nullptr && forced[0] != '\0')
      name += std::string(", from OPENBLAS_CORETYPE=") + forced;
    return name;
  }();
  return text.c_str();
}

namespace detail {

void prepare_blas() {
  // A pthread OpenBLAS fanning every call out to its own pool under our OpenMP threads
  // oversubscribes the cores: measured 168 ms per MNIST-net step against 33 ms on 2 cores.
  // Checked on every call because other code in the process may have raised it.
  if (openblas_get_num_threads != nullptr && openblas_set_num_threads != nullptr &&
      openblas_get_num_threads() != 1)
    openblas_set_num_threads(1);
}

}  // namespace detail
}  // namespace gpulab::kernels::cpu
