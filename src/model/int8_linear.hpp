// int8 linear layers through oneDNN, as TorchInductor's x86 quantization lowers them: weights
// quantized once, symmetric per output channel, and reordered for oneDNN's int8 matmul
// (onednn::qlinear_prepack); activations quantized per call, asymmetric per tensor, to uint8; the
// u8·s8 product accumulated in int32 and dequantized to fp32 with the bias and an optional exact
// (erf) GELU fused into the matmul's epilogue (onednn::qlinear_pointwise, fp32 output).
//
// Why this path and not the others LibTorch 2.11 offers from C++ (measured on a Zen 3,
// results/cpu-int8-zen3/): FBGEMM's quantized::linear_prepack / linear_dynamic take their weights
// as torch.ao quantized tensors (qint8), the dtypes being deprecated upstream, and its packed
// parameters are a TorchScript custom class (its GEMM alone timed about as fast as oneDNN's here);
// at::_int_mm on the CPU ran 7-41× slower than fp32 and leaves the dequantization to separate
// passes (results/cpu-int8-zen3/int8_paths.txt, a shared machine: noisy). The oneDNN
// operators take plain int8/uint8 tensors with explicit scales, are what torch.compile's x86
// int8 path emits (so they are maintained), and pick AMX-INT8, AVX512-VNNI or AVX-VNNI at run
// time where the CPU has them.
//
// Saturation: without VNNI (AVX2 only, a Zen 3) oneDNN multiplies u8·s8 with vpmaddubsw, which
// sums pairs of products into int16 with saturation: 2·255·127 = 64770 > 32767, so large
// activations against large weights come out wrong (measured: half the exact value). Weights are
// then quantized to 7 bits ([-63, 63]: 2·255·63 = 32130 fits), the remedy oneDNN documents ("Nuances
// of int8 computations"). FBGEMM's reduce_range narrows the activations instead; emulated on
// minilm-l6's dims, 7-bit weights moved the logits less (rel. L2 1.0e-2 against 1.4e-2,
// results/cpu-int8-zen3/emulate_int8.txt): per-channel weights have no outliers to lose a bit
// to, per-tensor activations do. Whether to narrow is decided by running the saturating case
// once (int8_gemm_saturates), not by a CPU table.
//
// The quantized weight lives in the torch::nn::Linear it belongs to, as buffers beside its fp32
// weight (quantize_linear), so the encoder's linear sites need no new member: packing such a
// linear (model/packed_linear.hpp: pack_linear) prepacks its int8 weight, and its forward runs
// int8_linear.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

namespace attnbench {

// A linear's weight quantized symmetric per output channel.
struct int8_linear_weight {
  torch::Tensor weight;      // (out, in) int8
  torch::Tensor scale;       // (out) float32: weight ≈ q · scale[row]
  torch::Tensor zero_point;  // (out) int64 zeros (symmetric)
};

// Why int8 linears cannot run in this LibTorch (its oneDNN int8 operators are not registered),
// or nullopt when they can.
std::optional<std::string> int8_linear_unavailable();

// Whether this CPU's oneDNN int8 matmul saturates on full-range u8·s8 (no VNNI): runs the case once
// (255 against 127 over 64 terms) and caches the answer.
bool int8_gemm_saturates();

// The weight bits that keep the GEMM exact: 8, or 7 when it saturates.
int int8_weight_bits(bool saturates);

// weight: (out, in) float32 on the CPU → quantized symmetric per output channel to `bits` bits
// (8: [-127, 127], 7: [-63, 63]), a zero row getting scale 1.
int8_linear_weight quantize_weight(const torch::Tensor& weight, int bits);

// The quantized weight as float32 (q · scale): what the int8 GEMM multiplies by (for tests).
torch::Tensor dequantize_weight(const int8_linear_weight& w);

// Stores quantize_weight(linear.weight, bits) in `linear` as buffers; its fp32 weight and bias stay.
void quantize_linear(torch::nn::LinearImpl& linear, int bits);

// The quantized weight quantize_linear stored in `linear`, or nullopt.
std::optional<int8_linear_weight> quantized_weight_of(const torch::nn::Module& linear);

// int8 (out, in) → an opaque oneDNN int8 tensor for int8_linear.
torch::Tensor prepack_int8_weight(const torch::Tensor& weight);

// x (..., in) float32 → (..., out) float32: x quantized to uint8 per tensor (its own min and max,
// 0 included), times the prepacked int8 weight in int32, dequantized by x's scale and the weight's
// per-row `scale`, plus bias, then GELU (erf) when `gelu`.
torch::Tensor int8_linear(const torch::Tensor& x, const torch::Tensor& packed, const int8_linear_weight& w,
                          const torch::Tensor& bias, bool gelu);

}  // namespace attnbench
