#include "model/packed_linear.hpp"

#include <ATen/core/dispatch/Dispatcher.h>

namespace attnbench {
namespace {

constexpr const char* reorder_op = "mkldnn::_reorder_linear_weight";
constexpr const char* linear_op = "mkldnn::_linear_pointwise";

std::optional<c10::OperatorHandle> find_op(const char* qualified) {
  const std::string name = qualified;
  return c10::Dispatcher::singleton().findSchema({name, ""});
}

c10::OperatorHandle op_or_throw(const char* qualified) {
  auto op = find_op(qualified);
  TORCH_CHECK(op.has_value(), "packed linear: LibTorch has no operator ", qualified,
              " (it needs a LibTorch built with oneDNN, USE_MKLDNN)");
  return *op;
}

}  // namespace

std::optional<std::string> packed_linear_unavailable() {
  for (const char* name : {reorder_op, linear_op})
    if (!find_op(name))
      return std::string("this LibTorch has no oneDNN operator ") + name + " (built without USE_MKLDNN)";
  return std::nullopt;
}

torch::Tensor pack_linear_weight(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == torch::kFloat && weight.device().is_cpu(),
              "packed linear: weights must be 2-D float32 on the CPU; got ", weight.sizes(), " ",
              weight.scalar_type(), " on ", weight.device());
  static const c10::OperatorHandle op = op_or_throw(reorder_op);
  torch::jit::Stack stack{weight.detach().contiguous(), c10::IValue()};  // batch_size: none (any)
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

torch::Tensor packed_linear(const torch::Tensor& x, const torch::Tensor& packed_weight, const torch::Tensor& bias,
                            bool gelu) {
  static const c10::OperatorHandle op = op_or_throw(linear_op);
  // attr "gelu" with algorithm "none" is the exact (erf) GELU, torch::gelu's default; attr "none"
  // takes no algorithm.
  torch::jit::Stack stack{x.contiguous(),
                          packed_weight,
                          bias.defined() ? c10::IValue(bias) : c10::IValue(),
                          c10::IValue(std::string(gelu ? "gelu" : "none")),
                          c10::IValue(c10::List<std::optional<c10::Scalar>>()),
                          gelu ? c10::IValue(std::string("none")) : c10::IValue()};
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

torch::Tensor linear_forward(torch::nn::Linear linear, const torch::Tensor& packed, const torch::Tensor& x,
                             bool gelu) {
  if (packed.defined()) return packed_linear(x, packed, linear->bias, gelu);
  auto y = linear(x);
  return gelu ? torch::gelu(y) : y;
}

}  // namespace attnbench
