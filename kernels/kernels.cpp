#include "kernels/kernels.hpp"

#include "kernels/cpu/flash_attention.hpp"
#include "kernels/cuda/cuda_flash_attention.hpp"

namespace attnbench {

std::vector<attention_impl> kernel_attention_impls() {
  return {cpu_flash_attention_impl(), cuda_flash_attention_impl()};
}

}  // namespace attnbench
