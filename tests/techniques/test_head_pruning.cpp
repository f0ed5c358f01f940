// "pruning" (techniques/head_pruning.cpp), reached only through the open path: its config block
// and rules (config/technique_catalog.hpp), the registry, the FLOP count of the pruned shape, its
// metrics, and a run on random weights whose check FAILs, as it must: pruning changes the model.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/config_parser.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "runner/runner.hpp"
#include "techniques/registry.hpp"
#include "techniques/variant_plan.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

// 2 layers, hidden 96, 6 heads of 16, random weights.
ordered_json pruning_run() {
  return ordered_json::parse(R"({
  "name": "pruning-test",
  "model": {"layers": 2, "hidden": 96, "heads": 6, "ffn": 192, "vocab_size": 1000, "max_positions": 64, "seed": 7},
  "workload": {"samples": 12, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 3},
  "measure": {"warmup": 1, "repetitions": 2},
  "device": "cpu",
  "variants": [
    {"name": "base", "attention": "naive", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "none", "attention": "naive", "pruning": {"heads": 0}, "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "two", "attention": "sdpa", "pruning": {"heads": 2, "by": "weight-norm"},
     "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "half", "attention": "custom", "pruning": {"heads": 0.5}, "batching": {"batch_size": 4, "padding": "longest"}}
  ],
  "baseline": "base",
  "output": {"dir": "unused"}
})");
}

using testing::problem_at;

const variant_result& named(const run_result& r, const std::string& name) {
  const auto it = std::find_if(r.variants.begin(), r.variants.end(), [&](const variant_result& v) { return v.name == name; });
  REQUIRE(it != r.variants.end());
  return *it;
}

double metric_value(const variant_result& v, const std::string& name) {
  const metric* m = find_metric(v.metrics, name);
  INFO("metric " << name << " of " << v.name);
  REQUIRE(m != nullptr);
  return m->value;
}

}  // namespace

TEST_CASE("pruning: registered, its heads as a count or a share, fp32", "[techniques][pruning]") {
  const config cfg = testing::parse(pruning_run());
  const auto plan = [&](const char* name) {
    return plan_variant(cfg, *find_variant(cfg, name), torch::kCPU);
  };
  const variant_plan p = plan("two");
  REQUIRE(p.owner != nullptr);
  CHECK(p.owner->name() == "head-pruning");
  const variant_plan base = plan("base");
  CHECK(base.owner == nullptr);
  // The FLOPs are counted on the heads the copy keeps, at the full model's head dim.
  CHECK(base.heads == 6);
  CHECK(p.heads == 6 - 2);
  CHECK(plan("half").heads == 6 - 3);  // 0.5 of 6
  CHECK(plan("none").heads == 6);
  CHECK(p.head_dim == base.head_dim);
  CHECK(p.precision.label == "fp32");
  CHECK(p.precision.dtype == "fp32");
  CHECK(p.precision.tolerance == base.precision.tolerance);
  CHECK(p.description.find("2 attention heads per layer removed by weight-norm") != std::string::npos);
  CHECK(base.description.empty());
}

