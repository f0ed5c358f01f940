// The plain executor under autocast (techniques/plain_executor.hpp): its linears cast once when it
// is made, not by autocast on every call. Validated against plain autocast on the same model before
// anything times it: the outputs equal, the shared model untouched, only the linears cast.
#include <catch2/catch.hpp>

#include <torch/cuda.h>

#include "config/config_parser.hpp"
#include "model/linear_cast.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "techniques/executor_batch.hpp"
#include "techniques/precision.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

const char* amp_run = R"({
  "name": "amp-test",
  "model": {"preset": "bert-tiny", "seed": 7},
  "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 3},
  "measure": {"warmup": 1, "repetitions": 2},
  "device": "cpu",
  "variants": [
    {"name": "fp32", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "amp-bf16", "precision": "amp-bf16", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "amp-bf16-naive", "precision": "amp-bf16", "attention": "naive", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "amp-fp16", "precision": "amp-fp16", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}}
  ],
  "baseline": "fp32",
  "output": {"dir": "unused"}
})";

double max_abs(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// What autocast would cast on every call: every linear's weight and bias.
int64_t linear_parameter_count(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& sub : m.modules())
    if (sub->as<torch::nn::Linear>())
      for (const auto& p : sub->parameters(/*recurse=*/false)) n += p.numel();
  return n;
}

}  // namespace

TEST_CASE("plain executor: autocast on linears cast once equals autocast casting them every call",
          "[techniques][precision]") {
  const config cfg = attnbench::testing::parse_owned(amp_run, "", testing::cpu_only());
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  const std::string checksum = weight_checksum(*model);
  const batch b = testing::padded_batch(5, 20, 2, 9);
  for (const char* name : {"amp-bf16", "amp-bf16-naive", "amp-fp16"}) {
    const variant_config& v = *find_variant(cfg, name);
    INFO(name);
    model->set_attention({v.attention, v.backend, false, v.kernel});
    torch::Tensor reference;
    {
      const autocast_scope amp(autocast_dtype(v.precision),
                               torch::kCPU);  // autocast casting every weight per call
      reference = model->forward(b.input_ids, b.padding_mask);
    }
    auto exec = testing::planned_executor(model, torch::kCPU, cfg, v);
    const auto out = exec->forward(b);
    REQUIRE(out.sizes() == reference.sizes());
    // The same roundings of the same weights feeding the same kernels: measured equal (0) on a Zen 4
    // for every variant here; a small bound keeps the test about numerics, not kernel choice.
    CHECK(max_abs(out, reference) <= 1e-6 * reference.abs().max().item<double>());
    variant_result r;
    exec->annotate(r);
    const metric* bytes = find_metric(r.metrics, "amp_weight_bytes");
    REQUIRE(bytes != nullptr);
    CHECK(bytes->value == static_cast<double>(linear_parameter_count(*model) * 2));  // 16-bit copies
    const metric* ms = find_metric(r.metrics, "amp_cast_ms");
    REQUIRE(ms != nullptr);
    CHECK(ms->value > 0);
  }
  CHECK(weight_checksum(*model) == checksum);  // the shared model still holds its fp32 weights
  for (const auto& p : model->parameters()) CHECK(p.scalar_type() == torch::kFloat);
}

TEST_CASE("plain executor: cast_linear_layers casts the linears and nothing else", "[techniques][precision][model]") {
  const config cfg = attnbench::testing::parse_owned(amp_run, "", testing::cpu_only());
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  const int64_t expected = linear_parameter_count(*model) * 2;
  CHECK(cast_linear_layers(*model, torch::kBFloat16) == expected);
  for (const auto& item : model->named_parameters()) {
    INFO(item.key());
    const bool in_linear = item.key().find("norm") == std::string::npos &&
                           item.key().find("embeddings") == std::string::npos;
    CHECK(item.value().scalar_type() == (in_linear ? torch::kBFloat16 : torch::kFloat));
  }
}

TEST_CASE("plain executor: fp32 runs the shared model itself and reports no cast", "[techniques][precision]") {
  const config cfg = attnbench::testing::parse_owned(amp_run, "", testing::cpu_only());
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  const variant_config& v = *find_variant(cfg, "fp32");
  auto exec = testing::planned_executor(model, torch::kCPU, cfg, v);
  const batch b = testing::padded_batch(5, 20, 2, 9);
  model->set_attention({v.attention, v.backend, false, v.kernel});
  CHECK(max_abs(exec->forward(b), model->forward(b.input_ids, b.padding_mask)) == 0);
  variant_result r;
  exec->annotate(r);
  CHECK(find_metric(r.metrics, "amp_weight_bytes") == nullptr);
}
