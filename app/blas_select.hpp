// Giving every gpulab program OpenBLAS's AVX-512 kernels where the CPU has AVX-512 but OpenBLAS
// picked weaker ones (an OpenBLAS older than the CPU). Shared by the app and bench entry points.
#pragma once

namespace gpulab {

// Call first thing in main(), before any thread starts. When OPENBLAS_CORETYPE is unset, the CPU
// has AVX-512 F, DQ, BW and VL, and the running OpenBLAS chose a kernel set without AVX-512, this
// sets OPENBLAS_CORETYPE (Cooperlake where the CPU has AVX512-BF16, SkylakeX otherwise) and
// re-executes the program from /proc/self/exe with the same arguments: OpenBLAS reads the
// variable only while it loads, before main(). Returns, changing nothing, in every other case:
// GPULAB_BLAS_AUTO=0 in the environment, an OPENBLAS_CORETYPE already chosen, the program
// already re-executed once (GPULAB_BLAS_REEXEC, which it then removes), a BLAS other than
// OpenBLAS, or a failed exec.
void select_blas_kernels(int argc, char** argv);

// What select_blas_kernels decides from, so that tests can try every case on any machine.
struct BlasSelectInputs {
  const char* auto_env = nullptr;      // GPULAB_BLAS_AUTO
  const char* guard_env = nullptr;     // GPULAB_BLAS_REEXEC
  const char* coretype_env = nullptr;  // OPENBLAS_CORETYPE
  const char* corename = nullptr;      // openblas_get_corename(), nullptr for another BLAS
  bool avx512 = false;                 // F, DQ, BW and VL: what OpenBLAS's SkylakeX kernels use
  bool avx512_bf16 = false;
};

// The OPENBLAS_CORETYPE to re-execute with, or nullptr to keep the kernels in use.
const char* blas_core_to_select(const BlasSelectInputs& in);

}  // namespace gpulab
