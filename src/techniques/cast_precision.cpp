// "precision": "bf16" | "fp16": the whole model cast once to a 16-bit dtype, weights and
// activations alike, with no autocast. Autocast (the "AMP" rows) keeps fp32 weights and, in
// inference mode, casts each weight again on every call; a cast copy pays that once, halves the
// weights' bytes, and also runs LayerNorm, softmax and the residual adds in 16 bits, which costs
// accuracy: hence its own, looser tolerance.
//
// The whole technique is this file: its config values and tolerance (config/technique_catalog.hpp),
// its executor (techniques/registry.hpp), and its metrics (report/metric.hpp), which every report
// renders without knowing it.
#include <fmt/format.h>

#include "common/precision_classes.hpp"
#include "config/technique_catalog.hpp"
#include "model/encoder.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "cast-precision";

// A cast rounds every op to the dtype (LayerNorm and softmax included), more than autocast does,
// but it is the same precision class: the class's tolerance, fixed before the run
// (common/precision_classes.hpp), as for every other variant of that class.
const double bf16_tolerance = precision_class_of("bf16").tolerance;
const double fp16_tolerance = precision_class_of("fp16").tolerance;

torch::Dtype dtype_of(const variant_config& v) {
  const auto it = v.techniques.find("precision");
  return it != v.techniques.end() && it->second == "fp16" ? torch::kHalf : torch::kBFloat16;
}

int64_t parameter_bytes(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += static_cast<int64_t>(p.nbytes());
  return n;
}

class cast_executor : public model_copy_executor {
 public:
  cast_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                const variant_plan& p, bool causal)
      : model_copy_executor(model, device, v, p, causal,
                            [&p](EncoderClassifier& copy) { copy->to(p.precision.activations); }),
        dtype_name_(p.precision.dtype),
        fp32_bytes_(parameter_bytes(*model)),
        cast_bytes_(parameter_bytes(*copy())) {}

 protected:
  void do_annotate(variant_result& r) override {
    set_metric(r.metrics, {"cast_weight_bytes", static_cast<double>(cast_bytes_), metric_unit::bytes,
                           metric_direction::lower_is_better, technique_name,
                           fmt::format("parameters held in {} (the fp32 model's: {:.1f} MiB)", dtype_name_,
                                       static_cast<double>(fp32_bytes_) / (1024.0 * 1024.0)),
                           ""});
    set_metric(r.metrics, {"cast_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           "one-off time to copy and cast the weights, before any pass (not in the timed passes)",
                           ""});
  }

 private:
  std::string dtype_name_;
  int64_t fp32_bytes_ = 0;
  int64_t cast_bytes_ = 0;
};

class cast_precision : public technique {
 public:
  std::string name() const override { return technique_name; }
  void plan(const config& cfg, const variant_config& v, torch::Device, variant_plan& p) const override {
    const torch::Dtype dtype = dtype_of(v);
    p.precision = technique_precision(cfg, dtype_name(dtype), dtype);
    p.description = fmt::format("weights and activations cast once to {} (no autocast)", p.precision.dtype);
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                               const variant_config& v, const variant_plan& p,
                                               bool causal) const override {
    return std::make_unique<cast_executor>(model, device, v, p, causal);
  }
};

technique_option option(const std::string& value, double tolerance) {
  technique_option o;
  o.key = "precision";
  o.value = value;
  o.technique = technique_name;
  o.summary = fmt::format("casts a copy of the model to {} for the plain executor", value);
  o.default_tolerance = tolerance;
  o.scenarios = {"offline", "server", "generate"};
  o.excludes = {"offload", "parallel", "pipeline"};
  return o;
}

const bool registered = [] {
  register_technique_option(option("bf16", bf16_tolerance));
  register_technique_option(option("fp16", fp16_tolerance));
  register_technique(std::make_unique<cast_precision>());
  return true;
}();

}  // namespace
}  // namespace attnbench
