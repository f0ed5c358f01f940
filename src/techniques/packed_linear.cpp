// "linear": "packed": every encoder linear on weights pre-packed once for this CPU's GEMM, as ONNX
// Runtime does when it loads a model (and TorchInductor when it freezes one): an ATen linear hands
// MKL a plain weight and MKL packs it again on every call: on a Zen 3 a minilm layer's four GEMMs at
// 1024 rows ran 1.37× faster pre-packed (results/cpu-peer-gemm-zen3/, scripts/peer_gemm.py), and
// the model 1.08-1.18× (results/cpu-peer-compare-zen3-packed-r5/). The FFN's bias and GELU are fused
// into its first GEMM. fp32 on the CPU, inference.
//
// The whole technique is this file and model/packed_linear.hpp (the oneDNN calls the encoder's
// linear sites make once weights are packed): its config value (config/technique_catalog.hpp), its
// executor (techniques/registry.hpp) and its metrics (core/metric.hpp).
#include <fmt/format.h>

#include "config/technique_catalog.hpp"
#include "model/encoder.hpp"
#include "model/packed_linear.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "packed-linear";

class packed_executor : public model_copy_executor {
 public:
  packed_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v, bool causal)
      : model_copy_executor(model, device, v, causal, [](EncoderClassifier& copy) { copy->pack_linears(); }) {}

 protected:
  void do_annotate(variant_result& r) override {
    set_metric(r.metrics, {"pack_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           "one-off time to copy the model and pre-pack its linear weights for oneDNN, before "
                           "any pass (not in the timed passes)",
                           ""});
  }
};

class packed_linear : public technique {
 public:
  std::string name() const override { return technique_name; }
  std::string precision_label(const variant_config&) const override { return "fp32"; }
  std::string compute_dtype(const variant_config&) const override { return "fp32"; }
  std::string describe(const variant_config&) const override {
    return "linears on weights pre-packed once for oneDNN, bias and GELU fused (fp32)";
  }
  std::optional<std::string> skip_reason(const variant_config&, torch::Device device) const override {
    if (!device.is_cpu())
      return fmt::format("\"linear\": \"packed\" runs on the CPU only (oneDNN's CPU GEMM); this run's device is {}",
                         device.str());
    return packed_linear_unavailable();
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device, const variant_config& v,
                                               bool causal) const override {
    return std::make_unique<packed_executor>(model, device, v, causal);
  }
};

const bool registered = [] {
  technique_option o;
  o.key = "linear";
  o.value = "packed";
  o.technique = technique_name;
  o.summary = "runs a copy of the model with its linear weights pre-packed for oneDNN (fp32, CPU, inference)";
  o.scenarios = {"offline", "server"};
  o.excludes = {"offload", "parallel", "pipeline"};
  o.precisions = {"fp32"};
  register_technique_option(o);
  register_technique(std::make_unique<packed_linear>());
  return true;
}();

}  // namespace
}  // namespace attnbench
