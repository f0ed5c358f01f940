// "linear": "packed": every encoder linear on weights pre-packed once for this CPU's GEMM, as ONNX
// Runtime does when it loads a model (and TorchInductor when it freezes one): an ATen linear hands
// MKL a plain weight and MKL packs it again on every call: on a Zen 3 a minilm layer's four GEMMs at
// 1024 rows ran 1.37× faster pre-packed (results/cpu-peer-gemm-zen3/, scripts/peer_gemm.py), and
// the model 1.08-1.18× (results/cpu-peer-compare-zen3-packed-r5/). The FFN's bias and GELU are fused
// into its first GEMM. CPU, inference.
//
// The packing follows the variant's precision:
//   fp32                         fp32 weights, oneDNN's fp32 GEMM;
//   "amp" / "amp-bf16" (bf16)    the linears cast to bf16 once, packed for oneDNN's bf16 GEMM (AMX or
//                                AVX512_BF16), the rest of the model under autocast as the plain AMP
//                                path runs it (techniques/plain_executor.hpp);
//   "bf16" (the cast)            the whole model cast to bf16 (techniques/cast_precision.cpp), its
//                                linears packed in bf16: the one combination of two registered values
//                                in a variant (technique_option::combines_with), run by this file.
// bf16 packing needs avx512_bf16 or amx_bf16 (model/packed_linear.hpp: packed_dtype_unavailable):
// elsewhere the variant is SKIPPED with the reason; "amp" resolved to fp32 (a Zen 3) packs fp32.
//
// The whole technique is this file and model/packed_linear.hpp (the oneDNN calls the encoder's
// linear sites make once weights are packed): its config value (config/technique_catalog.hpp), its
// executor (techniques/registry.hpp) and its metrics (report/metric.hpp).
#include <fmt/format.h>

#include "common/cpu_info.hpp"
#include "config/technique_catalog.hpp"
#include "model/encoder.hpp"
#include "model/linear_cast.hpp"
#include "model/packed_linear.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/precision.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "packed-linear";

bool bf16_cast(const variant_config& v) {
  const auto it = v.techniques.find("precision");
  return it != v.techniques.end() && it->second == "bf16";
}

// The linears are packed in the plan's dtype: the cast's, autocast's, or fp32.
void prepare(EncoderClassifier& copy, const resolved_precision& precision) {
  if (!precision.autocast && precision.dtype != "fp32") {
    copy->to(precision.activations);  // the bf16 cast: the whole copy
  } else if (precision.autocast) {
    cast_linear_layers(*copy, *precision.autocast);
  }
  copy->pack_linears(linear_kind::packed);
}

class packed_executor : public model_copy_executor {
 public:
  packed_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                  const variant_plan& p, bool causal)
      : model_copy_executor(model, device, v, p, causal,
                            [&p](EncoderClassifier& copy) { prepare(copy, p.precision); }),
        dtype_(p.precision.dtype) {}

 protected:
  void do_annotate(variant_result& r) override {
    set_metric(r.metrics, {"pack_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           fmt::format("one-off time to copy the model{} and pre-pack its linear weights for oneDNN "
                                       "in {}, before any pass (not in the timed passes)",
                                       dtype_ == "fp32" ? "" : " (cast to " + dtype_ + ")", dtype_),
                           ""});
  }

 private:
  std::string dtype_;
};

class packed_linear : public technique {
 public:
  std::string name() const override { return technique_name; }
  void plan(const config& cfg, const variant_config& v, torch::Device device,
            variant_plan& p) const override {
    // The core precision (fp32, or autocast's) unless the variant also chose the bf16 cast.
    if (bf16_cast(v)) {
      p.precision = technique_precision(cfg, "bf16", torch::kBFloat16);
      p.description =
          "weights and activations cast once to bf16 (no autocast), linears on weights pre-packed once "
          "for oneDNN in bf16, bias and GELU fused";
    } else if (p.precision.autocast) {
      p.description =
          fmt::format("autocast {}, linears cast to {} once and pre-packed for oneDNN, bias and GELU fused",
                      p.precision.dtype, p.precision.dtype);
    } else {
      p.description = "linears on weights pre-packed once for oneDNN, bias and GELU fused (fp32)";
    }
    if (!device.is_cpu())
      p.skip_reason = fmt::format(
          "\"linear\": \"packed\" runs on the CPU only (oneDNN's CPU GEMM); this run's device is {}",
          device.str());
    else if (auto missing = packed_linear_unavailable())
      p.skip_reason = missing;
    else
      p.skip_reason = packed_dtype_unavailable(p.precision.dtype, this_cpu().features);
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                               const variant_config& v, const variant_plan& p,
                                               bool causal) const override {
    return std::make_unique<packed_executor>(model, device, v, p, causal);
  }
};

const bool registered = [] {
  technique_option o;
  o.key = "linear";
  o.value = "packed";
  o.technique = technique_name;
  o.summary = "runs a copy of the model with its linear weights pre-packed for oneDNN (CPU, inference; fp32, or bf16 "
              "under amp or the bf16 cast)";
  o.scenarios = {"offline", "server"};
  o.excludes = {"offload", "parallel", "pipeline"};
  o.precisions = {"fp32", "amp", "amp-bf16"};
  o.combines_with = {{"precision", "bf16"}};
  register_technique_option(o);
  register_technique(std::make_unique<packed_linear>());
  return true;
}();

}  // namespace
}  // namespace attnbench
