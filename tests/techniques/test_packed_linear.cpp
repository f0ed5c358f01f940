// "linear": "packed" (techniques/packed_linear.cpp, model/packed_linear.hpp), validated against
// ATen's linears before any timing: the packed GEMM with its fused bias and GELU, the whole model
// under each attention core, the config rules, and a run that checks it against the baseline.
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/cpu_info.hpp"
#include "config/config_parser.hpp"
#include "config/technique_catalog.hpp"
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

ordered_json packed_run() {
  return ordered_json::parse(R"({
  "name": "packed-test",
  "model": {"preset": "bert-tiny", "seed": 7},
  "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 3},
  "measure": {"warmup": 1, "repetitions": 2},
  "device": "cpu",
  "variants": [
    {"name": "naive", "attention": "naive", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "naive-packed", "attention": "naive", "linear": "packed", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "sdpa-packed", "attention": "sdpa", "linear": "packed", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "custom-packed", "attention": "custom", "linear": "packed", "batching": {"batch_size": 4, "padding": "longest"}}
  ],
  "baseline": "naive",
  "output": {"dir": "unused"}
})");
}

using testing::problem_at;

}  // namespace

TEST_CASE("packed linear: the oneDNN GEMM with fused bias and GELU matches ATen's", "[techniques][packed]") {
  REQUIRE_FALSE(packed_linear_unavailable().has_value());
  torch::InferenceMode guard;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  // Odd sizes (no multiple of a vector width) and a 3-D input, as the encoder passes (B, S, H).
  const auto w = at::randn({19, 37}, gen);
  const auto b = at::randn({19}, gen);
  const auto x = at::randn({3, 5, 37}, gen);
  const auto packed = pack_linear_weight(w);
  const auto plain = torch::nn::functional::linear(x, w, b);
  const auto y = packed_linear(x, packed, b, false);
  REQUIRE(y.sizes() == plain.sizes());
  CHECK(rel_l2(y, plain) < 1e-6);
  CHECK(rel_l2(packed_linear(x, packed, b, true), torch::gelu(plain)) < 1e-6);  // exact (erf) GELU
  CHECK(rel_l2(packed_linear(x, packed, torch::Tensor(), false), torch::nn::functional::linear(x, w)) < 1e-6);
  // Not the tanh approximation: the two differ by far more than the bound above.
  CHECK(rel_l2(torch::gelu(plain, "tanh"), torch::gelu(plain)) > 1e-5);
  CHECK_THROWS_WITH(pack_linear_weight(w.to(torch::kDouble)), Catch::Contains("float32 or bfloat16 on the CPU"));
}

TEST_CASE("packed linear: which dtypes pack on which CPU, from the features alone", "[techniques][packed]") {
  // Injected machines: a Zen 3, a Zen 4 and a Sapphire Rapids as common/cpu_info lists them.
  const std::vector<std::string> zen3{"avx2", "fma", "f16c"};
  const std::vector<std::string> zen4{"avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16"};
  const std::vector<std::string> spr{"avx2",        "fma",         "f16c",     "avx512f", "avx512_vnni",
                                     "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"};
  CHECK_FALSE(packed_dtype_unavailable("fp32", zen3).has_value());
  const auto on_zen3 = packed_dtype_unavailable("bf16", zen3);
  REQUIRE(on_zen3.has_value());
  CHECK(*on_zen3 == "pre-packed bf16 linears need a CPU with avx512_bf16 or amx_bf16 (oneDNN's bf16 GEMM); this "
                    "CPU has avx2 fma f16c");
  CHECK_FALSE(packed_dtype_unavailable("bf16", zen4).has_value());
  CHECK_FALSE(packed_dtype_unavailable("bf16", spr).has_value());
  CHECK(packed_dtype_unavailable("bf16", {}).value().find("none of the features") != std::string::npos);
  CHECK(packed_dtype_unavailable("fp16", spr).value() == "pre-packed linears run in fp32 or bf16 only, not fp16");
}

