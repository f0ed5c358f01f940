// A sweep end to end on bert-tiny: every point runs and checks, the model is built once per
// model config, and each point's outputs equal a plain run of that point's config.
#include "runner/sweep_runner.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include "config/config_parser.hpp"

using namespace attnbench;

namespace {

nlohmann::ordered_json sweep_doc() {
  return nlohmann::ordered_json::parse(R"({
    "name": "sweep-run",
    "model": {"preset": "bert-tiny", "seed": 5},
    "workload": {"samples": 12, "lengths": {"kind": "uniform", "min": 4, "max": 32}, "max_length": 32, "seed": 1},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "naive", "attention": "naive", "batching": {"batch_size": 4}},
      {"name": "sdpa", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
      {"name": "bf16", "precision": "amp-bf16", "batching": {"batch_size": 4}}
    ],
    "baseline": "naive",
    "sweep": {"axes": {"batch_size": "2-6+4", "preset": ["bert-tiny"], "max_length": [32, 64]},
              "variants": ["sdpa"]}
  })");
}

}  // namespace

TEST_CASE("a sweep runs every point, reuses the model and matches plain runs", "[runner][sweep]") {
  const device_caps caps{0, true};
  const config base = attnbench::testing::parse_owned(sweep_doc().dump(), "", caps);
  const auto points = expand_sweep(*base.sweep);
  const auto configs = attnbench::testing::sweep_points_owned(base, points, caps);
  REQUIRE(points.size() == 4);
  run_options opts;
  opts.measure_ceilings = false;
  std::vector<std::string> seen;
  const sweep_outcome out = run_sweep(
      base, points, configs, opts, [&](size_t, size_t, const std::string& label) { seen.push_back(label); });
  CHECK(out.models_built == 1);  // one preset: the model is built once for all four points
  CHECK(seen.front() == "batch_size=2 preset=bert-tiny max_length=32");
  const sweep_result& r = out.result;
  REQUIRE(r.points.size() == 4);
  CHECK(r.all_passed());
  for (const auto& p : r.points) {
    REQUIRE(p.result.variants.size() == 2);  // the baseline and the filtered "sdpa"; "bf16" left out
    CHECK(p.result.variants[1].name == "sdpa");
    CHECK(p.result.variants[1].check.rel_l2 <= 1e-5);
    CHECK(p.result.variants[0].throughput.n == 2);
  }
  CHECK(r.points[0].result.variants[0].batches == 6);  // 12 samples, batch size 2
  CHECK(r.points[2].result.variants[0].batches == 2);  // batch size 6
  CHECK(r.points[1].result.workload.max_length == 64);
  // A point's outputs are those of a plain run of its config (same weights, same workload).
  run_options plain;
  plain.measure_ceilings = false;
  const run_outcome single = run_experiment(configs[3], plain);
  CHECK(torch::equal(single.outputs.at("naive"), out.outputs[3].at("naive")));
  CHECK(r.points[3].result.model.weight_checksum == single.result.model.weight_checksum);
}
