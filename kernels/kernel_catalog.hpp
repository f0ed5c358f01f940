// The names of the kernels in kernels/, torch-free, so that a config can name one
// ("attention": "custom" or "attention": "<kernel>") and be checked before LibTorch is involved.
// Each name is the attention_impl name its kernel registers (kernels.cpp); a test checks that
// the two lists agree.
#pragma once

#include <array>
#include <string_view>

namespace attnbench {

struct kernel_entry {
  std::string_view name;
  std::string_view device;  // "cpu" or "cuda": where it runs
  std::string_view what;
};

inline constexpr std::array<kernel_entry, 2> kernel_catalog{{
    {"cpu-flash", "cpu", "tiled online-softmax attention, AVX-512 (bf16 dot products) / AVX2 / scalar"},
    {"cuda-flash2", "cuda", "FlashAttention-2-style forward, bf16/fp16 tensor cores, sm_90"},
}};

// "attention": "custom" means the catalog's kernel for the variant's device.
inline std::string_view default_kernel(bool cuda) { return cuda ? "cuda-flash2" : "cpu-flash"; }

}  // namespace attnbench
