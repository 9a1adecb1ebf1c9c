// Tests of select_blas_kernels' decision: when a gpulab program re-executes itself with
// OPENBLAS_CORETYPE set, and when it leaves the kernels as they are.
#include <gtest/gtest.h>

#include <string>

#include "app/blas_select.hpp"

namespace {

using gpulab::blas_core_to_select;
using gpulab::BlasSelectInputs;

BlasSelectInputs zen5_with_avx2_kernels() {
  BlasSelectInputs in;
  in.corename = "Haswell";
  in.avx512 = true;
  in.avx512_bf16 = true;
  return in;
}

TEST(BlasSelect, PicksAvx512KernelsOpenBlasLeftUnused) {
  BlasSelectInputs in = zen5_with_avx2_kernels();
  EXPECT_EQ(std::string(blas_core_to_select(in)), "Cooperlake");
  in.avx512_bf16 = false;
  EXPECT_EQ(std::string(blas_core_to_select(in)), "SkylakeX");
  in.coretype_env = "";  // OpenBLAS ignores an empty value, and so does the choice
  EXPECT_EQ(std::string(blas_core_to_select(in)), "SkylakeX");
  in.corename = "Zen";
  EXPECT_EQ(std::string(blas_core_to_select(in)), "SkylakeX");
}

TEST(BlasSelect, LeavesEveryOtherCaseAlone) {
  BlasSelectInputs in = zen5_with_avx2_kernels();
  in.auto_env = "0";
  EXPECT_EQ(blas_core_to_select(in), nullptr) << "GPULAB_BLAS_AUTO=0 opts out";
  in = zen5_with_avx2_kernels();
  in.guard_env = "1";
  EXPECT_EQ(blas_core_to_select(in), nullptr) << "re-executed once already";
  in = zen5_with_avx2_kernels();
  in.coretype_env = "Haswell";
  EXPECT_EQ(blas_core_to_select(in), nullptr) << "the user's own OPENBLAS_CORETYPE";
  in = zen5_with_avx2_kernels();
  in.avx512 = false;
  EXPECT_EQ(blas_core_to_select(in), nullptr) << "a CPU without AVX-512";
  in = zen5_with_avx2_kernels();
  in.corename = nullptr;
  EXPECT_EQ(blas_core_to_select(in), nullptr) << "a BLAS other than OpenBLAS";
  for (const char* core : {"SkylakeX", "cooperlake", "SapphireRapids"}) {
    in = zen5_with_avx2_kernels();
    in.corename = core;
    EXPECT_EQ(blas_core_to_select(in), nullptr) << core << " is AVX-512 already";
  }
  in = zen5_with_avx2_kernels();
  in.auto_env = "1";
  EXPECT_NE(blas_core_to_select(in), nullptr) << "GPULAB_BLAS_AUTO=1 is the default";
}

}  // namespace
