// Automatic mixed precision (the article's "AMP" row) as a scope: inside it, LibTorch's autocast
// runs matmuls, linears and attention in bf16 or fp16 while weights stay fp32.
//
// LibTorch ships no RAII guard for autocast, so this is one. Autocast state is per thread: a
// worker thread or the autograd engine's thread must open its own scope.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <optional>

#include "config/config.hpp"

namespace attnbench {

// The compute dtype a precision runs matmuls in (kFloat for fp32): the one precision_kind → dtype
// switch; everything else reads the variant's plan (techniques/variant_plan.hpp).
c10::ScalarType compute_dtype(precision_kind p);

// The dtype autocast runs in under p, or none for fp32 (what resolved_precision::autocast holds).
std::optional<c10::ScalarType> autocast_dtype(precision_kind p);

class autocast_scope {
 public:
  // Autocast in `dtype` (a plan's precision.autocast); none leaves autocast untouched (a no-op
  // scope), so every variant runs through the same code.
  autocast_scope(std::optional<c10::ScalarType> dtype, c10::DeviceType device);
  ~autocast_scope();
  autocast_scope(const autocast_scope&) = delete;
  autocast_scope& operator=(const autocast_scope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::Undefined;
};

// One device type's autocast state on this thread, captured where a forward ran so that a
// recompute on another thread (the autograd engine's, during backward) can run the same way.
struct autocast_state {
  c10::DeviceType device = c10::DeviceType::CPU;
  bool enabled = false;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
};

autocast_state current_autocast_state(c10::DeviceType device);

// Sets this thread's autocast to `state` (enabled or not) and restores the previous one on exit.
class autocast_state_scope {
 public:
  explicit autocast_state_scope(const autocast_state& state);
  ~autocast_state_scope();
  autocast_state_scope(const autocast_state_scope&) = delete;
  autocast_state_scope& operator=(const autocast_state_scope&) = delete;

 private:
  autocast_state previous_;
  bool nested_ = false;
};

}  // namespace attnbench
