#include "model/packed_linear.hpp"

#include <algorithm>

#include <ATen/record_function.h>

#include "kernels/cpu/int8_gemv.hpp"
#include "model/int8_linear.hpp"
#include "model/onednn_op.hpp"
#include "model/random_rounding.hpp"

namespace attnbench {
namespace {

constexpr const char* reorder_op = "mkldnn::_reorder_linear_weight";
constexpr const char* linear_op = "mkldnn::_linear_pointwise";

}  // namespace

std::optional<std::string> packed_linear_unavailable() {
  return missing_onednn_op({reorder_op, linear_op});
}

std::optional<std::string> packed_dtype_unavailable(const std::string& dtype,
                                                    const std::vector<std::string>& cpu_features) {
  const auto has = [&](const char* f) {
    return std::find(cpu_features.begin(), cpu_features.end(), f) != cpu_features.end();
  };
  if (dtype == "fp32") return std::nullopt;
  if (dtype == "bf16") {
    if (has("avx512_bf16") || has("amx_bf16")) return std::nullopt;
    std::string seen;
    for (const auto& f : cpu_features) seen += (seen.empty() ? "" : " ") + f;
    return "pre-packed bf16 linears need a CPU with avx512_bf16 or amx_bf16 (oneDNN's bf16 GEMM); this CPU has " +
           (seen.empty() ? std::string("none of the features attnbench reads") : seen);
  }
  return "pre-packed linears run in fp32 or bf16 only, not " + dtype;
}

torch::Tensor pack_linear_weight(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 &&
                  (weight.scalar_type() == torch::kFloat || weight.scalar_type() == torch::kBFloat16) &&
                  weight.device().is_cpu(),
              "packed linear: weights must be 2-D float32 or bfloat16 on the CPU; got ", weight.sizes(), " ",
              weight.scalar_type(), " on ", weight.device());
  static const c10::OperatorHandle op = onednn_op_or_throw("packed linear", reorder_op);
  torch::jit::Stack stack{weight.detach().contiguous(), c10::IValue()};  // batch_size: none (any)
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

torch::Tensor packed_linear(const torch::Tensor& x, const torch::Tensor& packed_weight, const torch::Tensor& bias,
                            bool gelu) {
  static const c10::OperatorHandle op = onednn_op_or_throw("packed linear", linear_op);
  const torch::Tensor input = x.scalar_type() == packed_weight.scalar_type() ? x : x.to(packed_weight.scalar_type());
  // attr "gelu" with algorithm "none" is the exact (erf) GELU, torch::gelu's default; attr "none"
  // takes no algorithm.
  torch::jit::Stack stack{input.contiguous(),
                          packed_weight,
                          bias.defined() ? c10::IValue(bias) : c10::IValue(),
                          c10::IValue(std::string(gelu ? "gelu" : "none")),
                          c10::IValue(c10::List<std::optional<c10::Scalar>>()),
                          gelu ? c10::IValue(std::string("none")) : c10::IValue()};
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

prepared_linear pack_linear(const torch::nn::Linear& linear, linear_kind kind) {
  switch (kind) {
    case linear_kind::int8: {
      auto q = quantized_weight_of(*linear);
      TORCH_CHECK(q.has_value(),
                  "int8 linear: the linear holds no quantized weight (quantize_linear first: "
                  "model/int8_linear.hpp)");
      return {kind, prepack_int8_weight(q->weight)};
    }
    case linear_kind::int8_weight: {
      auto q = quantized_weight_of(*linear);
      TORCH_CHECK(q.has_value(),
                  "int8 weight-only linear: the linear holds no quantized weight (quantize_linear first: "
                  "model/int8_linear.hpp)");
      return {kind, q->weight.contiguous()};
    }
    case linear_kind::packed:
      return {kind, pack_linear_weight(linear->weight)};
    case linear_kind::plain:
      break;
  }
  return {};
}

torch::Tensor plain_linear(const torch::nn::Linear& l, const torch::Tensor& x) {
  return torch::linear(x, l->weight, l->bias.defined() ? std::optional<torch::Tensor>(l->bias) : std::nullopt);
}

torch::Tensor linear_forward(torch::nn::Linear linear, const prepared_linear& prepared,
                             const torch::Tensor& x_in, bool gelu) {
  // The accuracy study's hooks (model/random_rounding.hpp): identity outside its float64 runs.
  const torch::Tensor x = rounded_input(x_in);
  switch (prepared.kind) {
    case linear_kind::int8: {
      auto q = quantized_weight_of(*linear);
      TORCH_CHECK(q.has_value(), "int8 linear: an int8 weight without its scales (model/int8_linear.hpp)");
      return int8_linear(x, prepared.weight, *q, linear->bias, gelu);
    }
    case linear_kind::int8_weight: {
      // Named for the profiler: attnbench's own kernel is no ATen operator, and would otherwise be
      // the caller's self time.
      RECORD_FUNCTION("attnbench::int8_weight_linear", std::vector<c10::IValue>());
      auto q = quantized_weight_of(*linear);
      TORCH_CHECK(q.has_value(), "int8 weight-only linear: an int8 weight without its scales (model/int8_linear.hpp)");
      auto y = int8_weight_linear(x, prepared.weight, q->scale, linear->bias);
      return gelu ? torch::gelu(y) : y;
    }
    case linear_kind::packed:
      return packed_linear(x, prepared.weight, linear->bias, gelu);
    case linear_kind::plain:
      break;
  }
  auto y = plain_linear(linear, x);
  return rounded_output(gelu ? torch::gelu(y) : y);
}

}  // namespace attnbench
