#include "model/int8_linear.hpp"

#include <cmath>

#include "model/onednn_op.hpp"

namespace attnbench {
namespace {

constexpr const char* prepack_op = "onednn::qlinear_prepack";
constexpr const char* qlinear_op = "onednn::qlinear_pointwise";

int64_t qmax_of(int bits) {
  TORCH_CHECK(bits == 7 || bits == 8, "int8 linear: weights are quantized to 8 or 7 bits; got ", bits);
  return (int64_t{1} << (bits - 1)) - 1;  // 127, 63
}

// The oneDNN int8 matmul with fp32 output: qx (M, K) uint8 with its scale and zero point.
torch::Tensor qlinear(const torch::Tensor& qx, double x_scale, int64_t x_zero_point, const torch::Tensor& packed,
                      const int8_linear_weight& w, const torch::Tensor& bias, bool gelu) {
  static const c10::OperatorHandle op = onednn_op_or_throw("int8 linear", qlinear_op);
  // Output scale 1 and zero point 0 with output dtype float32: dequantized, not requantized.
  // Post-op "gelu" with algorithm "none" is the exact (erf) GELU; "none" takes no algorithm.
  torch::jit::Stack stack{qx,
                          x_scale,
                          x_zero_point,
                          packed,
                          w.scale,
                          w.zero_point,
                          bias.defined() ? c10::IValue(bias) : c10::IValue(),
                          1.0,
                          int64_t{0},
                          c10::IValue(torch::kFloat),
                          std::string(gelu ? "gelu" : "none"),
                          c10::IValue(c10::List<std::optional<c10::Scalar>>()),
                          std::string(gelu ? "none" : "")};
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

// Buffer names of a quantized linear (quantize_linear).
constexpr const char* weight_buffer = "int8_weight";
constexpr const char* scale_buffer = "int8_scale";
constexpr const char* zero_point_buffer = "int8_zero_point";

// The number of terms the saturation probe sums: any K ≥ 2 pairs products in vpmaddubsw; 64 fills
// one AVX2 register of u8.
constexpr int64_t probe_k = 64;

}  // namespace

std::optional<std::string> int8_linear_unavailable() {
  return missing_onednn_op({prepack_op, qlinear_op});
}

bool int8_gemm_saturates() {
  static const bool saturates = [] {
    torch::InferenceMode guard;
    // Every product 255 · 127: exact in int32 (255·127·64), saturated in int16 pairs without VNNI.
    const auto qx = torch::full({4, probe_k}, 255, torch::kByte);
    int8_linear_weight w;
    w.weight = torch::full({8, probe_k}, 127, torch::kChar);
    w.scale = torch::ones({8});
    w.zero_point = torch::zeros({8}, torch::kLong);
    const auto y = qlinear(qx, 1.0, 0, prepack_int8_weight(w.weight), w, torch::Tensor(), false);  // (4, 8)
    const double exact = 255.0 * 127.0 * static_cast<double>(probe_k);
    return (y - exact).abs().max().item<double>() > 0.5;
  }();
  return saturates;
}

int int8_weight_bits(bool saturates) { return saturates ? 7 : 8; }

int8_linear_weight quantize_weight(const torch::Tensor& weight, int bits) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == torch::kFloat && weight.device().is_cpu(),
              "int8 linear: weights must be 2-D float32 on the CPU; got ", weight.sizes(), " ", weight.scalar_type(),
              " on ", weight.device());
  const auto qmax = static_cast<double>(qmax_of(bits));
  const auto w = weight.detach().contiguous();
  auto scale = w.abs().amax(1) / qmax;                                // (out)
  scale = torch::where(scale.gt(0), scale, torch::ones_like(scale));  // a zero row: any scale is exact
  int8_linear_weight q;
  q.weight = (w / scale.unsqueeze(1)).round().clamp(-qmax, qmax).to(torch::kChar);  // (out, in)
  q.scale = scale;
  q.zero_point = torch::zeros({weight.size(0)}, torch::kLong);
  return q;
}

torch::Tensor dequantize_weight(const int8_linear_weight& w) {
  return w.weight.to(torch::kFloat) * w.scale.unsqueeze(1);  // (out, in)
}

void quantize_linear(torch::nn::LinearImpl& linear, int bits) {
  torch::NoGradGuard no_grad;
  const auto q = quantize_weight(linear.weight, bits);
  linear.register_buffer(weight_buffer, q.weight);
  linear.register_buffer(scale_buffer, q.scale);
  linear.register_buffer(zero_point_buffer, q.zero_point);
}

std::optional<int8_linear_weight> quantized_weight_of(const torch::nn::Module& linear) {
  const auto buffers = linear.named_buffers(/*recurse=*/false);
  const auto* weight = buffers.find(weight_buffer);
  if (!weight) return std::nullopt;
  return int8_linear_weight{*weight, buffers[scale_buffer], buffers[zero_point_buffer]};
}

torch::Tensor prepack_int8_weight(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == torch::kChar && weight.device().is_cpu(),
              "int8 linear: a prepacked weight must be 2-D int8 on the CPU; got ", weight.sizes(), " ",
              weight.scalar_type());
  static const c10::OperatorHandle op = onednn_op_or_throw("int8 linear", prepack_op);
  torch::jit::Stack stack{weight.contiguous(), c10::IValue()};  // x_shape: none (any number of rows)
  op.callBoxed(stack);
  return stack.at(0).toTensor();
}

torch::Tensor int8_linear(const torch::Tensor& x, const torch::Tensor& packed, const int8_linear_weight& w,
                          const torch::Tensor& bias, bool gelu) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "int8 linear: the input must be float32; got ", x.scalar_type());
  const auto in = x.size(-1);
  const auto x2 = x.reshape({-1, in}).contiguous();  // (M, in)
  // Min and max (0 included) and one pass of FBGEMM's vectorised quantize: the quint8 tensor is only
  // its carrier, read as plain uint8 bytes below and freed with them. (ATen's mul/round/clamp/cast
  // chain makes 5 passes and ran about 10× slower at 1024 × 384.)
  const auto [x_scale, x_zero_point] = at::_choose_qparams_per_tensor(x2, /*reduce_range=*/false);
  const auto carrier = at::quantize_per_tensor(x2, x_scale, x_zero_point, torch::kQUInt8);
  const auto qx = torch::from_blob(
      carrier.data_ptr(), x2.sizes(), [carrier](void*) {}, torch::TensorOptions().dtype(torch::kByte));  // (M, in)
  auto y = qlinear(qx, x_scale, x_zero_point, packed, w, bias, gelu);  // (M, out)
  auto shape = x.sizes().vec();
  shape.back() = y.size(1);
  return y.view(shape);
}

}  // namespace attnbench
