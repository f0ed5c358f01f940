// "precision": "int8": dynamic int8 quantization of every encoder linear, as ONNX Runtime's
// quantize_dynamic does it: each weight quantized once (symmetric, per output channel) before any
// pass, each activation quantized per call (asymmetric, per tensor, uint8, from its own min and
// max), the product in int32 on oneDNN's int8 matmul, dequantized to fp32 with the bias and the
// FFN's GELU fused (model/int8_linear.hpp says why oneDNN's operators and not FBGEMM's or
// at::_int_mm). Attention's own matmuls, softmax, LayerNorm, the embeddings, the pooler and the
// classifier stay fp32. CPU, inference.
//
// On a CPU without VNNI or AMX-INT8 oneDNN's u8·s8 product saturates (int16 pairs): the weights
// are then quantized to 7 bits. The technique probes that once (int8_gemm_saturates) and reports
// the weight bits and the probe's answer as metrics; ONEDNN_VERBOSE=1 names the ISA that ran.
//
// Quantization costs accuracy, so int8 has its own tolerance (check.tolerances.int8 overrides).
//
// The whole technique is this file and model/int8_linear.hpp: its config value and tolerance
// (config/technique_catalog.hpp), its executor (techniques/registry.hpp), its metrics (report/metric.hpp).
#include <fmt/format.h>

#include "common/precision_classes.hpp"
#include "config/technique_catalog.hpp"
#include "model/encoder.hpp"
#include "model/int8_linear.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "int8-quantization";

// The int8 class's tolerance, fixed before the run (common/precision_classes.hpp), checked by the
// same rule on the same model as every other row. Per GEMM, 8-bit per-tensor activations and 7- or
// 8-bit per-channel weights err about 1.2-1.8e-2 against ATen's fp32 linear on N(0, 1) inputs
// (results/cpu-int8-zen3/int8_paths.txt).
const double int8_tolerance = precision_class_of("int8").tolerance;

void prepare(EncoderClassifier& copy, int bits) {
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < copy->num_layers(); ++i)
    for (const auto& m : copy->layer(i)->modules(/*include_self=*/false))
      if (auto* linear = m->as<torch::nn::Linear>()) quantize_linear(*linear, bits);
  copy->pack_linears(linear_kind::int8);  // prepack their int8 weights (model/packed_linear.hpp)
}

class int8_executor : public model_copy_executor {
 public:
  int8_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                const variant_plan& p, bool causal, int bits)
      : model_copy_executor(model, device, v, p, causal,
                            [bits](EncoderClassifier& copy) { prepare(copy, bits); }),
        bits_(bits) {}

 protected:
  void do_annotate(variant_result& r) override {
    set_metric(r.metrics, {"quantize_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           "one-off time to copy the model, quantize its encoder linears' weights to int8 and prepack "
                           "them for oneDNN, before any pass (not in the timed passes)",
                           ""});
    set_metric(r.metrics,
               {"int8_weight_bits", static_cast<double>(bits_), metric_unit::count, metric_direction::neither,
                technique_name,
                bits_ == 8 ? "weights quantized to 8 bits: oneDNN's u8·s8 product did not saturate on this CPU "
                             "(VNNI or AMX-INT8, or an exact fallback)"
                           : "weights quantized to 7 bits: oneDNN's u8·s8 product saturated on this CPU (int16 "
                             "pairs without VNNI), probed once with 255 × 127",
                ""});
  }

 private:
  int bits_;
};

class int8_quantization : public technique {
 public:
  std::string name() const override { return technique_name; }
  void plan(const config& cfg, const variant_config&, torch::Device device, variant_plan& p) const override {
    // Attention, LayerNorm and the rest run fp32: activations stay fp32 between the int8 GEMMs.
    p.precision = technique_precision(cfg, "int8", torch::kFloat);
    // A decoder's blocks have no fused GELU (the generate scenario quantizes them, not an executor).
    p.description =
        cfg.model.family == model_family::bert
            ? "encoder linears on int8 weights (per output channel, quantized once) with activations quantized "
              "to uint8 per call (per tensor), oneDNN's int8 matmul, bias and GELU fused; the rest fp32"
            : "the decoder blocks' linears on int8 weights (per output channel, quantized once) with activations "
              "quantized to uint8 per call (per tensor), oneDNN's int8 matmul; attention, norms, the KV cache and "
              "the LM head fp32";
    if (!device.is_cpu())
      p.skip_reason = fmt::format(
          "\"precision\": \"int8\" runs on the CPU only (oneDNN's CPU int8 matmul); this run's device is {}",
          device.str());
    else
      p.skip_reason = int8_linear_unavailable();
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                               const variant_config& v, const variant_plan& p,
                                               bool causal) const override {
    return std::make_unique<int8_executor>(model, device, v, p, causal,
                                           int8_weight_bits(int8_gemm_saturates()));
  }
};

const bool registered = [] {
  technique_option o;
  o.key = "precision";
  o.value = "int8";
  o.technique = technique_name;
  o.summary = "runs a copy of the model whose encoder linears are dynamically quantized to int8 (CPU, inference)";
  o.default_tolerance = int8_tolerance;
  o.scenarios = {"offline", "server", "generate"};
  o.excludes = {"offload", "parallel", "pipeline"};
  register_technique_option(o);
  register_technique(std::make_unique<int8_quantization>());
  return true;
}();

}  // namespace
}  // namespace attnbench
