#include "config/sweep.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <limits>

#include "common/error.hpp"
#include "config/config_parser.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;
using ordered_json = nlohmann::ordered_json;

namespace {

const device_caps no_gpu{0, true};

std::vector<int64_t> range(const std::string& text) { return parse_int_range(text, "sweep.axes.batch_size"); }

std::string range_error(const std::string& text) {
  try {
    range(text);
  } catch (const input_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "sweep.axes.batch_size");
    return e.problems()[0].message;
  }
  FAIL("expected an input_error for " << text);
  return {};
}

ordered_json base_doc() {
  return ordered_json::parse(R"({
    "name": "s",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "lognormal", "median": 20, "sigma": 0.5, "min": 4, "max": 128},
                 "max_length": 128},
    "variants": [
      {"name": "base", "attention": "naive", "batching": {"batch_size": 4}},
      {"name": "sdpa", "attention": "sdpa", "sdpa_backend": "math"},
      {"name": "dyn", "batching": {"kind": "dynamic", "max_tokens": 256}}
    ],
    "baseline": "base"
  })");
}

std::vector<problem> sweep_problems(const ordered_json& block) {
  std::vector<problem> problems;
  read_sweep(block, problems);
  return problems;
}

}  // namespace

TEST_CASE("range strings expand like llama-bench's", "[config][sweep]") {
  CHECK(range("128,256,512") == std::vector<int64_t>{128, 256, 512});
  CHECK(range("1-64*2") == std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64});
  CHECK(range("1-100*10") == std::vector<int64_t>{1, 10, 100});
  CHECK(range("8-32+8") == std::vector<int64_t>{8, 16, 24, 32});
  CHECK(range("8-30+8") == std::vector<int64_t>{8, 16, 24});  // the end need not be hit
  CHECK(range("16-19") == std::vector<int64_t>{16, 17, 18, 19});
  CHECK(range(" 1-4 , 8 ") == std::vector<int64_t>{1, 2, 3, 4, 8});
  CHECK(range("7") == std::vector<int64_t>{7});
  // Up to the largest int64: the last values are kept, and no step overflows.
  const int64_t top = std::numeric_limits<int64_t>::max();
  CHECK(range("9223372036854775806-9223372036854775807") == std::vector<int64_t>{top - 1, top});
  CHECK(range("4611686018427387904-9223372036854775807*2") == std::vector<int64_t>{top / 2 + 1});
  CHECK(range("9223372036854775800-9223372036854775807+5") == std::vector<int64_t>{top - 7, top - 2});
}

TEST_CASE("bad range strings name the piece and the rule", "[config][sweep]") {
  CHECK_THAT(range_error("1-64*1"), Contains("'*' step must be >= 2") && Contains("\"1-64*1\""));
  CHECK_THAT(range_error("64-1"), Contains("must ascend"));
  CHECK_THAT(range_error("0-4"), Contains(">= 1"));
  CHECK_THAT(range_error("-4"), Contains(">= 1"));
  CHECK_THAT(range_error("a,b"), Contains("not an integer") && Contains("\"a\""));
  CHECK_THAT(range_error("1,,2"), Contains("empty item"));
  CHECK_THAT(range_error("1-4,2"), Contains("value 2 appears twice"));
  CHECK_THAT(range_error("1-100000"), Contains("more than 1000 values"));
  CHECK_THAT(range_error("1-8+x"), Contains("step is not an integer"));
  // Bytes that are not UTF-8 (tests/fuzz/corpus/sweep_range/not-utf8): an input_error, not the
  // JSON library's type_error from quoting them.
  CHECK_THAT(range_error("\xa4" "4-1"), Contains("must be integers") && Contains("\"\xef\xbf\xbd" "4-1\""));
}

