// Re-executing a program with OPENBLAS_CORETYPE set when OpenBLAS left the CPU's AVX-512 unused:
// on a 2-core Zen 5 its AVX-512 (Cooperlake) GEMM kernels made the pytorch-example training step
// 1.4x faster than its AVX2 (Haswell) ones: 22.8 against 32.6 ms.
#include "app/blas_select.hpp"

#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <initializer_list>

// Weak, as in kernels/cpu/blas.cpp: null where the BLAS is not OpenBLAS.
extern "C" char* openblas_get_corename(void) __attribute__((weak));

namespace gpulab {
namespace {

constexpr const char* kGuard = "GPULAB_BLAS_REEXEC";

bool is_avx512_core(const char* name) {
  for (const char* core : {"skylakex", "cooperlake", "sapphirerapids"})
    if (strcasecmp(name, core) == 0) return true;
  return false;
}

}  // namespace

const char* blas_core_to_select(const BlasSelectInputs& in) {
  if (in.auto_env != nullptr && in.auto_env[0] == '0') return nullptr;
  if (in.guard_env != nullptr) return nullptr;
  // OpenBLAS ignores an empty OPENBLAS_CORETYPE, so only a non-empty one is a choice to keep.
  if (in.coretype_env != nullptr && in.coretype_env[0] != '\0') return nullptr;
  if (in.corename == nullptr || !in.avx512 || is_avx512_core(in.corename)) return nullptr;
  return in.avx512_bf16 ? "Cooperlake" : "SkylakeX";
}

void select_blas_kernels(int argc, char** argv) {
  BlasSelectInputs in;
  in.auto_env = std::getenv("GPULAB_BLAS_AUTO");
  in.guard_env = std::getenv(kGuard);
  in.coretype_env = std::getenv("OPENBLAS_CORETYPE");
  in.corename = openblas_get_corename != nullptr ? openblas_get_corename() : nullptr;
  __builtin_cpu_init();
  in.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  in.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  // The guard has done its job once this process runs; programs it starts may decide afresh
  // (they inherit OPENBLAS_CORETYPE, so they keep the kernels chosen here).
  if (in.guard_env != nullptr) unsetenv(kGuard);
  const char* core = blas_core_to_select(in);
  if (core == nullptr || argc < 1 || argv == nullptr || argv[argc] != nullptr) return;
  if (setenv("OPENBLAS_CORETYPE", core, 1) != 0 || setenv(kGuard, "1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the exec failed (no /proc, say). Carry on with the kernels already loaded.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kGuard);
}

}  // namespace gpulab
