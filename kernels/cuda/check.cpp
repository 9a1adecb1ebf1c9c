// The typed CUDA errors and the throw helpers behind the GPULAB_*_CHECK macros.
#include "kernels/cuda/check.hpp"

#include <filesystem>

namespace gpulab::kernels::cuda {
namespace {

std::string where(const char* file, int line) {
  return std::filesystem::path(file).filename().string() + ":" + std::to_string(line);
}

}  // namespace

CudaError::CudaError(ErrorKind kind, int code, std::string expression, const char* file, int line,
                     const std::string& message)
    : DeviceError(kind, message),
      code_(code),
      expression_(std::move(expression)),
      file_(file),
      line_(line) {}

ErrorKind error_kind(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation:
      return ErrorKind::OutOfMemory;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
      return ErrorKind::NoDevice;
    // Errors after which the CUDA context is corrupt ("sticky"): every later call fails until
    // the device is reset.
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return ErrorKind::DeviceFault;
    default:
      return ErrorKind::Other;
  }
}

cudaError_t context_error() {
  cudaGetLastError();
  cudaStream_t stream = nullptr;
  cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (error == cudaSuccess) {
    error = cudaStreamSynchronize(stream);  // an empty stream: only the context's state
    if (const cudaError_t destroyed = cudaStreamDestroy(stream); error == cudaSuccess)
      error = destroyed;
  }
  size_t free = 0, total = 0;
  if (error == cudaSuccess) error = cudaMemGetInfo(&free, &total);
  cudaGetLastError();
  return error;
}

void throw_cuda_error(cudaError_t error, const char* expression, const char* file, int line) {
  const std::string message = std::string(expression) + " failed: " + cudaGetErrorName(error) +
                              ": " + cudaGetErrorString(error) + " (" + where(file, line) + ")";
  throw CudaError(error_kind(error), static_cast<int>(error), expression, file, line, message);
}

void throw_cublas_error(cublasStatus_t status, const char* expression, const char* file, int line) {
  const ErrorKind kind = status == CUBLAS_STATUS_ALLOC_FAILED       ? ErrorKind::OutOfMemory
                         : status == CUBLAS_STATUS_NOT_INITIALIZED  ? ErrorKind::NoDevice
                         : status == CUBLAS_STATUS_EXECUTION_FAILED ? ErrorKind::DeviceFault
                                                                    : ErrorKind::Other;
  const std::string message = std::string(expression) + " failed: " + cublasGetStatusName(status) +
                              ": " + cublasGetStatusString(status) + " (" + where(file, line) + ")";
  throw CudaError(kind, static_cast<int>(status), expression, file, line, message);
}

void throw_library_error(int code, const char* library, const char* description,
                         const char* expression, const char* file, int line) {
  const std::string message = std::string(expression) + " failed: " + library + " error " +
                              std::to_string(code) + ": " + description + " (" + where(file, line) +
                              ")";
  throw CudaError(ErrorKind::Other, code, expression, file, line, message);
}

}  // namespace gpulab::kernels::cuda