TEST_CASE("the sweep block is read with path-precise problems", "[config][sweep]") {
  auto ok = ordered_json::parse(R"({"axes": {"batch_size": "1-4*2", "attention": "naive,sdpa",
                                             "precision": ["fp32", "amp-bf16"]}, "variants": ["sdpa"]})");
  std::vector<problem> problems;
  const sweep_config s = read_sweep(ok, problems);
  CHECK(problems.empty());
  REQUIRE(s.axes.size() == 3);
  CHECK(s.axes[0].name == "batch_size");
  CHECK(s.axes[0].values == std::vector<ordered_json>{1, 2, 4});
  CHECK(s.axes[1].values == std::vector<ordered_json>{"naive", "sdpa"});
  CHECK(s.variants == std::vector<std::string>{"sdpa"});

  auto bad = sweep_problems(ordered_json::parse(
      R"({"axes": {"batchsize": [1], "max_length": [128, 0], "preset": [3], "threads": [2, 2]}, "variants": [], "x": 1})"));
  std::vector<std::string> lines;
  for (const auto& p : bad) lines.push_back(p.to_string());
  CHECK_THAT(lines.at(0), Contains("sweep.x: unknown key"));
  CHECK_THAT(lines.at(1), Contains("sweep.axes.batchsize: unknown axis"));
  CHECK_THAT(lines.at(2), Contains("sweep.axes.max_length[1]: expected an integer >= 1; got 0"));
  CHECK_THAT(lines.at(3), Contains("sweep.axes.preset[0]: expected a non-empty string"));
  CHECK_THAT(lines.at(4), Contains("sweep.axes.threads: value 2 appears twice"));
  CHECK_THAT(lines.at(5), Contains("sweep.variants: expected a non-empty array"));
  CHECK(sweep_problems(ordered_json::parse(R"({"axes": {}})")).at(0).path == "sweep.axes");
  CHECK(sweep_problems(ordered_json::parse(R"([1])")).at(0).path == "sweep");
}

TEST_CASE("expansion is the full grid, set-up axes slowest, the last axis fastest", "[config][sweep]") {
  std::vector<problem> problems;
  const sweep_config s = read_sweep(
      ordered_json::parse(
          R"({"axes": {"batch_size": [1, 2], "preset": ["bert-tiny", "bert-mini"], "max_length": [32, 64]}})"),
      problems);
  REQUIRE(problems.empty());
  const auto points = expand_sweep(s);
  REQUIRE(points.size() == 8);
  std::vector<std::string> labels;
  for (const auto& p : points) labels.push_back(p.label());
  CHECK(labels ==
        std::vector<std::string>{
            "batch_size=1 preset=bert-tiny max_length=32", "batch_size=1 preset=bert-tiny max_length=64",
            "batch_size=2 preset=bert-tiny max_length=32", "batch_size=2 preset=bert-tiny max_length=64",
            "batch_size=1 preset=bert-mini max_length=32", "batch_size=1 preset=bert-mini max_length=64",
            "batch_size=2 preset=bert-mini max_length=32", "batch_size=2 preset=bert-mini max_length=64"});
}

TEST_CASE("a point is written into the document and parsed like any config", "[config][sweep]") {
  auto doc = base_doc();
  doc["sweep"] = ordered_json::parse(
      R"({"axes": {"batch_size": [2, 16], "max_length": [64, 128], "attention": ["naive"]},
                                         "variants": ["dyn"]})");
  const config base = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  REQUIRE(base.sweep);
  const auto points = expand_sweep(*base.sweep);
  const auto configs = attnbench::testing::sweep_points_owned(base, points, no_gpu);
  REQUIRE(configs.size() == 4);
  const config& c = configs[1];  // batch_size=2 max_length=128
  CHECK(points[1].label() == "batch_size=2 max_length=128 attention=naive");
  CHECK(!c.sweep);
  REQUIRE(c.variants.size() == 2);  // the filter keeps "dyn", and the baseline always runs
  CHECK(c.variants[0].name == "base");
  CHECK(c.variants[1].name == "dyn");
  CHECK(c.variants[0].batching.batch_size == 2);
  CHECK(c.variants[1].batching.max_batch_size == 2);  // dynamic: the batch size bound
  CHECK(c.variants[1].batching.max_tokens == 256);
  CHECK(c.variants[1].attention == attention_kind::naive);
  CHECK(c.workload.max_length == 128);
  CHECK(configs[0].workload.max_length == 64);
  CHECK(configs[0].workload.lengths.max == 64);  // the distribution is clipped to max_length
}

