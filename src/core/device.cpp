#include "core/device.hpp"
#include "core/process_device.hpp"

#include <fstream>

#include <fmt/format.h>

#include <torch/cuda.h>
#include <torch/version.h>

#include "common/error.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace attnbench {

device_caps detect_device_caps() {
  device_caps caps;
  caps.cuda_devices = static_cast<int>(torch::cuda::device_count());
  caps.cpu_amp_fp16 = true;  // CPU autocast has accepted float16 since LibTorch 2.4
  return caps;
}

torch::Device resolve_device(const std::string& spec) {
  if (spec == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  return canonical_device(spec);
}

torch::Device canonical_device(const std::string& spec) {
  torch::Device d(spec);
  if (d.is_cuda() && !d.has_index()) d.set_index(0);
  return d;
}

torch::Device process_device(torch::Device run_device, std::optional<int> local_rank, int cuda_devices) {
  if (!run_device.is_cuda() || !local_rank) return run_device;
  if (*local_rank < 0 || *local_rank >= cuda_devices)
    throw input_error("LOCAL_RANK",
                      fmt::format("local rank {} has no GPU of its own: this process sees {} CUDA device{}, and "
                                  "each rank of a GPU run uses cuda:LOCAL_RANK; start at most {} rank{} per host",
                                  *local_rank, cuda_devices, cuda_devices == 1 ? "" : "s", cuda_devices,
                                  cuda_devices == 1 ? "" : "s"));
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(*local_rank));
}

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string device_name(torch::Device device) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index())->name;
#endif
  if (device.is_cuda()) return "CUDA device";
  return cpu_model_name();
}

std::string torch_version() { return TORCH_VERSION; }

std::string cuda_version() {
#ifdef ATTNBENCH_WITH_CUDA
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  return "unknown";
#else
  return "";
#endif
}

std::string cuda_capability(torch::Device device) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(device.index());
    return std::to_string(p->major) + "." + std::to_string(p->minor);
  }
#endif
  (void)device;
  return "";
}

std::string cuda_driver_version() {
#ifdef ATTNBENCH_WITH_CUDA
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
#endif
  return "";
}

}  // namespace attnbench
