// The train scenario end to end on a small model: every variant from the same start, the check
// against the baseline (and that it can fail), and the measured activation memory of each policy.
#include <catch2/catch.hpp>

#include <sstream>

#include "config/config_parser.hpp"
#include "report/make_writers.hpp"
#include "runner/runner.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

// 4 layers of hidden 64 on 64-token sequences, one step per pass: activations dominate.
ordered_json train_config_doc() {
  return ordered_json::parse(R"({
    "name": "train-test",
    "scenario": "train",
    "model": {"layers": 4, "hidden": 64, "heads": 2, "ffn": 256, "vocab_size": 200, "max_positions": 64, "seed": 3},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 64}, "seed": 1},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "none", "batching": {"batch_size": 4}},
      {"name": "every-1", "batching": {"batch_size": 4}, "checkpointing": {"policy": "every", "every": 1}},
      {"name": "sqrt", "batching": {"batch_size": 4}, "checkpointing": {"policy": "sqrt"}}
    ],
    "baseline": "none",
    "output": {"dir": "unused"}
  })");
}

run_result run(const ordered_json& doc) {
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  return run_experiment(cfg, opts).result;
}

std::string render(const run_result& r, const std::string& format) {
  std::ostringstream out;
  make_writers({format}).at(0)->write(r, out);
  return out.str();
}

}  // namespace

TEST_CASE("train scenario: checkpointed variants match the baseline and keep less", "[runner]") {
  const run_result r = run(train_config_doc());
  REQUIRE(r.variants.size() == 3);
  CHECK(r.scenario == "train");
  CHECK(r.repetitions == 2);
  CHECK(r.all_passed());
  const auto& none = r.variants[0];
  const auto& every = r.variants[1];
  const auto& sqrt = r.variants[2];
  for (const auto* v : {&none, &every, &sqrt}) {
    INFO(v->name << ": " << v->check.message);
    REQUIRE(v->train);
    CHECK(v->status == status_kind::pass);
    CHECK(v->throughput.samples.size() == 2);
    CHECK(v->train->steps == 1);
    REQUIRE(v->train->losses.size() == 1);
    CHECK(std::isfinite(v->train->losses[0]));
    CHECK(v->train->grad_rel_l2 <= 1e-6);
    CHECK(v->train->weight_rel_l2 <= 1e-6);
    CHECK(v->train->loss_rel_err <= 1e-6);
    // The fixed sizes are the same everywhere; AdamW keeps two moments per weight.
    CHECK(v->train->weight_bytes == none.train->weight_bytes);
    CHECK(v->train->gradient_bytes == v->train->weight_bytes);
    CHECK(v->train->optimizer_state_bytes == 2 * v->train->weight_bytes);
    CHECK(v->peak_memory_bytes > v->train->activation_peak_bytes);
  }
  CHECK(none.train->checkpointing == "none");
  CHECK(sqrt.train->checkpointing == "sqrt: 2 segments of 2 layers");
  // Without checkpointing all 4 layers' activations are kept at once; every-1 keeps 4 layer
  // inputs and recomputes one layer at a time; sqrt keeps 2 inputs and recomputes 2 layers.
  const auto act = [](const variant_result& v) {
    return static_cast<double>(v.train->activation_peak_bytes);
  };
  INFO("activation peaks: none " << act(none) << ", every-1 " << act(every) << ", sqrt " << act(sqrt));
  CHECK(act(none) > 0);
  CHECK(act(every) < 0.6 * act(none));
  CHECK(act(sqrt) < 0.8 * act(none));
  CHECK(act(every) < act(sqrt));

  // Every report shows the train numbers.
  CHECK(render(r, "json").find("\"activation_peak_bytes\"") != std::string::npos);
  CHECK(render(r, "csv").find("activation_peak_bytes") != std::string::npos);
  CHECK(render(r, "md").find("## Training") != std::string::npos);
}

TEST_CASE("train scenario: a variant that trains differently FAILs", "[runner]") {
  auto doc = train_config_doc();
  doc["variants"] = ordered_json::parse(R"([
    {"name": "none", "batching": {"batch_size": 4}},
    {"name": "bf16", "precision": "amp-bf16", "batching": {"batch_size": 4}, "checkpointing": {"policy": "sqrt"}}
  ])");
  doc["measure"]["repetitions"] = 1;
  doc["check"] = {{"tolerances", {{"amp-bf16", 1e-6}}}};
  const run_result r = run(doc);
  CHECK_FALSE(r.all_passed());
  const auto& bf16 = r.variants[1];
  CHECK(bf16.status == status_kind::fail);
  CHECK(bf16.check.rel_l2 > 1e-6);
  CHECK(bf16.reason.find("gradients rel. L2") != std::string::npos);
}

TEST_CASE("train scenario with dropout: checkpointing still matches", "[runner]") {
  auto doc = train_config_doc();
  doc["train"] = {{"dropout", 0.1}, {"seed", 4}};
  doc["workload"]["samples"] = 8;  // two steps: the second starts from the first's RNG state
  doc["measure"]["repetitions"] = 1;
  const run_result r = run(doc);
  CHECK(r.all_passed());
  for (const auto& v : r.variants) {
    INFO(v.name << ": " << v.check.message);
    REQUIRE(v.train);
    CHECK(v.train->steps == 2);
    CHECK(v.train->grad_rel_l2 <= 1e-6);
  }
}