TEST_CASE("pruning: its config rules name the path", "[techniques][pruning][config]") {
  auto doc = pruning_run();
  SECTION("as many heads as the model has") {
    doc["variants"][2]["pruning"]["heads"] = 6;
    CHECK(problem_at(doc, "variants[2].pruning.heads") ==
          "must be >= 0 and < the model's 6 heads (one head must stay in every layer); got 6");
  }
  SECTION("a negative count") {
    doc["variants"][2]["pruning"]["heads"] = -1;
    CHECK(problem_at(doc, "variants[2].pruning.heads").find("must be >= 0") != std::string::npos);
  }
  SECTION("a share that rounds to every head") {
    doc["variants"][2]["pruning"]["heads"] = 0.95;
    CHECK(problem_at(doc, "variants[2].pruning.heads") ==
          "0.95 of the model's 6 heads rounds to all of them; one head must stay in every layer");
  }
  SECTION("a share out of (0, 1)") {
    doc["variants"][2]["pruning"]["heads"] = 1.5;
    CHECK(problem_at(doc, "variants[2].pruning.heads") ==
          "a fraction of the heads must be > 0 and < 1; got 1.5 (an integer counts heads)");
  }
  SECTION("no count") {
    doc["variants"][2]["pruning"].erase("heads");
    CHECK(problem_at(doc, "variants[2].pruning.heads").rfind("required", 0) == 0);
  }
  SECTION("a score it does not know") {
    doc["variants"][2]["pruning"]["by"] = "magnitude";
    CHECK(problem_at(doc, "variants[2].pruning.by") == "expected \"weight-norm\"; got \"magnitude\"");
  }
  SECTION("an unknown key") {
    doc["variants"][2]["pruning"]["layers"] = 1;
    CHECK(problem_at(doc, "variants[2].pruning.layers") == "unknown key; pruning takes \"heads\" and \"by\"");
  }
  SECTION("not an object") {
    doc["variants"][2]["pruning"] = 2;
    CHECK(problem_at(doc, "variants[2].pruning").find("an object") != std::string::npos);
  }
  SECTION("with another technique") {
    doc["variants"][2]["linear"] = "packed";
    CHECK(problem_at(doc, "variants[2].pruning").find("one technique per variant") != std::string::npos);
  }
  SECTION("with offload") {
    doc["variants"][2]["offload"] = {{"prefetch", 1}, {"target", "cpu"}};
    CHECK(problem_at(doc, "variants[2].pruning").find("\"pruning\" is not supported together with offload") !=
          std::string::npos);
  }
  SECTION("model.head_dim is refused with the reason") {
    doc["model"]["head_dim"] = 32;
    CHECK(problem_at(doc, "model.head_dim").rfind("not supported: each head is hidden / heads wide", 0) == 0);
  }
}

TEST_CASE("pruning: a run on random weights counts the pruned FLOPs, names the heads and FAILs its check",
          "[techniques][pruning][runner]") {
  const config cfg = testing::parse(pruning_run());
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  const variant_result& base = named(r, "base");
  const variant_result& none = named(r, "none");
  const variant_result& two = named(r, "two");
  const variant_result& half = named(r, "half");
  // Nothing removed: the same function, within fp32's tolerance.
  INFO(none.reason);
  CHECK(none.status == status_kind::pass);
  CHECK(none.flops_per_pass == Approx(base.flops_per_pass));
  CHECK(find_metric(none.metrics, "pruned_flops_saved") == nullptr);
  // Heads removed from random weights: a different model, and the check says so.
  CHECK(two.status == status_kind::fail);
  CHECK(half.status == status_kind::fail);
  CHECK(two.check.cosine < 1.0);
  CHECK(metric_value(two, "pruned_heads") == 2);
  CHECK(metric_value(half, "pruned_heads") == 3);
  CHECK(metric_value(half, "pruned_head_share") == Approx(0.5));
  // Per removed head: 3·d·H + 3·d (QKV) and d·H (output), d = 16, H = 96, over 2 layers.
  CHECK(metric_value(two, "pruned_parameters") == 2 * 2 * (4 * 16 * 96 + 3 * 16));
  // The FLOP count is the pruned shape's: fewer than the baseline's over the same batches.
  CHECK(two.flops_per_pass < base.flops_per_pass);
  CHECK(metric_value(two, "pruned_flops_saved") == Approx(1 - two.flops_per_pass / base.flops_per_pass));
  CHECK(metric_value(half, "pruned_flops_saved") > metric_value(two, "pruned_flops_saved"));
  const bool named_heads = std::any_of(two.notes.begin(), two.notes.end(), [](const std::string& n) {
    return n.rfind("two: heads removed by weight-norm (0-based, of 6 per layer): layer 0: [", 0) == 0;
  });
  CHECK(named_heads);
}
