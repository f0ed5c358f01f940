#include "monitor/nvml_probe.hpp"

#include <dlfcn.h>

#include <type_traits>

namespace attnbench {
namespace {

// The NVML C API as documented (https://docs.nvidia.com/deploy/nvml-api/): nvmlReturn_t is an
// enum with NVML_SUCCESS = 0, nvmlDevice_t an opaque pointer, and these two structs.
using nvml_return = int;
constexpr nvml_return nvml_success = 0;
using nvml_device = struct nvml_device_st*;
struct nvml_utilization {  // nvmlUtilization_t: percentages over the last sample period
  unsigned int gpu;
  unsigned int memory;
};
struct nvml_memory {  // nvmlMemory_t (v1): bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr int nvml_temperature_gpu = 0;  // NVML_TEMPERATURE_GPU

}  // namespace

struct nvml_probe::api {
  nvml_return (*init)();
  nvml_return (*shutdown)();
  nvml_return (*device_count)(unsigned int*);
  nvml_return (*handle_by_index)(unsigned int, nvml_device*);
  nvml_return (*utilization)(nvml_device, nvml_utilization*);
  nvml_return (*power)(nvml_device, unsigned int*);  // milliwatts
  nvml_return (*temperature)(nvml_device, int, unsigned int*);  // degrees Celsius
  nvml_return (*memory)(nvml_device, nvml_memory*);
};

std::unique_ptr<nvml_probe> nvml_probe::open(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  auto a = std::make_unique<api>();
  const auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    return fn != nullptr;
  };
  const bool complete = sym(a->init, "nvmlInit_v2") && sym(a->shutdown, "nvmlShutdown") &&
                        sym(a->device_count, "nvmlDeviceGetCount_v2") &&
                        sym(a->handle_by_index, "nvmlDeviceGetHandleByIndex_v2") &&
                        sym(a->utilization, "nvmlDeviceGetUtilizationRates") &&
                        sym(a->power, "nvmlDeviceGetPowerUsage") && sym(a->temperature, "nvmlDeviceGetTemperature") &&
                        sym(a->memory, "nvmlDeviceGetMemoryInfo");
  if (!complete || a->init() != nvml_success) {
    dlclose(handle);
    return nullptr;
  }
  std::unique_ptr<nvml_probe> p(new nvml_probe());
  p->handle_ = handle;
  p->api_ = std::move(a);
  return p;
}

nvml_probe::~nvml_probe() {
  if (api_) api_->shutdown();
  if (handle_) dlclose(handle_);
}

std::vector<gpu_sample> nvml_probe::sample() const {
  std::vector<gpu_sample> out;
  unsigned int n = 0;
  if (api_->device_count(&n) != nvml_success) return out;
  for (unsigned int i = 0; i < n; ++i) {
    nvml_device d = nullptr;
    if (api_->handle_by_index(i, &d) != nvml_success) continue;
    gpu_sample s;
    s.index = i;
    nvml_utilization u{};
    if (api_->utilization(d, &u) == nvml_success) {
      s.utilization_ratio = u.gpu / 100.0;
      s.memory_busy_ratio = u.memory / 100.0;
    }
    unsigned int mw = 0;
    if (api_->power(d, &mw) == nvml_success) s.power_watts = mw / 1000.0;
    unsigned int celsius = 0;
    if (api_->temperature(d, nvml_temperature_gpu, &celsius) == nvml_success) s.temperature_celsius = celsius;
    nvml_memory m{};
    if (api_->memory(d, &m) == nvml_success) {
      s.memory_used_bytes = static_cast<double>(m.used);
      s.memory_total_bytes = static_cast<double>(m.total);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace attnbench
