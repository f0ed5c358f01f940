// "precision": "int8" (techniques/int8_quantization.cpp, model/int8_linear.hpp), validated before
// any timing: the int8 GEMM against the same arithmetic in fp32 (exact up to summation order) and
// against ATen's fp32 linear (the quantization bound), the saturation this CPU's int8 path has or
// has not, the whole model against fp32, the config rules, and a run whose perturbed variant FAILs.
#include <catch2/catch.hpp>

#include "common/precision_classes.hpp"

#include "config/config_parser.hpp"
#include "config/technique_catalog.hpp"
#include "model/int8_linear.hpp"
#include "model/packed_linear.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "runner/runner.hpp"
#include "techniques/executor_batch.hpp"
#include "techniques/registry.hpp"
#include "techniques/variant_plan.hpp"
#include "tensor_support.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

using testing::rel_l2;

// x as the int8 path sees it: quantized to uint8 per tensor and back (the same qparams it picks).
torch::Tensor fake_quantized(const torch::Tensor& x) {
  const auto x2 = x.reshape({-1, x.size(-1)});
  const auto [scale, zero_point] = at::_choose_qparams_per_tensor(x2, false);
  return at::quantize_per_tensor(x, scale, zero_point, torch::kQUInt8).dequantize();
}

ordered_json int8_run() {
  return ordered_json::parse(R"({
  "name": "int8-test",
  "model": {"preset": "bert-tiny", "seed": 7},
  "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 3},
  "measure": {"warmup": 1, "repetitions": 2},
  "device": "cpu",
  "variants": [
    {"name": "naive", "attention": "naive", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "sdpa-int8", "precision": "int8", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "custom-int8", "precision": "int8", "attention": "custom", "batching": {"batch_size": 4, "padding": "longest"}}
  ],
  "baseline": "naive",
  "output": {"dir": "unused"}
})");
}

using testing::problem_at;

}  // namespace

TEST_CASE("int8 linear: the oneDNN int8 GEMM against fp32 arithmetic and ATen's linear", "[techniques][int8]") {
  REQUIRE_FALSE(int8_linear_unavailable().has_value());
  torch::InferenceMode guard;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
  // Odd sizes and a 3-D input, as the encoder passes (B, S, H); a zero row of weights.
  auto w = at::randn({19, 37}, gen) * 0.05;
  w[4].zero_();
  const auto b = at::randn({19}, gen);
  const auto x = at::randn({3, 5, 37}, gen);
  const int bits = int8_weight_bits(int8_gemm_saturates());
  const auto q = quantize_weight(w, bits);
  REQUIRE(q.weight.scalar_type() == torch::kChar);
  CHECK(q.weight.abs().max().item<int>() == (bits == 8 ? 127 : 63));  // symmetric: the row's max hits the bound
  CHECK(q.scale[4].item<float>() == 1.0f);                           // the zero row
  const auto packed = prepack_int8_weight(q.weight);
  const auto plain = torch::nn::functional::linear(x, w, b);
  const auto y = int8_linear(x, packed, q, b, false);
  REQUIRE(y.sizes() == plain.sizes());
  // The same quantized operands in fp32: exact but for summation order (and no saturation, with
  // the weight bits this CPU needs).
  const auto same_math = torch::nn::functional::linear(fake_quantized(x), dequantize_weight(q), b);
  CHECK(rel_l2(y, same_math) < 1e-5);
  CHECK(rel_l2(int8_linear(x, packed, q, b, true), torch::gelu(same_math)) < 1e-5);  // exact (erf) GELU fused
  CHECK(rel_l2(int8_linear(x, packed, q, torch::Tensor(), false),
               torch::nn::functional::linear(fake_quantized(x), dequantize_weight(q))) < 1e-5);
  // Against fp32: 8-bit activations over [min, max] (step ≈ 7/255) and 7- or 8-bit weights.
  CHECK(rel_l2(y, plain) < 3e-2);
  CHECK(rel_l2(y, plain) > 1e-4);  // it did quantize
  // Through the encoder's linear site: a linear carrying its int8 weight packs and runs it.
  torch::nn::Linear linear(37, 19);
  linear->weight.copy_(w);
  linear->bias.copy_(b);
  quantize_linear(*linear, bits);
  const prepared_linear site = pack_linear(linear, linear_kind::int8);
  CHECK(site.kind == linear_kind::int8);
  CHECK(site.weight.scalar_type() == torch::kChar);
  CHECK(rel_l2(linear_forward(linear, site, x), y) < 1e-6);
  // The kind is chosen by the plan, not read back from dtypes: a linear without its int8 weight
  // cannot be packed as int8.
  torch::nn::Linear fp32_linear(37, 19);
  CHECK_THROWS(pack_linear(fp32_linear, linear_kind::int8));
  CHECK_THROWS_WITH(quantize_weight(w, 6), Catch::Contains("8 or 7 bits"));
  CHECK_THROWS_WITH(quantize_weight(w.to(torch::kDouble), 8), Catch::Contains("2-D float32 on the CPU"));
}

TEST_CASE("int8 linear: full-range u8·s8 saturates without VNNI, and 7-bit weights do not", "[techniques][int8]") {
  torch::InferenceMode guard;
  CHECK(int8_weight_bits(true) == 7);
  CHECK(int8_weight_bits(false) == 8);
  // Activations at the top of uint8 (x ≥ 0: zero point 0, every value quantizes to 255 or near) times
  // weights at the top of int8: each product near 255 · 127, two of them overflow int16.
  const auto x = torch::full({4, 64}, 2.0) + torch::arange(64).to(torch::kFloat) * 1e-3;  // (4, 64)
  const auto w = torch::ones({8, 64});
  const auto exact = torch::nn::functional::linear(x, w);  // (4, 8), every entry ≈ 130
  for (int bits : {8, 7}) {
    const auto q = quantize_weight(w, bits);
    const auto y = int8_linear(x, prepack_int8_weight(q.weight), q, torch::Tensor(), false);
    const double err = rel_l2(y, exact);
    INFO(bits << " bits: rel. L2 " << err << "; this CPU's probe says it saturates: " << int8_gemm_saturates());
    if (bits == 7 || !int8_gemm_saturates())
      CHECK(err < 1e-2);
    else
      CHECK(err > 0.3);  // measured on a Zen 3: about half the exact value
  }
}

