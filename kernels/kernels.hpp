// The attention kernels of kernels/, as attention_impls() lists them after naive and the SDPA
// backends. Adding a kernel: kernels/README.md ("Adding a kernel") — its files, one entry in
// kernel_catalog.hpp and one line in kernels.cpp.
#pragma once

#include <vector>

#include "kernels/attention_impl.hpp"

namespace attnbench {

std::vector<attention_impl> kernel_attention_impls();

}  // namespace attnbench
