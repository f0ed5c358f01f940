// NVIDIA GPU utilisation, memory, power and temperature through NVML, loaded at run time with
// dlopen: nothing links against it, and a machine without it (no NVIDIA driver) simply has no
// probe. Only the few documented NVML C entry points it needs are declared (nvml_probe.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace attnbench {

struct gpu_sample {
  unsigned index = 0;             // NVML's device index (not CUDA_VISIBLE_DEVICES' numbering)
  double utilization_ratio = -1;  // share of the last sample period a kernel ran (0..1); < 0: unread
  double memory_busy_ratio = -1;  // share of it device memory was read or written (0..1)
  double power_watts = -1;
  double temperature_celsius = -1;
  double memory_used_bytes = -1;
  double memory_total_bytes = -1;
};

class nvml_probe {
 public:
  // The probe, or null when `library` cannot be loaded, lacks an entry point, or nvmlInit fails.
  // Never throws.
  static std::unique_ptr<nvml_probe> open(const std::string& library = "libnvidia-ml.so.1");
  ~nvml_probe();
  nvml_probe(const nvml_probe&) = delete;
  nvml_probe& operator=(const nvml_probe&) = delete;

  // One sample per device; a reading NVML refuses (unsupported on that board) stays < 0.
  std::vector<gpu_sample> sample() const;

 private:
  nvml_probe() = default;
  struct api;
  void* handle_ = nullptr;
  std::unique_ptr<api> api_;
};

}  // namespace attnbench
