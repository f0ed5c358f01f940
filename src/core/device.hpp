// The device a run uses, and the device-specific parts of timing it.
#pragma once

#include <string>

#include <torch/torch.h>

#include "config/config.hpp"

namespace attnbench {

device_caps detect_device_caps();

// "auto" → "cuda:0" when a GPU is visible, else "cpu". The config parser has checked the rest.
torch::Device resolve_device(const std::string& spec);

// The one place a device string becomes a torch::Device: "cpu", "cuda:N", and "cuda" as
// "cuda:0" (the config parser's meaning, never LibTorch's index -1, "the current device"), so two
// spellings of one GPU compare equal everywhere (the run's device, pipeline stages, workers).
torch::Device canonical_device(const std::string& spec);

// Blocks until queued work on `device` is done (no-op on CPU): call before reading a host clock.
void synchronize(torch::Device device);

std::string device_name(torch::Device device);  // GPU name, or the CPU model
std::string cpu_model_name();                   // from /proc/cpuinfo, "unknown" elsewhere
std::string torch_version();
std::string cuda_version();                     // "" when LibTorch has no CUDA
// CUDA devices only ("" otherwise): compute capability "9.0" and the driver's CUDA version "13.0".
std::string cuda_capability(torch::Device device);
std::string cuda_driver_version();

}  // namespace attnbench
