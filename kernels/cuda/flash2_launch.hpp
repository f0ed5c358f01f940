// The plain-data interface between the CUDA kernel (flash_attention.cu, compiled by nvcc) and its
// LibTorch wrapper (cuda_flash_attention.cpp, compiled by the host compiler). No CUDA or LibTorch
// type crosses it, so either side builds without the other's headers.
#pragma once

#include <cstdint>

namespace attnbench::kernels {

struct cuda_flash_problem {
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;  // head_dim 64 or 128
  bool bf16 = false;                                     // else fp16
  bool causal = false;
  float scale = 1.0f;  // 1/√head_dim
  const void* q = nullptr;  // device pointers, (B, H, S, D) with D contiguous
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  int64_t q_stride[3] = {0, 0, 0};  // elements: batch, head, seq
  int64_t k_stride[3] = {0, 0, 0};
  int64_t v_stride[3] = {0, 0, 0};
  int64_t o_stride[3] = {0, 0, 0};
  const int64_t* key_lengths = nullptr;  // device, (B), each in [1, seq] (clamped); nullptr: no padding
};

// Launches the forward on `stream` (a cudaStream_t). Returns the cudaError_t of the launch as an
// int: 0 on success. Shapes must already be checked (the wrapper does). An error already pending
// before the launch (from earlier work) is returned in *pending_error (0: none) and nothing is
// launched, so it is never reported as this kernel's. key_lengths outside [1, seq] are clamped
// on the device (the wrapper validates host-side lengths; device-side ones are the caller's).
int cuda_flash2_forward(const cuda_flash_problem& p, void* stream, int* pending_error);
const char* cuda_flash2_error_string(int error);

}  // namespace attnbench::kernels
