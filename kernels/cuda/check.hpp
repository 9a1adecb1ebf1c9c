// One family of checks for every CUDA runtime, cuBLAS and NCCL call: each records the call, the
// file and the line, and throws CudaError, whose kind tells the engine how to end the run.
// Plain C++ (no device code), so host-only .cpp files of the engine include it too.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/device_error.hpp"

namespace gpulab::kernels::cuda {

using kernels::ErrorKind;

class CudaError : public DeviceError {
 public:
  CudaError(ErrorKind kind, int code, std::string expression, const char* file, int line,
            const std::string& message);
  int code() const { return code_; }  // the cudaError_t, cublasStatus_t or ncclResult_t
  const std::string& expression() const { return expression_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  int code_;
  std::string expression_, file_;
  int line_;
};

// What a cudaError_t means for the run; see ErrorKind.
ErrorKind error_kind(cudaError_t error);

// Whether the current device's context takes work: cudaSuccess, or the error a stream of its own
// returns (a sticky fault is returned by every later call until the device is reset; see
// ErrorKind::DeviceFault). Waits for nothing else on the device, so another run on the same GPU
// is neither waited for nor disturbed. Clears the error state it leaves, unless it is sticky.
cudaError_t context_error();

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* expression, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expression,
                                     const char* file, int line);
[[noreturn]] void throw_library_error(int code, const char* library, const char* description,
                                      const char* expression, const char* file, int line);

// NCCL's result type and strings come from nccl.h at the call site, so this header needs no NCCL.
template <class Result, class Describe>
void check_nccl(Result result, Describe describe, const char* expression, const char* file,
                int line) {
  if (static_cast<int>(result) != 0)
    throw_library_error(static_cast<int>(result), "NCCL", describe(result), expression, file, line);
}

}  // namespace gpulab::kernels::cuda

#define GPULAB_CUDA_CHECK(expr)                                                            \
  do {                                                                                     \
    const cudaError_t gpulab_error_ = (expr);                                              \
    if (gpulab_error_ != cudaSuccess)                                                      \
      ::gpulab::kernels::cuda::throw_cuda_error(gpulab_error_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GPULAB_CUBLAS_CHECK(expr)                                                             \
  do {                                                                                        \
    const cublasStatus_t gpulab_status_ = (expr);                                             \
    if (gpulab_status_ != CUBLAS_STATUS_SUCCESS)                                              \
      ::gpulab::kernels::cuda::throw_cublas_error(gpulab_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GPULAB_NCCL_CHECK(expr) \
  ::gpulab::kernels::cuda::check_nccl((expr), ncclGetErrorString, #expr, __FILE__, __LINE__)

// After a kernel launch: a bad configuration shows at once, a fault only at the next sync.
#define GPULAB_CUDA_CHECK_LAUNCH(kernel_name) \
  ::gpulab::kernels::cuda::check_launch(kernel_name, __FILE__, __LINE__)

namespace gpulab::kernels::cuda {
inline void check_launch(const char* kernel_name, const char* file, int line) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    throw_cuda_error(error, (std::string("launch of ") + kernel_name).c_str(), file, line);
}
}  // namespace gpulab::kernels::cuda