TEST_CASE("checkpointing in inference gets a note in every report", "[runner]") {
  auto doc = train_config_doc();
  doc["scenario"] = "offline";
  doc["measure"]["repetitions"] = 1;
  const run_result r = run(doc);
  CHECK(r.all_passed());
  const std::string note = "no effect in inference: no activations are kept";
  CHECK(r.variants[0].notes.empty());
  CHECK(r.variants[1].notes == std::vector<std::string>{note});
  CHECK(r.variants[2].notes == std::vector<std::string>{note});
  CHECK_FALSE(r.variants[1].train);
  for (const char* format : {"json", "csv", "md"}) {
    INFO(format);
    CHECK(render(r, format).find(note) != std::string::npos);
  }
}

TEST_CASE("train scenario: offloaded variants (target cpu) train as the baseline, GPU offload is SKIPPED",
          "[runner][offload]") {
  auto doc = train_config_doc();
  doc["workload"]["samples"] = 8;  // two steps: the second streams the weights AdamW updated on the host
  doc["measure"]["repetitions"] = 1;
  doc["variants"] = ordered_json::parse(R"([
    {"name": "none", "batching": {"batch_size": 4}},
    {"name": "offload-0", "batching": {"batch_size": 4}, "offload": {"prefetch": 0, "target": "cpu"}},
    {"name": "offload-1", "batching": {"batch_size": 4}, "offload": {"prefetch": 1, "target": "cpu"}},
    {"name": "gpu-offload", "batching": {"batch_size": 4}, "offload": {"prefetch": 1}}
  ])");
  for (const double dropout : {0.0, 0.1}) {
    INFO("dropout " << dropout);
    doc["train"] = {{"dropout", dropout}, {"seed", 4}};
    const run_result r = run(doc);
    REQUIRE(r.variants.size() == 4);
    const auto& none = r.variants[0];
    for (const int64_t prefetch : {0, 1}) {
      const auto& v = r.variants[static_cast<size_t>(1 + prefetch)];
      INFO(v.name << ": " << v.check.message);
      CHECK(v.status == status_kind::pass);
      REQUIRE(v.train);
      CHECK(v.train->steps == 2);
      CHECK(v.train->losses == none.train->losses);
      CHECK(v.train->loss_rel_err == 0);  // fp32, the same kernels on the same weights
      CHECK(v.train->grad_rel_l2 == 0);
      CHECK(v.train->weight_rel_l2 == 0);
      CHECK(v.check.max_abs == 0);
      const offload_info& o = v.offload;
      CHECK(o.used);
      CHECK(o.prefetch == prefetch);
      CHECK(o.resident_bound == prefetch + 1);
      CHECK(o.max_resident_layers == prefetch + 1);
      CHECK(o.layers == 4);
      CHECK(o.d2h_bytes_per_pass > 0);
      CHECK(o.bytes_per_pass == 3 * o.d2h_bytes_per_pass);  // forward in, backward in, gradients out
      CHECK(o.resident_weight_bytes < o.full_weight_bytes);
      CHECK(o.copy_ms_per_pass > 0);
      CHECK(o.optimizer == "optimizer state in host memory, update on the CPU");
      CHECK(v.notes == std::vector<std::string>{o.optimizer});
      CHECK(v.train->checkpointing == "every layer, by offload (recomputed in backward)");
    }
    const auto& gpu = r.variants[3];
    CHECK(gpu.status == status_kind::skipped);
    CHECK(gpu.reason.find("needs an accelerator") != std::string::npos);
    CHECK_FALSE(gpu.offload.used);
    CHECK(r.all_passed());
    if (dropout == 0) {
      for (const char* format : {"json", "csv", "md"}) {
        INFO(format);
        CHECK(render(r, format).find("optimizer state in host memory, update on the CPU") !=
              std::string::npos);
      }
      CHECK(render(r, "md").find("of gradients device → host") != std::string::npos);
      CHECK(render(r, "csv").find("offload_d2h_bytes_per_pass") != std::string::npos);
    }
  }
}

TEST_CASE("train scenario: offload with checkpointing or compute-dtype host copies is a config error",
          "[runner][offload][config]") {
  auto doc = train_config_doc();
  doc["variants"] = ordered_json::parse(R"([
    {"name": "none"},
    {"name": "both", "offload": {"target": "cpu"}, "checkpointing": {"policy": "sqrt"}},
    {"name": "half", "precision": "amp-bf16", "offload": {"target": "cpu", "host_dtype": "compute"}},
    {"name": "fine", "offload": {"target": "cpu"}, "checkpointing": {"policy": "none"}}
  ])");
  const auto problems = testing::problems_of(doc);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].path == "variants[1].checkpointing");
  CHECK(problems[0].message.find("offloading already recomputes every layer") != std::string::npos);
  CHECK(problems[1].path == "variants[2].offload.host_dtype");
  CHECK(problems[1].message.find("training keeps the fp32 master weights") != std::string::npos);
  // Inference has no backward: there both are allowed (checkpointing just does nothing).
  doc["scenario"] = "offline";
  CHECK(testing::problems_of(doc).empty());
}
