// CPU flash attention, AVX-512 code path (16 fp32 lanes, 32 vector registers): compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma and run only when the CPU reports them. bf16
// inputs are widened to fp32 when packed; flash_tile_avx512_bf16.cpp computes on bf16 directly.
// Algorithm: flash_tile_impl.hpp.
#include "flash_tile_impl.hpp"

#include "avx512_traits.hpp"

namespace attnbench::kernels {

flash_kernel flash_kernel_avx512() { return f32_kernel<avx512_traits>(flash_isa::avx512); }

}  // namespace attnbench::kernels