TEST_CASE("packed linear: bf16 weights match ATen's bf16 linear, GELU fused in fp32", "[techniques][packed]") {
  if (auto why = packed_dtype_unavailable("bf16", this_cpu().features)) {
    testing::skip_test(*why);
    return;
  }
  torch::InferenceMode guard;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
  const auto w = at::randn({48, 64}, gen).to(torch::kBFloat16);
  const auto b = at::randn({48}, gen).to(torch::kBFloat16);
  const auto x = at::randn({3, 7, 64}, gen);
  const auto packed = pack_linear_weight(w);
  CHECK(packed.scalar_type() == torch::kBFloat16);
  // An fp32 input is cast to bf16 first, as autocast casts a linear's input.
  const auto plain = torch::nn::functional::linear(x.to(torch::kBFloat16), w, b);  // (3, 7, 48) bf16
  const auto y = packed_linear(x, packed, b, false);
  REQUIRE(y.scalar_type() == torch::kBFloat16);
  REQUIRE(y.sizes() == plain.sizes());
  // Both accumulate in fp32 and round once: measured equal on a Zen 4; bf16's half-ulp (2^-9) bounds it.
  CHECK(rel_l2(y.to(torch::kFloat), plain.to(torch::kFloat)) < 4e-3);
  // The fused GELU rounds once where ATen's linear-then-GELU rounds twice: within bf16's rounding.
  const auto gelu_ref = torch::gelu(plain.to(torch::kFloat) + 0);
  CHECK(rel_l2(packed_linear(x, packed, b, true).to(torch::kFloat), gelu_ref) < 8e-3);
}

TEST_CASE("packed linear: bf16 packing under amp and the bf16 cast matches the same model unpacked",
          "[techniques][packed][precision]") {
  if (auto why = packed_dtype_unavailable("bf16", this_cpu().features)) {
    testing::skip_test(*why);
    return;
  }
  auto doc = packed_run();
  doc["variants"][1]["precision"] = "amp-bf16";  // naive-packed
  doc["variants"][2]["precision"] = "amp-bf16";  // sdpa-packed
  doc["variants"][3]["precision"] = "bf16";      // custom-packed
  doc["variants"].push_back({{"name", "sdpa-amp"}, {"precision", "amp-bf16"}, {"attention", "sdpa"},
                             {"batching", {{"batch_size", 4}, {"padding", "longest"}}}});
  doc["variants"].push_back({{"name", "custom-cast"}, {"precision", "bf16"}, {"attention", "custom"},
                             {"batching", {{"batch_size", 4}, {"padding", "longest"}}}});
  doc["variants"].push_back({{"name", "naive-amp"}, {"precision", "amp-bf16"}, {"attention", "naive"},
                             {"batching", {{"batch_size", 4}, {"padding", "longest"}}}});
  const config cfg = testing::parse(doc);
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  const batch b = testing::padded_batch(5, 20, 2, 9);
  const std::string checksum = weight_checksum(*model);
  for (const auto& [packed, unpacked] : std::vector<std::pair<const char*, const char*>>{
           {"naive-packed", "naive-amp"}, {"sdpa-packed", "sdpa-amp"}, {"custom-packed", "custom-cast"}}) {
    INFO(packed << " against " << unpacked);
    const auto ref =
        testing::planned_executor(model, torch::kCPU, cfg, *find_variant(cfg, unpacked))->forward(b);
    const auto out =
        testing::planned_executor(model, torch::kCPU, cfg, *find_variant(cfg, packed))->forward(b);
    REQUIRE(out.sizes() == ref.sizes());
    // The same bf16 weights; only the fused GELU's single rounding (and the GEMMs' blocking) differ.
    CHECK(rel_l2(out, ref) < 1e-2);
  }
  CHECK(weight_checksum(*model) == checksum);
}