TEST_CASE("a bad point is reported once with the first point it fails at", "[config][sweep]") {
  auto doc = base_doc();
  doc["sweep"] =
      ordered_json::parse(R"({"axes": {"preset": ["bert-tiny", "bert-huge"], "max_length": [64, 4096]}})");
  const config base = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  try {
    attnbench::testing::sweep_points_owned(base, expand_sweep(*base.sweep), no_gpu);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    const std::string all = e.what();
    CHECK_THAT(all, Contains("model.preset") && Contains("\"bert-huge\"") &&
                        Contains("(at sweep point preset=bert-huge max_length=64)"));
    CHECK_THAT(all,
               Contains("workload.max_length: must be <= model.max_positions (512); got 4096 (at sweep point "
                        "preset=bert-tiny max_length=4096)"));
    CHECK(e.problems().size() == 2);
  }
}

TEST_CASE("axes that cannot apply and unknown variant filters are config errors", "[config][sweep]") {
  auto doc = base_doc();
  doc["sweep"] = ordered_json::parse(R"({"axes": {"length": [8, 16]}})");  // lognormal: sweeps the median
  const config base = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  const auto configs = attnbench::testing::sweep_points_owned(base, expand_sweep(*base.sweep), no_gpu);
  CHECK(configs[1].workload.lengths.median == 16);

  doc["workload"]["lengths"] = ordered_json::parse(R"({"kind": "uniform", "min": 4, "max": 64})");
  const config uniform = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  CHECK_THROWS_WITH(attnbench::testing::sweep_points_owned(uniform, expand_sweep(*uniform.sweep), no_gpu),
                    Contains("sweep.axes.length: needs workload.lengths of kind \"fixed\""));

  doc["sweep"] = ordered_json::parse(R"({"axes": {"threads": [1]}, "variants": ["nope"]})");
  CHECK_THROWS_WITH(attnbench::testing::parse_owned(doc.dump(), "", no_gpu),
                    Contains("sweep.variants[0]: no variant named \"nope\""));
}

TEST_CASE("the heads axis trades heads against head_dim at the model's hidden size", "[config][sweep][pruning]") {
  auto doc = base_doc();  // bert-tiny: hidden 128
  doc["sweep"] = ordered_json::parse(R"({"axes": {"max_length": [64, 128], "heads": [1, 2, 8]}})");
  const config base = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  const auto points = expand_sweep(*base.sweep);
  const auto configs = attnbench::testing::sweep_points_owned(base, points, no_gpu);
  REQUIRE(configs.size() == 6);
  // A set-up axis (it rebuilds the model): it varies slowest, before max_length.
  CHECK(points[0].label() == "max_length=64 heads=1");
  CHECK(points[1].label() == "max_length=128 heads=1");
  CHECK(configs[0].model.heads == 1);
  CHECK(configs[5].model.heads == 8);
  CHECK(configs[5].model.hidden == 128);

  doc["sweep"] = ordered_json::parse(R"({"axes": {"heads": [2, 3]}})");  // 128 / 3 is no head_dim
  const config bad = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  CHECK_THROWS_WITH(attnbench::testing::sweep_points_owned(bad, expand_sweep(*bad.sweep), no_gpu),
                    Contains("model.heads: hidden (128) must be divisible by heads (3) (at sweep point heads=3)"));

  doc["sweep"] = ordered_json::parse(R"({"axes": {"heads": [2]}})");
  doc["model"] = ordered_json::parse(R"({"config": "config.json", "weights": "model.safetensors"})");
  sweep_config heads_only;
  heads_only.axes.push_back({"heads", {2}});
  CHECK_THROWS_WITH(apply_sweep_point(doc, heads_only, expand_sweep(heads_only)[0], "base"),
                    Contains("cannot change the heads of a real model"));
}

TEST_CASE("the prune_heads axis sets every pruning block, and the chart is checked", "[config][sweep][pruning]") {
  auto doc = base_doc();
  doc["variants"][1]["pruning"] = {{"heads", 1}};
  sweep_config s;
  s.axes.push_back({"prune_heads", {1}});
  const auto point = expand_sweep(s)[0];
  const auto applied = apply_sweep_point(doc, s, point, "base");
  CHECK(applied["variants"][1]["pruning"]["heads"] == 1);
  CHECK_FALSE(applied["variants"][0].contains("pruning"));
  doc["variants"][1].erase("pruning");
  CHECK_THROWS_WITH(apply_sweep_point(doc, s, point, "base"),
                    Contains("sweep.axes.prune_heads: no variant has a \"pruning\" block"));

  CHECK(sweep_problems(ordered_json::parse(R"({"axes": {"batch_size": [1]}, "chart": "cosine_mean"})")).empty());
  const auto problems = sweep_problems(ordered_json::parse(R"({"axes": {"batch_size": [1]}, "chart": "cosine"})"));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "sweep.chart");
  CHECK(problems[0].message == "expected one of throughput, cosine_mean, cosine_min; got \"cosine\"");
}

