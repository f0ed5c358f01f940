// The float64 study behind the check's rule (issue 37 part 2) and the one tolerance per precision
// class (part 3): random rounding lands on the format's grid without bias, the study's reference
// is the model in float64, its perturbed runs differ by the class's rounding, and a real bf16 run
// of the real model passes the check.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <ATen/CPUGeneratorImpl.h>

#include "cli/study_command.hpp"
#include "common/precision_classes.hpp"
#include "model/encoder.hpp"
#include "model/random_rounding.hpp"
#include "reference_model.hpp"
#include "runner/decision_study.hpp"
#include "runner/runner.hpp"
#include "test_support.hpp"
#include "workload/dataset.hpp"

using namespace attnbench;

TEST_CASE("random rounding lands on the format's grid, unbiased", "[check][study]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/3);
  const auto x = at::randn({4096}, gen, torch::kDouble) * 3;
  const random_rounding bf16{7, true, 7};
  const auto r = round_randomly(x, bf16, gen);
  // On bf16's grid: a round trip through bf16 changes nothing.
  CHECK(torch::equal(r.to(torch::kFloat).to(torch::kBFloat16).to(torch::kDouble), r));
  // Each value goes to one of its two neighbours: within one unit in the last place of bf16.
  CHECK((r - x).abs().div(x.abs()).max().item<double>() <= 2 * precision_class_of("bf16").unit_roundoff + 1e-12);
  // Unbiased: the mean of many roundings of one value is the value.
  const auto v = torch::full({20000}, 1.0 + 1.0 / 3.0, torch::kDouble);
  const double mean = round_randomly(v, bf16, gen).mean().item<double>();
  CHECK(mean == Approx(1.0 + 1.0 / 3.0).epsilon(2e-4));
  // fp32's grid from float64.
  const auto f = round_randomly(x, random_rounding{23, true, 23}, gen);
  CHECK(torch::equal(f.to(torch::kFloat).to(torch::kDouble), f));
  // int8: per output channel, 255 steps; activations per tensor, 256.
  const auto w = at::randn({8, 16}, gen, torch::kDouble);
  const auto q = round_weight_randomly(w, random_rounding{0, false, 23}, gen);
  const auto step = w.abs().amax(1, true) / 127.0;
  CHECK((q / step - (q / step).round()).abs().max().item<double>() < 1e-9);
  // Outside a rounding scope the model's hooks change nothing.
  CHECK(torch::equal(rounded_input(x), x));
  {
    const rounding_scope scope(bf16, gen);
    CHECK_FALSE(torch::equal(rounded_input(x), x));
  }
  CHECK(torch::equal(rounded_output(x), x));
}

TEST_CASE("the study's reference is the model in float64, its runs differ by the class's rounding", "[check][study]") {
  model_config m = testing::tiny_model();
  EncoderClassifier model(m);
  model->init_weights(m.seed);
  model->eval();
  workload_config w;
  w.samples = 6;
  w.lengths.kind = length_kind::uniform;
  w.lengths.min = 8;
  w.lengths.max = 24;
  w.max_length = 24;
  const dataset data = make_dataset(w, m);
  const torch::InferenceMode inference;
  const auto bf16 = run_decision_study(model, data, "bf16", 3);
  REQUIRE(bf16->perturbed.size() == 3);
  CHECK(bf16->reference.scalar_type() == torch::kDouble);
  CHECK(bf16->reference.sizes() == torch::IntArrayRef({6, m.num_labels}));
  // The fp32 model agrees with its float64 reference to fp32's rounding.
  std::vector<torch::Tensor> rows;
  for (const auto& s : data.samples)
    rows.push_back(model->forward(torch::tensor(s, torch::kLong).unsqueeze(0), torch::Tensor()).squeeze(0));
  const auto fp32 = torch::stack(rows).to(torch::kDouble);
  const double fp32_err = (fp32 - bf16->reference).norm().item<double>() / bf16->reference.norm().item<double>();
  CHECK(fp32_err < 1e-5);
  // fp32_kernel_rel_l2 measures that error, for the naive core and SDPA alike: above zero (fp32
  // accumulates in fp32), at least the naive core's, and within fp32's rounding.
  const double kernels = fp32_kernel_rel_l2(model, data, *bf16);
  CHECK(kernels > 0);
  CHECK(kernels >= fp32_err * (1 - 1e-9));
  CHECK(kernels < 1e-5);
  // bf16's rounding moves the outputs far more than fp32's, and each run is its own draw.
  const auto fp32_study = run_decision_study(model, data, "fp32", 2);
  const double bf16_noise = study_noise_rel_l2(*bf16), fp32_noise = study_noise_rel_l2(*fp32_study);
  INFO("bf16 " << bf16_noise << ", fp32 " << fp32_noise);
  CHECK(bf16_noise > 100 * fp32_noise);
  CHECK(fp32_noise > 0);
  CHECK_FALSE(torch::equal(bf16->perturbed[0], bf16->perturbed[1]));
  // The same study twice is the same study: seeded streams.
  CHECK(torch::equal(run_decision_study(model, data, "bf16", 1)->perturbed[0], bf16->perturbed[0]));
}

