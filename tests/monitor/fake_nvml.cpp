// A stand-in for libnvidia-ml.so.1 with two GPUs and fixed readings, built as a shared library
// for test_process_stats.cpp: proves nvml_probe's dlopen path, its symbol names and the units it
// converts (percent, milliwatts), on machines without an NVIDIA driver. The signatures are NVML's
// documented C API; the device handle is an opaque pointer, here the device's index + 1.
#include <cstdint>

extern "C" {

struct fake_utilization {
  unsigned int gpu, memory;
};
struct fake_memory {
  unsigned long long total, free, used;
};

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** d) {
  *d = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1));
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* d, fake_utilization* u) {
  u->gpu = 40 + static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(d));  // 41, 42
  u->memory = 25;
  return 0;
}
int nvmlDeviceGetPowerUsage(void*, unsigned int* mw) {
  *mw = 123456;
  return 0;
}
int nvmlDeviceGetTemperature(void* d, int sensor, unsigned int* c) {
  if (reinterpret_cast<std::uintptr_t>(d) == 2) return 3;  // NVML_ERROR_NOT_SUPPORTED on the second
  *c = sensor == 0 ? 61 : 0;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void*, fake_memory* m) {
  m->total = 1000;
  m->used = 250;
  m->free = 750;
  return 0;
}
}