TEST_CASE("the test axis writes llama-bench's pp and tg tests into a generate config", "[config][sweep][decoder]") {
  const auto pp = parse_generate_test("pp512");
  REQUIRE(pp);
  CHECK(pp->prefill);
  CHECK(pp->tokens == 512);
  CHECK(pp->name() == "pp512");
  const auto tg = parse_generate_test("tg1");
  REQUIRE(tg);
  CHECK_FALSE(tg->prefill);
  CHECK(tg->tokens == 1);
  for (const char* bad : {"pp1", "tg0", "pp", "tg", "xx12", "pp12a", "pp-3", "PP512", " pp8", "pg8", "tg99999999999999999999"})
    CHECK_FALSE(parse_generate_test(bad));

  auto doc = ordered_json::parse(R"({
    "name": "g", "scenario": "generate",
    "model": {"preset": "llama-tiny", "seed": 1},
    "workload": {"samples": 2, "lengths": {"kind": "fixed", "length": 8}, "max_length": 8},
    "generate": {"max_new_tokens": 4},
    "variants": [{"name": "base"}, {"name": "bf16", "precision": "bf16"}],
    "baseline": "base"
  })");
  doc["sweep"] = ordered_json::parse(R"({"axes": {"test": "pp16,tg8"}})");
  const config base = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  const auto points = expand_sweep(*base.sweep);
  REQUIRE(points.size() == 2);
  CHECK(points[0].label() == "test=pp16");
  const auto configs = attnbench::testing::sweep_points_owned(base, points, no_gpu);
  // pp16: one 16-token prompt per sample, the prefill and its first token only.
  CHECK(configs[0].workload.lengths.kind == length_kind::fixed);
  CHECK(configs[0].workload.lengths.length == 16);
  CHECK(configs[0].workload.max_length == 16);
  CHECK(configs[0].generate.max_new_tokens == 1);
  CHECK(configs[0].workload.samples == 2);
  // tg8: the shortest prompt, then 8 decode steps after the prefill's token.
  CHECK(configs[1].workload.lengths.length == 2);
  CHECK(configs[1].workload.max_length == 2);
  CHECK(configs[1].generate.max_new_tokens == 9);

  // Bad values name the item; the axis refuses the axes it overrides.
  auto problems = sweep_problems(ordered_json::parse(R"({"axes": {"test": ["pp512", "tg-1"]}})"));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "sweep.axes.test[1]");
  CHECK_THAT(problems[0].message, Contains("\"pp512\"") && Contains("\"tg-1\""));
  problems = sweep_problems(ordered_json::parse(R"({"axes": {"test": "pp8,bad"}})"));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "sweep.axes.test");
  problems = sweep_problems(ordered_json::parse(R"({"axes": {"test": "pp8", "max_length": [8, 16]}})"));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "sweep.axes.max_length");
  CHECK_THAT(problems[0].message, Contains("the test axis sets the prompt length"));

  // Only a generate config has tests to run.
  auto encoder = base_doc();
  encoder["sweep"] = ordered_json::parse(R"({"axes": {"test": ["pp8"]}})");
  const config enc = attnbench::testing::parse_owned(encoder.dump(), "", no_gpu);
  CHECK_THROWS_WITH(attnbench::testing::sweep_points_owned(enc, expand_sweep(*enc.sweep), no_gpu),
                    Contains("sweep.axes.test: needs \"scenario\": \"generate\""));
  // A prompt longer than the model's positions is the parser's error, at the point it breaks.
  doc["sweep"] = ordered_json::parse(R"({"axes": {"test": ["pp100000"]}})");
  const config longer = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  CHECK_THROWS_WITH(attnbench::testing::sweep_points_owned(longer, expand_sweep(*longer.sweep), no_gpu),
                    Contains("(at sweep point test=pp100000)"));
}
