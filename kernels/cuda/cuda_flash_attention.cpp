#include "kernels/cuda/cuda_flash_attention.hpp"

#include <cmath>

#include <fmt/format.h>

#ifdef ATTNBENCH_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda/flash2_launch.hpp"
#endif

namespace attnbench {
namespace {

constexpr const char* not_built =
    "cuda-flash2 is not in this build: attnbench was configured without nvcc or without LibTorch's CUDA build "
    "(ATTNBENCH_CUDA_KERNELS=OFF)";

}  // namespace

std::optional<std::string> key_lengths_problem(const torch::Tensor& lengths, int64_t seq) {
  TORCH_CHECK(lengths.device().is_cpu() && lengths.scalar_type() == torch::kLong && lengths.is_contiguous(),
              "key_lengths_problem takes contiguous int64 lengths in host memory");
  const int64_t* l = lengths.data_ptr<int64_t>();
  for (int64_t i = 0; i < lengths.numel(); ++i)
    if (l[i] < 1 || l[i] > seq)
      return fmt::format("cuda-flash2: every key length must lie in [1, {}]; sample {} has {}", seq, i, l[i]);
  return std::nullopt;
}

std::string launch_failure_message(const std::string& pending, const std::string& launch) {
  if (!pending.empty())
    return fmt::format("cuda-flash2 was not launched: a CUDA error was already pending from earlier work on this "
                       "thread ({}); it is not this kernel's",
                       pending);
  return fmt::format("cuda-flash2: the kernel launch failed: {}", launch);
}

bool cuda_flash_attention_built() {
#ifdef ATTNBENCH_WITH_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

torch::Tensor cuda_flash_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   bool causal, const torch::Tensor& key_lengths) {
#ifndef ATTNBENCH_WITH_CUDA_KERNELS
  (void)q, (void)k, (void)v, (void)causal, (void)key_lengths;
  TORCH_CHECK(false, not_built);
#else
  TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(),
              "cuda-flash2: q, k and v must all be (B, H, S, D) of one shape; got ", q.sizes(), ", ", k.sizes(), ", ",
              v.sizes());
  TORCH_CHECK(q.is_cuda() && k.device() == q.device() && v.device() == q.device(),
              "cuda-flash2: q, k and v must be on one CUDA device; got q on ", q.device());
  const auto dtype = q.scalar_type();
  TORCH_CHECK(dtype == torch::kHalf || dtype == torch::kBFloat16, "cuda-flash2 takes fp16 or bf16 inputs; got ",
              dtype);
  TORCH_CHECK(k.scalar_type() == dtype && v.scalar_type() == dtype, "cuda-flash2: q, k and v must share one dtype");
  const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
  TORCH_CHECK(dim == 64 || dim == 128, "cuda-flash2 is built for head_dim 64 and 128; got ", dim);
  TORCH_CHECK(!(torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad())),
              "cuda-flash2 is a forward-only kernel: it has no backward");
  const c10::cuda::CUDAGuard guard(q.device());
  const auto last_contiguous = [](const torch::Tensor& t) { return t.stride(3) == 1 ? t : t.contiguous(); };
  const torch::Tensor qc = last_contiguous(q), kc = last_contiguous(k), vc = last_contiguous(v);
  torch::Tensor lengths;
  if (key_lengths.defined()) {
    TORCH_CHECK(key_lengths.dim() == 1 && key_lengths.size(0) == batch, "cuda-flash2: key_lengths must be (",
                batch, "); got ", key_lengths.sizes());
    // No device sync per call: host lengths are checked here, then copied without waiting; device
    // lengths are never read back (their maker checks them, and the kernel clamps to [1, S]).
    if (!key_lengths.is_cuda()) {
      const auto host = key_lengths.to(torch::kLong).contiguous();
      if (auto why = key_lengths_problem(host, seq)) TORCH_CHECK(false, *why);
      lengths = host.to(q.device(), torch::kLong, /*non_blocking=*/true);
    } else {
      lengths = key_lengths.to(q.device(), torch::kLong).contiguous();
    }
  }
  torch::Tensor out = torch::empty({batch, seq, heads, dim}, q.options());  // (B, S, H, D)
  if (out.numel() == 0) return out.transpose(1, 2);
  kernels::cuda_flash_problem p;
  p.batch = batch;
  p.heads = heads;
  p.seq = seq;
  p.head_dim = dim;
  p.bf16 = dtype == torch::kBFloat16;
  p.causal = causal;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  p.q = qc.data_ptr();
  p.k = kc.data_ptr();
  p.v = vc.data_ptr();
  p.out = out.data_ptr();
  for (int i = 0; i < 3; ++i) {
    p.q_stride[i] = qc.stride(i);
    p.k_stride[i] = kc.stride(i);
    p.v_stride[i] = vc.stride(i);
  }
  p.o_stride[0] = out.stride(0);
  p.o_stride[1] = out.stride(2);
  p.o_stride[2] = out.stride(1);
  p.key_lengths = lengths.defined() ? lengths.data_ptr<int64_t>() : nullptr;
  int pending = 0;
  const int err = kernels::cuda_flash2_forward(p, at::cuda::getCurrentCUDAStream().stream(), &pending);
  if (err != 0)
    TORCH_CHECK(false, launch_failure_message(pending != 0 ? kernels::cuda_flash2_error_string(pending) : "",
                                              kernels::cuda_flash2_error_string(err)));
  return out.transpose(1, 2);  // (B, H, S, D)
#endif
}

attention_impl cuda_flash_attention_impl() {
  attention_impl impl;
  impl.name = "cuda-flash2";
  impl.unavailable = [](torch::Device device) -> std::optional<std::string> {
    if (!device.is_cuda()) return "cuda-flash2 runs on CUDA only";
#ifndef ATTNBENCH_WITH_CUDA_KERNELS
    return std::string(not_built);
#else
    const auto* props = at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0);
    if (props->major < 9)
      return "cuda-flash2 is compiled for sm_90 (Hopper) and later; this GPU is sm_" + std::to_string(props->major) +
             std::to_string(props->minor);
    return std::nullopt;
#endif
  };
  impl.run = [](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                const torch::Tensor& key_lengths) { return cuda_flash_attention(q, k, v, causal, key_lengths); };
  impl.scratch_bytes = [](int64_t, int64_t, int64_t, int64_t) -> int64_t { return 0; };
  return impl;
}

}  // namespace attnbench
