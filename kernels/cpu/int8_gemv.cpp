#include "kernels/cpu/int8_gemv.hpp"

#include <ATen/Parallel.h>

#ifndef _OPENMP
#error "kernels/cpu/int8_gemv.cpp must be compiled with -fopenmp: at::parallel_for would run serially"
#endif

#include "kernels/cpu/flash_attention.hpp"
#include "kernels/cpu/int8_gemv_problem.hpp"

namespace attnbench {

kernels::flash_isa int8_weight_linear_path(int64_t in) { return cpu_flash_path(torch::kFloat, in); }

torch::Tensor int8_weight_linear(const torch::Tensor& x_in, const torch::Tensor& q_in, const torch::Tensor& scale_in,
                                 const torch::Tensor& bias_in, std::optional<kernels::flash_isa> isa) {
  TORCH_CHECK(q_in.dim() == 2 && q_in.scalar_type() == torch::kChar && q_in.device().is_cpu(),
              "int8 weight-only linear: the weight must be 2-D int8 on the CPU; got ", q_in.sizes(), " ",
              q_in.scalar_type(), " on ", q_in.device());
  const int64_t out = q_in.size(0), in = q_in.size(1);
  TORCH_CHECK(x_in.dim() >= 1 && x_in.size(-1) == in && x_in.device().is_cpu() && x_in.is_floating_point(),
              "int8 weight-only linear: x must be (..., ", in, ") floating point on the CPU; got ", x_in.sizes(), " ",
              x_in.scalar_type(), " on ", x_in.device());
  TORCH_CHECK(scale_in.numel() == out, "int8 weight-only linear: ", out, " scales expected; got ", scale_in.numel());
  TORCH_CHECK(!bias_in.defined() || bias_in.numel() == out, "int8 weight-only linear: ", out,
              " biases expected; got ", bias_in.numel());
  const auto x = x_in.reshape({-1, in}).to(torch::kFloat).contiguous();
  const auto q = q_in.contiguous();
  const auto scale = scale_in.to(torch::kFloat).contiguous();
  const auto bias = bias_in.defined() ? bias_in.to(torch::kFloat).contiguous() : torch::Tensor();
  auto y = torch::empty({x.size(0), out}, x.options());
  kernels::int8_gemv_problem p;
  p.x = x.data_ptr<float>();
  p.rows = x.size(0);
  p.k = in;
  p.n = out;
  p.x_stride = in;
  p.w = q.data_ptr<int8_t>();
  p.scale = scale.data_ptr<float>();
  p.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
  p.y = y.data_ptr<float>();
  p.y_stride = out;
  const kernels::flash_isa path = cpu_flash_path(torch::kFloat, in, isa);
  const kernels::int8_gemv_fn fn = path == kernels::flash_isa::avx512 ? kernels::int8_gemv_avx512()
                                   : path == kernels::flash_isa::avx2 ? kernels::int8_gemv_avx2()
                                                                      : kernels::int8_gemv_scalar();
  // Chunks of 16 output channels (4 groups of 4): small enough to share 768 outputs over 16 cores
  // evenly, large enough that a chunk's start costs nothing next to its 16·in weight bytes.
  constexpr int64_t grain = 16;
  at::parallel_for(0, (out + grain - 1) / grain, 1, [&](int64_t b0, int64_t b1) {
    fn(p, b0 * grain, std::min(out, b1 * grain));
  });
  auto shape = x_in.sizes().vec();
  shape.back() = out;
  return y.view(shape);
}

}  // namespace attnbench
