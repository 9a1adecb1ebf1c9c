/* A stand-in for libnvidia-ml.so.1 with fixed readings, so that the NVML loader and the GPU
   telemetry are tested on machines without a driver. FAKE_NVML_INIT_ERROR=<code> makes
   nvmlInit_v2 fail with that code. It has two GPUs: index 0 at PCI bus 0000:65:00.0 and index 1
   at 0000:66:00.0, which reads half the first's utilization and power. Built with FAKE_NVML_MINIMAL, it has only the functions gpulab
   requires (start, stop, a device by index, its memory), like a partial library. */
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned int gpu, memory;
} Utilization;
typedef struct {
  unsigned long long total, free, used;
} Memory;

static int the_devices[2]; /* their addresses are the device handles */

/* The GPU a handle is, or -1. */
static int which(void* device) {
  return device == &the_devices[0] ? 0 : device == &the_devices[1] ? 1 : -1;
}

int nvmlInit_v2(void) {
  const char* error = getenv("FAKE_NVML_INIT_ERROR");
  return error ? atoi(error) : 0;
}
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index > 1) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &the_devices[index];
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* device, Memory* m) {
  if (which(device) < 0) return 2;
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
  if (strcmp(bus_id, "0000:65:00.0") == 0)
    *device = &the_devices[0];
  else if (strcmp(bus_id, "0000:66:00.0") == 0)
    *device = &the_devices[1];
  else
    return 6; /* NVML_ERROR_NOT_FOUND */
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* device, Utilization* u) {
  if (which(device) < 0) return 2;
  u->gpu = which(device) == 0 ? 87 : 43;
  u->memory = 41;
  return 0;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  if (which(device) < 0) return 2;
  *milliwatts = which(device) == 0 ? 312500 : 156250;
  return 0;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (which(device) < 0 || sensor != 0) return 2;
  *celsius = 61;
  return 0;
}
/* GPU 0 has an energy counter that grows by 125 J at each reading; GPU 1 has none. */
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  static unsigned long long readings = 0;
  if (which(device) < 0) return 2;
  if (which(device) != 0) return 3;
  *millijoules = 5000000ull + 125000ull * readings++;
  return 0;
}
int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* mhz) {
  if (which(device) < 0) return 2;
  if (type != 1) return 3; /* only the SM clock: NVML_ERROR_NOT_SUPPORTED otherwise */
  *mhz = 1980;
  return 0;
}
#endif