TEST_CASE("packed linear: registered, fp32, and its config rules", "[techniques][packed][config]") {
  const config cfg = testing::parse(packed_run());
  const variant_config& v = *find_variant(cfg, "sdpa-packed");
  const variant_plan p = plan_variant(cfg, v, torch::kCPU);
  REQUIRE(p.owner != nullptr);
  CHECK(p.owner->name() == "packed-linear");
  const variant_plan naive = plan_variant(cfg, *find_variant(cfg, "naive"), torch::kCPU);
  CHECK(naive.owner == nullptr);
  CHECK(p.precision.label == "fp32");
  CHECK(p.precision.dtype == "fp32");
  CHECK(p.precision.tolerance == naive.precision.tolerance);
  CHECK(p.skip_reason == std::nullopt);
  const auto on_gpu = plan_variant(cfg, v, torch::Device(torch::kCUDA, 0)).skip_reason;
  REQUIRE(on_gpu.has_value());
  CHECK(on_gpu->find("CPU only") != std::string::npos);

  auto doc = packed_run();
  SECTION("a value it does not have") {
    doc["variants"][2]["linear"] = "pakced";
    CHECK(problem_at(doc, "variants[2].linear") == "expected one of packed; got \"pakced\"");
  }
  SECTION("a precision it does not pack in") {
    doc["variants"][2]["precision"] = "amp-fp16";
    CHECK(problem_at(doc, "variants[2].linear") ==
          "\"linear\" \"packed\" runs under precision fp32, amp, amp-bf16 only; this variant's precision is "
          "\"amp-fp16\" (runs a copy of the model with its linear weights pre-packed for oneDNN (CPU, inference; "
          "fp32, or bf16 under amp or the bf16 cast))");
  }
  SECTION("a registered value it does not combine with") {
    doc["variants"][2]["precision"] = "fp16";
    const std::string message = problem_at(doc, "variants[2].precision");
    CHECK(message.find("one technique per variant") != std::string::npos);
    CHECK(message.find("combinable: \"linear\" \"packed\" with \"precision\" \"bf16\"") != std::string::npos);
  }
  SECTION("amp and the bf16 cast are packed in bf16, by this technique") {
    doc["variants"][2]["precision"] = "amp-bf16";
    doc["variants"][3]["precision"] = "bf16";
    const config mixed = testing::parse(doc);
    const variant_config& amp = *find_variant(mixed, "sdpa-packed");
    const variant_config& cast = *find_variant(mixed, "custom-packed");
    const variant_plan amp_plan = plan_variant(mixed, amp, torch::kCPU);
    const variant_plan cast_plan = plan_variant(mixed, cast, torch::kCPU);
    REQUIRE(amp_plan.owner != nullptr);
    REQUIRE(cast_plan.owner != nullptr);
    CHECK(amp_plan.owner->name() == "packed-linear");
    CHECK(cast_plan.owner->name() == "packed-linear");
    CHECK(amp_plan.precision.dtype == "bf16");
    CHECK(cast_plan.precision.dtype == "bf16");
    CHECK(cast_plan.precision.label == "bf16");
    CHECK(amp_plan.precision.label == "amp-bf16");
    CHECK(amp_plan.precision.autocast == torch::kBFloat16);
    CHECK_FALSE(cast_plan.precision.autocast.has_value());
    CHECK(cast_plan.precision.tolerance == find_technique_option("precision", "bf16")->default_tolerance);
    CHECK(amp_plan.precision.tolerance == mixed.check.tolerance.at(precision_kind::amp_bf16));
  }
  SECTION("a block it cannot be combined with") {
    doc["variants"][2]["offload"] = {{"target", "cpu"}};
    CHECK(problem_at(doc, "variants[2].linear").find("not supported together with offload") != std::string::npos);
  }
}

TEST_CASE("packed linear: the executor's outputs match the ATen model under every attention core",
          "[techniques][packed]") {
  const config cfg = testing::parse(packed_run());
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  const batch b = testing::padded_batch(5, 20, 2, 9);
  const std::string checksum = weight_checksum(*model);
  for (const char* name : {"naive-packed", "sdpa-packed", "custom-packed"}) {
    const variant_config& v = *find_variant(cfg, name);
    model->set_attention({v.attention, v.backend, false, v.kernel});
    const auto reference = model->forward(b.input_ids, b.padding_mask);
    auto exec = testing::planned_executor(model, torch::kCPU, cfg, v);
    const auto out = exec->forward(b);
    INFO(name);
    REQUIRE(out.sizes() == reference.sizes());
    CHECK(rel_l2(out, reference) < 1e-5);  // fp32 either way: only the GEMMs' summation order differs
    variant_result r;
    exec->annotate(r);
    const metric* pack = find_metric(r.metrics, "pack_ms");
    REQUIRE(pack != nullptr);
    CHECK(pack->value > 0);
  }
  CHECK(weight_checksum(*model) == checksum);  // the shared model is untouched
}

TEST_CASE("packed linear: a run checks it against the baseline, and a perturbed one fails",
          "[techniques][packed][runner]") {
  const config cfg = testing::parse(packed_run());
  run_options opts;
  opts.measure_ceilings = false;
  opts.perturb_variant = "sdpa-packed";
  const run_result r = run_experiment(cfg, opts).result;
  REQUIRE(r.variants.size() == 4);
  for (const auto& v : r.variants) {
    INFO(v.name << ": " << v.reason);
    CHECK(v.status == (v.name == "sdpa-packed" ? status_kind::fail : status_kind::pass));
    if (v.name != "naive") {
      CHECK(v.precision == "fp32");
      CHECK(v.description.find("pre-packed") != std::string::npos);
      CHECK(find_metric(v.metrics, "pack_ms") != nullptr);
    }
  }
}