TEST_CASE("int8 quantization: registered, its tolerance, and its config rules", "[techniques][int8][config]") {
  const config cfg = testing::parse(int8_run());
  const variant_config& v = *find_variant(cfg, "sdpa-int8");
  const variant_plan p = plan_variant(cfg, v, torch::kCPU);
  REQUIRE(p.owner != nullptr);
  CHECK(p.owner->name() == "int8-quantization");
  CHECK(p.precision.label == "int8");
  CHECK(p.precision.dtype == "int8");
  CHECK(p.precision.activations == torch::kFloat);  // int8 linears take and give fp32
  CHECK_FALSE(p.precision.autocast.has_value());
  const technique_option* o = find_technique_option("precision", "int8");
  REQUIRE(o != nullptr);
  CHECK(p.precision.tolerance == o->default_tolerance);
  CHECK(o->default_tolerance == precision_class_of("int8").tolerance);  // the class's, in one place
  CHECK(p.skip_reason == std::nullopt);
  CHECK(
      plan_variant(cfg, v, torch::Device(torch::kCUDA, 0)).skip_reason ==
      "\"precision\": \"int8\" runs on the CPU only (oneDNN's CPU int8 matmul); this run's device is cuda:0");

  auto doc = int8_run();
  const std::string summary =
      "(runs a copy of the model whose encoder linears are dynamically quantized to int8 (CPU, inference))";
  SECTION("check.tolerances.int8 tightens the class's tolerance") {
    doc["check"] = {{"tolerances", {{"int8", 0.03}}}};
    const config c = testing::parse(doc);
    CHECK(plan_variant(c, *find_variant(c, "sdpa-int8"), torch::kCPU).precision.tolerance == 0.03);
  }
  SECTION("not with offload") {
    doc["variants"][1]["offload"] = {{"target", "cpu"}};
    CHECK(problem_at(doc, "variants[1].precision") ==
          "\"precision\" \"int8\" is not supported together with offload in one variant " + summary);
  }
  SECTION("not with parallel") {
    doc["variants"][1]["parallel"] = {{"devices", {"cpu", "cpu"}}};
    CHECK(problem_at(doc, "variants[1].precision") ==
          "\"precision\" \"int8\" is not supported together with parallel in one variant " + summary);
  }
  SECTION("not with the packed linears, which it replaces") {
    doc["variants"][1]["linear"] = "packed";
    const std::string message = problem_at(doc, "variants[1].precision");
    CHECK(message.find("one technique per variant") != std::string::npos);
    CHECK(message.find("\"precision\": \"int8\"") != std::string::npos);
  }
  SECTION("not in training") {
    doc["scenario"] = "train";
    CHECK(problem_at(doc, "variants[1].precision") ==
          "\"precision\" \"int8\" runs in the offline, server, generate scenarios only, not in \"train\"");
  }
}

TEST_CASE("int8 quantization: the executor's outputs against the fp32 model under every attention core",
          "[techniques][int8]") {
  const config cfg = testing::parse(int8_run());
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  const batch b = testing::padded_batch(5, 20, 2, 9);
  const std::string checksum = weight_checksum(*model);
  for (const char* name : {"sdpa-int8", "custom-int8"}) {
    const variant_config& v = *find_variant(cfg, name);
    model->set_attention({v.attention, v.backend, false, v.kernel});
    const auto reference = model->forward(b.input_ids, b.padding_mask);
    auto exec = testing::planned_executor(model, torch::kCPU, cfg, v);
    const auto out = exec->forward(b);
    INFO(name);
    REQUIRE(out.sizes() == reference.sizes());
    const double err = rel_l2(out, reference);
    CHECK(err < plan_variant(cfg, v, torch::kCPU).precision.tolerance);
    CHECK(err > 1e-5);  // quantized, not the fp32 model
    variant_result r;
    exec->annotate(r);
    const metric* quantize = find_metric(r.metrics, "quantize_ms");
    REQUIRE(quantize != nullptr);
    CHECK(quantize->value > 0);
    const metric* bits = find_metric(r.metrics, "int8_weight_bits");
    REQUIRE(bits != nullptr);
    CHECK(bits->value == int8_weight_bits(int8_gemm_saturates()));
  }
  CHECK(weight_checksum(*model) == checksum);  // the shared model is untouched
}

TEST_CASE("int8 quantization: a run checks it against the baseline, and a perturbed one fails",
          "[techniques][int8][runner]") {
  const config cfg = testing::parse(int8_run());
  run_options opts;
  opts.measure_ceilings = false;
  opts.perturb_variant = "custom-int8";
  const run_result r = run_experiment(cfg, opts).result;
  REQUIRE(r.variants.size() == 3);
  for (const auto& v : r.variants) {
    INFO(v.name << ": " << v.reason);
    CHECK(v.status == (v.name == "custom-int8" ? status_kind::fail : status_kind::pass));
    if (v.name != "naive") {
      CHECK(v.precision == "int8");
      CHECK(v.check.tolerance == precision_class_of("int8").tolerance);
      CHECK(find_metric(v.metrics, "quantize_ms") != nullptr);
    }
  }
}
