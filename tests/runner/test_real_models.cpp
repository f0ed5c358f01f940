#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>

#include "config/config_parser.hpp"
#include "runner/runner.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

const std::string tests_dir = ATTNBENCH_TEST_DATA_DIR;

// A text workload through the tiny vocabulary, on the tiny checkpoint (safetensors) or its
// TorchScript export: both must give the same embeddings.
std::string tiny_config(const std::string& model_block) {
  return fmt::format(R"({{
  "name": "real-model-test",
  "model": {},
  "workload": {{"text": "{}/workload/fixtures/tiny_text.txt", "vocab": "{}/workload/fixtures/tiny_vocab.txt", "max_length": 16}},
  "measure": {{"warmup": 0, "repetitions": 1}},
  "device": "cpu",
  "threads": 1,
  "variants": [
    {{"name": "base", "batching": {{"batch_size": 2, "padding": "longest"}}}},
    {{"name": "amp", "precision": "amp-bf16"}},
    {{"name": "dynamic", "batching": {{"kind": "dynamic", "max_tokens": 64}}}},
    {{"name": "offload", "pending": "needs the offload issue", "offload": {{"layers": 1}}}}
  ],
  "baseline": "base",
  "output": {{"dir": "unused"}}
}})",
                     model_block, tests_dir, tests_dir);
}

run_outcome run(const std::string& model_block) {
  const config cfg = attnbench::testing::parse_owned(tiny_config(model_block), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  return run_experiment(cfg, opts);
}

}  // namespace

TEST_CASE("a safetensors checkpoint runs on a text workload, its output is the mean-pooled embedding",
          "[runner][hf]") {
  const auto out = run(fmt::format(
      R"({{"weights": "{0}/model/fixtures/tiny-bert/model.safetensors", "config": "{0}/model/fixtures/tiny-bert/config.json"}})",
      tests_dir));
  const auto& r = out.result;
  CHECK(r.model.layers == 2);
  CHECK(r.model.hidden == 32);
  CHECK(r.model.preset == "fixtures/tiny-bert/model.safetensors");
  CHECK(r.workload.samples == 5);  // the blank line is no sample
  REQUIRE(r.variants.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(r.variants[i].name << ": " << r.variants[i].reason);
    CHECK(r.variants[i].status == status_kind::pass);
  }
  CHECK(r.variants[3].status == status_kind::skipped);
  CHECK(out.outputs.at("base").sizes() == torch::IntArrayRef{5, 32});  // (N, hidden), not (N, num_labels)
  CHECK(r.variants[1].check.rel_l2 > 0);                               // bf16 really ran in lower precision
  // Embeddings are checked by per-sample cosine, and their predictions are each sample's nearest
  // neighbour among the others (check/output_check.hpp), never an argmax over hidden dimensions.
  CHECK(r.variants[0].check.top1_agreement == 1.0);
  for (std::size_t i = 0; i < 3; ++i) {
    const check_result& c = r.variants[i].check;
    CHECK(c.output == output_kind::embedding);
    CHECK(c.samples == 5);
    CHECK(c.topk == 4);  // min(overlap_k, the 4 other samples)
    CHECK(c.top1_agreement >= 0.0);
    CHECK(c.top1_agreement <= 1.0);
    CHECK(c.cosine_min >= c.cosine_min_bound);
    CHECK(c.cosine_min <= c.cosine_mean);
  }
}

TEST_CASE("a TorchScript export gives the checkpoint's outputs, offload on it is SKIPPED",
          "[runner][torchscript]") {
  const auto scripted = run(fmt::format(
      R"({{"torchscript": "{0}/model/fixtures/tiny-bert/model.pt", "config": "{0}/model/fixtures/tiny-bert/config.json"}})",
      tests_dir));
  const auto native = run(fmt::format(
      R"({{"weights": "{0}/model/fixtures/tiny-bert/model.safetensors", "config": "{0}/model/fixtures/tiny-bert/config.json"}})",
      tests_dir));
  const auto& r = scripted.result;
  REQUIRE(r.variants.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(r.variants[i].name << ": " << r.variants[i].reason);
    CHECK(r.variants[i].status == status_kind::pass);
    CHECK(r.variants[i].attention == "torchscript");
  }
  CHECK(r.variants[3].status == status_kind::skipped);
  CHECK(r.variants[3].reason == "offload unsupported for TorchScript models");
  CHECK(r.variants[0].check.output == output_kind::embedding);  // (N, 32) from a 2-label config
  CHECK(r.variants[1].check.topk == 4);  // nearest neighbours among the 5 embeddings, not labels
  CHECK(r.model.parameters == native.result.model.parameters + 32 * 32 + 32);  // the export keeps the pooler
  const auto& a = scripted.outputs.at("base");
  const auto& b = native.outputs.at("base");
  REQUIRE(a.sizes() == b.sizes());
  CHECK(((a - b).norm() / b.norm()).item<double>() < 1e-5);
}
