// The cost check of `validate` and `run` (config/cost_check.hpp) on an injected machine: a config
// that cannot fit or would run for days is refused with the estimate; a small one passes.
#include <catch2/catch.hpp>

#include "config/cost_check.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

nlohmann::ordered_json small_config() {
  return {{"name", "cost-test"},
          {"model", {{"preset", "bert-tiny"}}},
          {"workload", {{"samples", 16}, {"lengths", {{"kind", "fixed"}, {"length", 32}}}, {"max_length", 32}}},
          {"measure", {{"warmup", 1}, {"repetitions", 3}}},
          {"device", "cpu"},
          {"variants", {{{"name", "base"}, {"attention", "naive"}}}},
          {"baseline", "base"},
          {"output", {{"dir", "unused"}}}};
}

machine_budget machine(int64_t gib) {
  machine_budget m;
  m.memory_bytes = gib << 30;
  m.cpu_cores = 2;
  return m;
}

}  // namespace

TEST_CASE("cost check: a small config passes, its estimate counts what it must", "[config][faults]") {
  const config cfg = testing::parse(small_config());
  CHECK(cost_problems(cfg, machine(1)).empty());
  const cost_estimate e = estimate_cost(cfg, machine(1));
  CHECK(e.workload_bytes == 16 * 32 * 4);
  CHECK(e.passes == 1 * (1 + 1 + 3));
  CHECK(e.weight_bytes > 4 * 30522 * 128);  // at least bert-tiny's word embeddings in fp32
}

TEST_CASE("cost check: a workload that cannot fit in memory is refused with the bytes", "[config][faults]") {
  auto doc = small_config();
  doc["workload"]["samples"] = int64_t{1} << 34;  // 16 Gi samples of 32 tokens: 2 TiB of token ids
  const auto problems = cost_problems(testing::parse(doc), machine(24));
  REQUIRE(problems.size() >= 1);
  CHECK(problems[0].path == "workload");
  CHECK_THAT(problems[0].message, Catch::StartsWith("needs at least 2.1 TiB of memory (token ids 2.0 TiB"));
  CHECK_THAT(problems[0].message, Catch::Contains("more than this machine's 24.0 GiB"));
}

TEST_CASE("cost check: a naive batch whose scores cannot fit is refused", "[config][faults]") {
  auto doc = small_config();
  doc["workload"] = {{"samples", 64}, {"lengths", {{"kind", "fixed"}, {"length", 512}}}, {"max_length", 512}};
  doc["variants"][0]["batching"] = {{"kind", "static"}, {"batch_size", 64}};
  // 64 rows × 2 heads × 512² × 4 bytes = 128 MiB of scores: more than a 0.1 GiB machine
  machine_budget m;
  m.memory_bytes = 100 << 20;
  const auto problems = cost_problems(testing::parse(doc), m);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].message, Catch::Contains("the largest batch's activations 1"));
}

TEST_CASE("cost check: a measurement that would run for days is refused with passes × time", "[config][faults]") {
  auto doc = small_config();
  doc["model"] = {{"preset", "bert-large"}};
  doc["workload"] = {{"samples", 100000}, {"lengths", {{"kind", "fixed"}, {"length", 512}}}, {"max_length", 512}};
  doc["measure"] = {{"warmup", 1}, {"repetitions", 1000}, {"max_repetitions", 1000}};
  const auto problems = cost_problems(testing::parse(doc), machine(1024));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "measure");
  CHECK_THAT(problems[0].message, Catch::StartsWith("would run for at least"));
  CHECK_THAT(problems[0].message, Catch::Contains("days (1002 passes ×"));
}
