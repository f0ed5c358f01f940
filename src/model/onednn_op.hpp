// Looking up LibTorch's oneDNN operators (the packed and the int8 linears) through the dispatcher:
// they have no C++ function of their own, and a LibTorch built without oneDNN lacks them.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <initializer_list>
#include <optional>
#include <string>

namespace attnbench {

// The operator named "namespace::name" (overload ""), or nothing when this LibTorch lacks it.
inline std::optional<c10::OperatorHandle> find_onednn_op(const char* qualified) {
  return c10::Dispatcher::singleton().findSchema({std::string(qualified), ""});
}

// The operator, or a LibTorch error naming `who` (the caller, for the message) and the operator.
inline c10::OperatorHandle onednn_op_or_throw(const char* who, const char* qualified) {
  auto op = find_onednn_op(qualified);
  TORCH_CHECK(op.has_value(), who, ": LibTorch has no operator ", qualified,
              " (it needs a LibTorch built with oneDNN, USE_MKLDNN)");
  return *op;
}

// Why the operators cannot be used (the first one missing), or nothing when all are there.
inline std::optional<std::string> missing_onednn_op(std::initializer_list<const char*> qualified) {
  for (const char* name : qualified)
    if (!find_onednn_op(name))
      return std::string("this LibTorch has no oneDNN operator ") + name + " (built without USE_MKLDNN)";
  return std::nullopt;
}

}  // namespace attnbench
