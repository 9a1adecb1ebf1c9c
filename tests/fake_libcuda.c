/* A stand-in for the NVIDIA driver library (libcuda.so.1) with only cuDriverGetVersion, whose
   answer FAKE_CUDA_DRIVER_VERSION sets (12020 by default): a machine with a driver, for the tests
   of what gpulab says there (tests/test_devices.cpp). */
#include <stdlib.h>

int cuDriverGetVersion(int* version) {
  const char* wanted = getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = wanted ? atoi(wanted) : 12020;
  return 0;
}
