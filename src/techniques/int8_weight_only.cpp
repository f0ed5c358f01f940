// "precision": "int8-weight-only": every encoder or decoder block linear on int8 weights (symmetric
// per output channel, quantized once before any pass) and fp32 activations, through attnbench's
// own kernel (kernels/cpu/int8_gemv.hpp), which widens each weight to fp32 in registers as it reads
// it. Nothing about the activations is quantized, so this is the weight error alone; what it buys is
// bytes: one per weight instead of four, which is what a decode step, bound by the memory bandwidth,
// spends its time reading (docs/generate.md). llama.cpp's Q8_0 and torchao's int8_weight_only make
// the same trade; "precision": "int8" (techniques/int8_quantization.cpp) quantizes the activations
// too and runs oneDNN's int8 GEMM, for compute-bound products.
//
// CPU, inference. Its class is int8's (common/precision_classes.hpp): the same tolerance, fixed
// before the run, and for a decoder the same token rule as every other variant.
#include <fmt/format.h>

#include "common/precision_classes.hpp"
#include "config/technique_catalog.hpp"
#include "kernels/cpu/flash_attention.hpp"
#include "kernels/cpu/int8_gemv.hpp"
#include "model/encoder.hpp"
#include "model/int8_linear.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "int8-weight-only";

void prepare(EncoderClassifier& copy) {
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < copy->num_layers(); ++i)
    for (const auto& m : copy->layer(i)->modules(/*include_self=*/false))
      if (auto* linear = m->as<torch::nn::Linear>()) quantize_linear(*linear, 8);
  copy->pack_linears(linear_kind::int8_weight);
}

class int8_weight_executor : public model_copy_executor {
 public:
  int8_weight_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                       const variant_plan& p, bool causal)
      : model_copy_executor(model, device, v, p, causal, [](EncoderClassifier& copy) { prepare(copy); }),
        hidden_(model->config().hidden) {}

 protected:
  void do_annotate(variant_result& r) override {
    set_metric(r.metrics, {"quantize_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           "one-off time to copy the model and quantize its encoder linears' weights to int8, "
                           "before any pass (not in the timed passes)",
                           ""});
    r.notes.push_back(fmt::format("int8 weight-only kernel: the {} code path (kernels/cpu/int8_gemv.hpp)",
                                  to_string(int8_weight_linear_path(hidden_))));
  }

 private:
  int64_t hidden_;
};

class int8_weight_only : public technique {
 public:
  std::string name() const override { return technique_name; }
  void plan(const config& cfg, const variant_config&, torch::Device device, variant_plan& p) const override {
    p.precision = technique_precision(cfg, technique_name, torch::kFloat);
    p.precision.dtype = "int8";  // the weights' dtype: its class and its (absent) float GEMM ceiling
    p.description =
        cfg.model.family == model_family::bert
            ? "encoder linears on int8 weights (per output channel, quantized once), widened to fp32 as they are "
              "read; activations and everything else fp32"
            : "the decoder blocks' linears on int8 weights (per output channel, quantized once), widened to fp32 "
              "as they are read; activations, attention, norms, the KV cache and the LM head fp32";
    if (!device.is_cpu())
      p.skip_reason = fmt::format(
          "\"precision\": \"int8-weight-only\" runs on the CPU only (attnbench's CPU kernel); this run's device is {}",
          device.str());
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                               const variant_config& v, const variant_plan& p,
                                               bool causal) const override {
    return std::make_unique<int8_weight_executor>(model, device, v, p, causal);
  }
};

const bool registered = [] {
  technique_option o;
  o.key = "precision";
  o.value = technique_name;
  o.technique = technique_name;
  o.summary = "runs a copy of the model whose block linears read int8 weights and compute on fp32 activations "
              "(CPU, inference; for memory-bound decoding)";
  o.default_tolerance = precision_class_of("int8").tolerance;
  o.scenarios = {"offline", "server", "generate"};
  o.excludes = {"offload", "parallel", "pipeline"};
  register_technique_option(o);
  register_technique(std::make_unique<int8_weight_only>());
  return true;
}();

}  // namespace
}  // namespace attnbench
