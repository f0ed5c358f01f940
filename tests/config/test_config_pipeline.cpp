// The variant's pipeline block: values, defaults and every error path with its JSON path.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

// bert-mini has 4 encoder layers.
ordered_json with_pipeline(ordered_json block) {
  auto doc = ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-mini"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 16}},
    "device": "cpu",
    "variants": [{"name": "base"}, {"name": "pipe"}],
    "baseline": "base"
  })");
  doc["variants"][1]["pipeline"] = std::move(block);
  return doc;
}

std::string only_problem(const ordered_json& doc, const std::string& path) {
  const auto ps = testing::problems_of(doc);
  INFO("problems: " << input_error(ps).what());
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == path);
  return ps[0].message;
}

}  // namespace

TEST_CASE("pipeline block: stages, micro-batch, layers, threads", "[config][pipeline]") {
  SECTION("the minimal block: balanced split, default threads") {
    const config c = testing::parse(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 4}}));
    const auto& p = *c.variants[1].pipeline;
    CHECK(p.stages == std::vector<std::string>{"cpu", "cpu"});
    CHECK(p.micro_batch == 4);
    CHECK(p.layers.empty());
    CHECK(p.threads_per_stage == 0);
    CHECK_FALSE(c.variants[0].pipeline.has_value());
  }
  SECTION("explicit layers and threads") {
    const config c = testing::parse(with_pipeline(
        {{"stages", {"cpu", "cpu", "cpu"}}, {"micro_batch", 1}, {"layers", {1, 2, 1}}, {"threads_per_stage", 2}}));
    const auto& p = *c.variants[1].pipeline;
    CHECK(p.layers == std::vector<int64_t>{1, 2, 1});
    CHECK(p.threads_per_stage == 2);
  }
  SECTION("CUDA stages on a machine with two GPUs") {
    const config c = attnbench::testing::parse_owned(
        with_pipeline({{"stages", {"cuda:0", "cuda:1"}}, {"micro_batch", 2}}).dump(), "", device_caps{2, true});
    CHECK(c.variants[1].pipeline->stages == std::vector<std::string>{"cuda:0", "cuda:1"});
  }
  SECTION("a stage written \"cuda\" is the canonical \"cuda:0\", the model's device, as a parallel worker's is") {
    const config c = attnbench::testing::parse_owned(
        with_pipeline({{"stages", {"cuda", "cuda:1"}}, {"micro_batch", 2}}).dump(), "", device_caps{2, true});
    CHECK(c.variants[1].pipeline->stages == std::vector<std::string>{"cuda:0", "cuda:1"});
  }
  SECTION("a pending variant keeps the block unvalidated") {
    auto doc = with_pipeline({{"stages", ordered_json::array()}});
    doc["variants"][1]["pending"] = "later";
    const config c = testing::parse(doc);
    CHECK_FALSE(c.variants[1].pipeline.has_value());
    CHECK(c.variants[1].techniques.count("pipeline") == 1);
  }
}

TEST_CASE("pipeline block errors name their JSON path", "[config][pipeline]") {
  const std::string at = "variants[1].pipeline";
  CHECK(only_problem(with_pipeline({{"stages", ordered_json::array()}, {"micro_batch", 4}}), at + ".stages") ==
        "expected a non-empty array of devices; got an array");
  CHECK(only_problem(with_pipeline({{"stages", "cpu"}, {"micro_batch", 4}}), at + ".stages") ==
        "expected a non-empty array of devices; got \"cpu\"");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cuda:1"}}, {"micro_batch", 4}}), at + ".stages[1]") ==
        "\"cuda:1\" is not available: this machine has 0 CUDA devices");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "gpu"}}, {"micro_batch", 4}}), at + ".stages[1]") ==
        "expected \"cpu\", \"cuda\" or \"cuda:N\"; got \"gpu\"");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 0}}), at + ".micro_batch") ==
        "must be >= 1; got 0");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}}), at + ".micro_batch") ==
        "required: the rows per micro-batch");
  CHECK(only_problem(with_pipeline({{"micro_batch", 2}}), at + ".stages") == "required");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}, {"layers", {4}}}),
                     at + ".layers") == "must give one layer count per stage (2 stages); got 1");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}, {"layers", {2, 3}}}),
                     at + ".layers") == "must add up to the model's 4 encoder layers; they add up to 5");
  // Counts whose sum overflows int64 (tests/fuzz/corpus/config/pipeline-layers-overflow.json).
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}},
                                    {"micro_batch", 2},
                                    {"layers", {INT64_MAX, INT64_MAX}}}),
                     at + ".layers") == "must add up to the model's 4 encoder layers; they add up to more than that");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}, {"layers", {4, 0}}}),
                     at + ".layers[1]") == "must be >= 1; got 0");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu", "cpu", "cpu", "cpu"}}, {"micro_batch", 2}}),
                     at + ".stages") ==
        "5 stages for the model's 4 encoder layers: every stage needs at least one layer");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}, {"threads_per_stage", 0}}),
                     at + ".threads_per_stage") == "must be >= 1; got 0");
  CHECK(only_problem(with_pipeline({{"stages", {"cpu"}}, {"micro_batch", 2}, {"micro_batches", 2}}),
                     at + ".micro_batches") == "unknown key; did you mean \"micro_batch\"?");
  SECTION("with offload in the same variant") {
    auto doc = with_pipeline({{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}});
    doc["variants"][1]["offload"] = {{"target", "cpu"}};
    CHECK(only_problem(doc, at) ==
          "not supported together with offload in one variant: a pipeline stage runs its layers resident on its "
          "device");
  }
}