TEST_CASE("one tolerance per precision class, a config may tighten it, never raise it", "[check][study][config]") {
  CHECK(precision_class_of("amp-bf16").name == "bf16");
  CHECK(precision_class_of("bf16").name == "bf16");
  CHECK(precision_class_of("amp-fp16").name == "fp16");
  CHECK(precision_class_of("int8").name == "int8");
  CHECK(precision_class_of("fp32").name == "fp32");
  CHECK(derived_tolerance(1.2e-2) == Approx(5e-2));
  CHECK(derived_tolerance(2.4e-3) == Approx(1e-2));
  CHECK(derived_tolerance(2.5e-3) == Approx(1e-2));
  CHECK(derived_tolerance(2.6e-3) == Approx(2e-2));
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 16}},
    "variants": [{"name": "base"}, {"name": "amp", "precision": "amp-bf16"}],
    "baseline": "base"
  })");
  doc["check"] = {{"tolerances", {{"amp-bf16", 2e-1}}}};
  CHECK_THAT(testing::problem_at(doc, "check.tolerances.amp-bf16"),
             Catch::Contains("raises the bf16 class's tolerance"));
  doc["check"] = {{"tolerances", {{"amp-bf16", 1e-2}}}};
  CHECK(testing::problems_of(doc).empty());
  doc["check"] = {{"study", "sometimes"}};
  CHECK_THAT(testing::problem_at(doc, "check.study"), Catch::Contains("on-change"));
}

TEST_CASE("a real bf16 run of the real model passes the check", "[check][study][real]") {
  const auto dir = testing::reference_model_dir();
  if (!dir) {
    testing::skip_test(testing::reference_model_missing);
    return;
  }
  // Eight sentences of the real corpus, 32 tokens each at most: bf16 runs a reference path on a CPU
  // without native bf16, about 1 GFLOP/s.
  const std::string doc = fmt::format(R"({{
  "name": "real-bf16",
  "model": {{"weights": "{0}/model.safetensors", "config": "{0}/config.json", "attention": "sdpa"}},
  "workload": {{"text": "{1}/configs/data/handbook-corpus.txt", "vocab": "{0}/vocab.txt", "samples": 8, "max_length": 32}},
  "measure": {{"warmup": 0, "repetitions": 1}},
  "device": "cpu",
  "variants": [
    {{"name": "fp32", "batching": {{"batch_size": 4, "padding": "longest"}}}},
    {{"name": "amp-bf16", "precision": "amp-bf16", "batching": {{"batch_size": 4, "padding": "longest"}}}}
  ],
  "baseline": "fp32",
  "output": {{"dir": "unused"}}
}})",
                                      dir->string(), ATTNBENCH_SOURCE_DIR);
  const config cfg = attnbench::testing::parse_owned(doc, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const auto out = run_experiment(cfg, opts);
  REQUIRE(out.result.variants.size() == 2);
  const auto& amp = out.result.variants[1];
  INFO(amp.check.message);
  CHECK(amp.check.output == output_kind::embedding);
  CHECK(amp.check.samples == 8);
  CHECK(amp.check.tolerance == precision_class_of("bf16").tolerance);
  CHECK(amp.check.rel_l2 > 0);
  CHECK(amp.check.status == status_kind::pass);
  CHECK_FALSE(amp.check.random_weights);
  CHECK_FALSE(out.result.check.random_weights);
  CHECK(out.result.check.predictions == "nearest neighbour by cosine among the other samples");
}
