/* A stand-in for libnvidia-ml.so.1 with fixed readings, so that the NVML loader and the GPU
   telemetry are tested on machines without a driver. FAKE_NVML_INIT_ERROR=<code> makes
   nvmlInit_v2 fail with that code. Built with FAKE_NVML_MINIMAL, it has only the functions gpulab
   requires (start, stop, a device by index, its memory), like a partial library. */
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned int gpu, memory;
} Utilization;
typedef struct {
  unsigned long long total, free, used;
} Memory;

static int the_device; /* its address is the one device handle */

int nvmlInit_v2(void) {
  const char* error = getenv("FAKE_NVML_INIT_ERROR");
  return error ? atoi(error) : 0;
}
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &the_device;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* device, Memory* m) {
  if (device != &the_device) return 2;
  m->total = 80ull << 30;
  m->used = 3ull << 30;
  m->free = m->total - m->used;
  return 0;
}

#ifndef FAKE_NVML_MINIMAL
const char* nvmlErrorString(int result) {
  return result == 9 ? "Driver Not Loaded" : "Unknown Error";
}
int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  strncpy(version, "999.12.34", length);
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (strcmp(bus_id, "0000:65:00.0") != 0) return 6; /* NVML_ERROR_NOT_FOUND */
  *device = &the_device;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* device, Utilization* u) {
  if (device != &the_device) return 2;
  u->gpu = 87;
  u->memory = 41;
  return 0;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  if (device != &the_device) return 2;
  *milliwatts = 312500;
  return 0;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (device != &the_device || sensor != 0) return 2;
  *celsius = 61;
  return 0;
}
int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* mhz) {
  if (device != &the_device) return 2;
  if (type != 1) return 3; /* only the SM clock: NVML_ERROR_NOT_SUPPORTED otherwise */
  *mhz = 1980;
  return 0;
}
#endif
