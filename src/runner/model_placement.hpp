// Where a run's one set of weights lives (issue 16, part 1).
//
// The model is built on the host. Every variant that runs it whole shares one copy on the run's
// device, placed when the first such variant is prepared, not before: a run whose whole model
// does not fit the device fails only the variants that need it whole (out of memory, reported
// as their result), and offloaded variants never find the whole model on the device beside
// their slots. On the CPU the host model is the device model: nothing is copied.
//
// Offload variants take the host model's encoder layers as their host weights, page-locked in
// place on CUDA (techniques/offload_executor.hpp), so the host holds the weights once whichever
// variants run; the device copy is made from them either way.
#pragma once

#include <cstdint>
#include <functional>

#include <torch/torch.h>

#include "model/encoder.hpp"

namespace attnbench {

class model_placement {
 public:
  // How the whole model is put on the device: a copy (replicate) by default; tests pass one that
  // runs out of memory, so the path a GPU takes is exercised on the CPU too.
  using placer = std::function<EncoderClassifier(const EncoderClassifier& host, torch::Device device)>;

  // `host`: on the CPU, eval mode. `host_bytes`: what building it allocated, measured (the CPU
  // allocator hook), or -1. With a `place` the model is placed by it even on the CPU.
  model_placement(EncoderClassifier host, torch::Device device, int64_t host_bytes, placer place = nullptr);

  const EncoderClassifier& host() const { return host_; }
  torch::Device device() const { return device_; }

  // The whole model on the run's device: the host model itself on the CPU, else a copy made on
  // the first call. Throws c10::OutOfMemoryError when it does not fit (nothing stays allocated).
  const EncoderClassifier& on_device();
  bool placed() const { return !device_model_.is_empty(); }

  // Device memory the whole model takes, measured: the CUDA caching allocator's allocated bytes
  // before and after the copy (on the CPU: what building the host model allocated). -1 before
  // the model is placed, or when not measured.
  int64_t device_bytes() const { return device_bytes_; }

 private:
  EncoderClassifier host_;
  torch::Device device_;
  placer place_;
  EncoderClassifier device_model_{nullptr};
  int64_t device_bytes_ = -1;
};

// Allocated bytes on a CUDA device now, as the caching allocator counts them (-1 for a CPU device).
int64_t device_allocated_bytes(torch::Device device);

}  // namespace attnbench
