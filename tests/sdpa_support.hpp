// LibTorch's refusal of an SDPA backend that has no kernel for the inputs, for the tests that
// tell it from a kernel that ran and failed (the [gpu] SDPA test and the encoder's CPU test that
// pins its wording). Its own header: test_support.hpp is included by most tests.
#pragma once

#include <string>

namespace attnbench::testing {
// LibTorch's refusal of an SDPA backend that has no kernel for the inputs, inside attnbench's
// "cannot run these inputs" message, as opposed to a kernel that ran and failed. Its CUDA
// selection says "No available kernel. Aborting execution.", its CPU one "No viable backend for
// scaled_dot_product_attention was found." (both strings are in LibTorch 2.11's libraries).
inline bool no_kernel_for_inputs(const std::string& what) {
  return what.find("cannot run these inputs") != std::string::npos &&
         (what.find("No available kernel") != std::string::npos ||
          what.find("No viable backend for scaled_dot_product_attention") != std::string::npos);
}

}  // namespace attnbench::testing
