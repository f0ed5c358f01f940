#include "config/config_parser.hpp"
#include "test_support.hpp"

#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config_defaults.hpp"
#include "config/technique_catalog.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using ordered_json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

const device_caps no_gpu{0, true};
const device_caps one_gpu{1, true};
const device_caps no_cpu_fp16{0, false};

// A small valid config; tests patch what they exercise.
ordered_json minimal() {
  return ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 16}},
    "variants": [{"name": "fp32"}],
    "baseline": "fp32"
  })");
}

config parse(const ordered_json& doc, const device_caps& caps = no_gpu) {
  return attnbench::testing::parse_owned(doc.dump(2), "", caps);
}

// Every problem parsing `doc` reports; fails the test when it parses cleanly.
std::vector<problem> problems_of(const ordered_json& doc, const device_caps& caps = no_gpu) {
  try {
    parse(doc, caps);
  } catch (const input_error& e) {
    return e.problems();
  }
  FAIL("expected an input_error for " << doc.dump());
  return {};
}

// The message of the one problem at `path` (asserting there is exactly one there).
std::string message_at(const std::vector<problem>& ps, const std::string& path) {
  std::vector<std::string> found;
  for (const auto& p : ps)
    if (p.path == path) found.push_back(p.message);
  INFO("problems: " << input_error(ps).what());
  REQUIRE(found.size() == 1);
  return found[0];
}

std::string only_problem(const ordered_json& doc, const std::string& path, const device_caps& caps = no_gpu) {
  auto ps = problems_of(doc, caps);
  INFO("problems: " << input_error(ps).what());
  REQUIRE(ps.size() == 1);
  return message_at(ps, path);
}

// A fresh directory under the system temp dir, removed with everything in it.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("attnbench_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

}  // namespace

TEST_CASE("minimal config takes every default", "[config]") {
  config c = parse(minimal());
  CHECK(c.schema_version == 1);
  CHECK(c.name == "t");
  CHECK(c.source_path.empty());
  CHECK(c.device == "auto");
  CHECK(c.threads == 0);
  CHECK(c.model.preset == "bert-tiny");
  CHECK(c.model.layers == 2);
  CHECK(c.model.hidden == 128);
  CHECK(c.model.heads == 2);
  CHECK(c.model.ffn == 512);
  CHECK(c.model.vocab_size == 30522);
  CHECK(c.model.max_positions == 512);
  CHECK(c.model.type_vocab_size == 2);
  CHECK(c.model.num_labels == 2);
  CHECK(c.model.layer_norm_eps == 1e-12);
  CHECK(c.model.attention == attention_kind::sdpa);
  CHECK(c.model.backend == sdpa_backend::auto_select);
  CHECK_FALSE(c.model.causal);
  CHECK(c.model.seed == 0);
  CHECK(c.workload.samples == 4);
  CHECK(c.workload.lengths.kind == length_kind::fixed);
  CHECK(c.workload.lengths.length == 16);
  CHECK(c.workload.max_length == 16);  // the longest the distribution draws
  CHECK(c.workload.seed == 0);
  CHECK(c.workload.file.empty());
  CHECK(c.measure.warmup == 1);
  CHECK(c.measure.adaptive);  // no `repetitions`: adaptive repetitions by default
  CHECK(c.measure.min_repetitions == 5);
  CHECK(c.measure.target_rel_half_width == 0.02);
  CHECK(c.measure.max_time_s == 60);
  CHECK(c.measure.min_time_s == 0);
  CHECK(c.measure.max_repetitions == 100);
  CHECK(c.check.tolerance.at(precision_kind::fp32) == 5e-6);
  CHECK(c.check.tolerance.at(precision_kind::amp_bf16) == 1e-1);
  CHECK(c.check.tolerance.at(precision_kind::amp_fp16) == 1e-2);
  REQUIRE(c.variants.size() == 1);
  const variant_config& v = c.variants[0];
  CHECK(v.name == "fp32");
  CHECK(v.description.empty());
  CHECK(v.precision == precision_kind::fp32);
  CHECK(v.attention == attention_kind::sdpa);
  CHECK(v.backend == sdpa_backend::auto_select);
  CHECK(v.batching.kind == "static");
  CHECK(v.batching.batch_size == 8);
  CHECK(v.batching.padding == padding_kind::max_length);
  CHECK(v.techniques.empty());
  CHECK_FALSE(v.pending);
  CHECK(c.baseline == "fp32");
  CHECK(c.output.dir == "results/t");
  CHECK(c.output.formats == std::vector<std::string>{"json", "csv", "md"});
  CHECK(c.raw == minimal());
}

TEST_CASE("a config using every field reads back every value", "[config]") {
  temp_dir tmp;
  std::string out_dir = (tmp.path / "out" / "nested").string();
  ordered_json doc = {
      {"schema_version", 1},
      {"name", "full.run_1-a"},
      {"model",
       {{"preset", "bert-mini"},
        {"layers", 3},
        {"hidden", 192},
        {"heads", 6},
        {"ffn", 500},
        {"vocab_size", 1000},
        {"max_positions", 256},
        {"type_vocab_size", 1},
        {"num_labels", 5},
        {"layer_norm_eps", 1e-6},
        {"attention", "naive"},
        {"sdpa_backend", "auto"},
        {"causal", true},
        {"seed", 18446744073709551615ULL}}},
      {"workload",
       {{"samples", 100},
        {"lengths", {{"kind", "lognormal"}, {"median", 40.5}, {"sigma", 0.7}, {"min", 3}, {"max", 200}}},
        {"max_length", 256},
        {"seed", 7}}},
      {"measure", {{"warmup", 0}, {"repetitions", 9}, {"min_time_s", 2.5}, {"max_repetitions", 9}}},
      {"check", {{"tolerances", {{"fp32", 1e-6}, {"amp-bf16", 0.01}, {"amp-fp16", 0.002}}}}},
      {"device", "cuda:0"},
      {"threads", 4},
      {"variants",
       {{{"name", "naive"}, {"description", "the reference"}},
        {{"name", "flash-bf16"},
         {"description", "flash attention in bf16"},
         {"precision", "amp-bf16"},
         {"attention", "sdpa"},
         {"sdpa_backend", "flash"},
         {"batching", {{"kind", "static"}, {"batch_size", 32}, {"padding", "longest"}}}},
        {{"name", "offloaded"},
         {"precision", "amp-fp16"},
         {"pending", "offload lands in a later issue"},
         {"offload", {{"to", "cpu"}}},
         {"checkpointing", {{"policy", "every"}, {"every", 3}}}}}},
      {"baseline", "naive"},
      {"output", {{"dir", out_dir}, {"formats", {"md", "json"}}}}};
  config c = attnbench::testing::parse_owned(doc.dump(), "experiments/full.json", one_gpu);

  CHECK(c.name == "full.run_1-a");
  CHECK(c.source_path == "experiments/full.json");
  CHECK(c.raw == doc);
  CHECK(c.model.preset == "bert-mini");
  CHECK(c.model.layers == 3);
  CHECK(c.model.hidden == 192);
  CHECK(c.model.heads == 6);
  CHECK(c.model.ffn == 500);
  CHECK(c.model.vocab_size == 1000);
  CHECK(c.model.max_positions == 256);
  CHECK(c.model.type_vocab_size == 1);
  CHECK(c.model.num_labels == 5);
  CHECK(c.model.layer_norm_eps == 1e-6);
  CHECK(c.model.attention == attention_kind::naive);
  CHECK(c.model.backend == sdpa_backend::auto_select);
  CHECK(c.model.causal);
  CHECK(c.model.seed == 18446744073709551615ULL);
  CHECK(c.workload.samples == 100);
  CHECK(c.workload.lengths.kind == length_kind::lognormal);
  CHECK(c.workload.lengths.median == 40.5);
  CHECK(c.workload.lengths.sigma == 0.7);
  CHECK(c.workload.lengths.min == 3);
  CHECK(c.workload.lengths.max == 200);
  CHECK(c.workload.max_length == 256);
  CHECK(c.workload.seed == 7);
  CHECK(c.measure.warmup == 0);
  CHECK(c.measure.repetitions == 9);
  CHECK(c.measure.min_time_s == 2.5);
  CHECK(c.measure.max_repetitions == 9);
  CHECK(c.check.tolerance.at(precision_kind::fp32) == 1e-6);
  CHECK(c.check.tolerance.at(precision_kind::amp_bf16) == 0.01);
  CHECK(c.check.tolerance.at(precision_kind::amp_fp16) == 0.002);
  CHECK(c.device == "cuda:0");
  CHECK(c.threads == 4);
  REQUIRE(c.variants.size() == 3);
  CHECK(c.variants[0].attention == attention_kind::naive);  // the model's
  CHECK(c.variants[0].description == "the reference");
  const variant_config& flash = c.variants[1];
  CHECK(flash.description == "flash attention in bf16");
  CHECK(flash.precision == precision_kind::amp_bf16);
  CHECK(flash.attention == attention_kind::sdpa);
  CHECK(flash.backend == sdpa_backend::flash);
  CHECK(flash.batching.batch_size == 32);
  CHECK(flash.batching.padding == padding_kind::longest);
  const variant_config& pending = c.variants[2];
  CHECK(pending.precision == precision_kind::amp_fp16);
  CHECK(pending.pending == std::optional<std::string>("offload lands in a later issue"));
  REQUIRE(pending.techniques.size() == 1);
  CHECK(pending.techniques.at("offload") == nlohmann::json{{"to", "cpu"}});
  CHECK(pending.checkpointing.policy == checkpoint_policy::every);
  CHECK(pending.checkpointing.every == 3);
  CHECK(flash.checkpointing.policy == checkpoint_policy::none);
  CHECK(c.baseline == "naive");
  CHECK(c.output.dir == out_dir);
  CHECK(c.output.formats == std::vector<std::string>{"md", "json"});
  CHECK_FALSE(fs::exists(out_dir));  // validation creates nothing
}

TEST_CASE("every preset has its documented shape", "[config]") {
  struct expected {
    const char* name;
    int64_t layers, hidden, heads;
  };
  auto e = GENERATE(expected{"bert-tiny", 2, 128, 2}, expected{"bert-mini", 4, 256, 4},
                    expected{"minilm-l6", 6, 384, 12}, expected{"bert-base", 12, 768, 12},
                    expected{"bert-large", 24, 1024, 16});
  ordered_json doc = minimal();
  doc["model"]["preset"] = e.name;
  config c = parse(doc);
  CHECK(c.model.layers == e.layers);
  CHECK(c.model.hidden == e.hidden);
  CHECK(c.model.heads == e.heads);
  CHECK(c.model.ffn == 4 * e.hidden);
  CHECK(c.model.vocab_size == 30522);
  CHECK(c.model.max_positions == 512);
  CHECK(c.model.type_vocab_size == 2);
  CHECK(c.model.layer_norm_eps == 1e-12);
}

TEST_CASE("explicit model fields override the preset, ffn follows hidden", "[config]") {
  ordered_json doc = minimal();
  doc["model"] = {{"preset", "bert-base"}, {"hidden", 384}, {"heads", 6}, {"num_labels", 3}};
  config c = parse(doc);
  CHECK(c.model.layers == 12);
  CHECK(c.model.hidden == 384);
  CHECK(c.model.heads == 6);
  CHECK(c.model.ffn == 4 * 384);
  CHECK(c.model.num_labels == 3);
}

TEST_CASE("a hidden size whose default ffn overflows is refused, not multiplied", "[config]") {
  // tests/fuzz/corpus/config/ffn-overflow.json: 4 × hidden past int64 was undefined behaviour.
  ordered_json doc = minimal();
  doc["model"] = {{"preset", "bert-tiny"}, {"hidden", INT64_MAX / 4 + 1}, {"heads", 1}};
  auto ps = problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "model.hidden");
  CHECK(ps[0].message == "must be <= 2305843009213693951 when model.ffn is not given (4 × hidden); got "
                         "2305843009213693952");
  doc["model"]["ffn"] = 64;  // given: nothing to multiply
  CHECK(parse(doc).model.hidden == INT64_MAX / 4 + 1);
  doc["model"]["hidden"] = INT64_MAX / 4;
  doc["model"].erase("ffn");
  CHECK(parse(doc).model.ffn == INT64_MAX / 4 * 4);
}

TEST_CASE("a model without preset needs every dimension", "[config]") {
  ordered_json doc = minimal();
  doc["model"] = {{"hidden", 64}};
  auto ps = problems_of(doc);
  CHECK(ps.size() == 4);
  for (const char* dim : {"layers", "heads", "vocab_size", "max_positions"})
    CHECK(message_at(ps, std::string("model.") + dim) == "required without model.preset");

  doc["model"] = {{"layers", 1}, {"hidden", 64}, {"heads", 4}, {"vocab_size", 100}, {"max_positions", 64}};
  config c = parse(doc);
  CHECK(c.model.preset.empty());
  CHECK(c.model.ffn == 256);
  CHECK(c.model.type_vocab_size == 2);
  CHECK(c.model.num_labels == 2);
  CHECK(c.model.layer_norm_eps == 1e-12);
}

TEST_CASE("model problems", "[config]") {
  ordered_json doc = minimal();
  SECTION("unknown preset lists the presets") {
    doc["model"]["preset"] = "bert-small";
    CHECK(only_problem(doc, "model.preset") ==
          "expected one of bert-tiny, bert-mini, minilm-l6, bert-base, bert-large, "
          "gpt2-tiny, gpt2, llama-tiny, llama-160m, llama-1b; got \"bert-small\"");
  }
  SECTION("hidden must split evenly over heads") {
    doc["model"]["heads"] = 3;
    CHECK(only_problem(doc, "model.heads") == "hidden (128) must be divisible by heads (3)");
  }
  SECTION("dimensions are at least 1") {
    doc["model"]["layers"] = 0;
    CHECK(only_problem(doc, "model.layers") == "must be >= 1; got 0");
  }
  SECTION("layer_norm_eps is positive") {
    doc["model"]["layer_norm_eps"] = 0;
    CHECK(only_problem(doc, "model.layer_norm_eps") == "must be > 0; got 0");
  }
  SECTION("seed is non-negative") {
    doc["model"]["seed"] = -1;
    CHECK(only_problem(doc, "model.seed") == "must be >= 0; got -1");
  }
  SECTION("causal is a boolean") {
    doc["model"]["causal"] = "yes";
    CHECK(only_problem(doc, "model.causal") == "expected a boolean; got \"yes\"");
  }
  SECTION("missing model") {
    doc.erase("model");
    CHECK(only_problem(doc, "model") == "required");
  }
  SECTION("model of the wrong type") {
    doc["model"] = "bert-tiny";
    CHECK(only_problem(doc, "model") == "expected an object; got \"bert-tiny\"");
  }
  SECTION("a backend on naive attention") {
    doc["model"]["attention"] = "naive";
    doc["model"]["sdpa_backend"] = "math";
    CHECK_THAT(only_problem(doc, "model.sdpa_backend"), Contains("applies only to attention \"sdpa\""));
  }
  SECTION("a backend on custom attention") {
    doc["model"]["attention"] = "custom";
    doc["model"]["sdpa_backend"] = "flash";
    CHECK_THAT(only_problem(doc, "model.sdpa_backend"), Contains("applies only to attention \"sdpa\"; attention here "
                                                                 "is \"custom\""));
  }
  SECTION("a CUDA-only backend as the model default on the CPU") {
    doc["model"]["sdpa_backend"] = "efficient";
    CHECK_THAT(only_problem(doc, "model.sdpa_backend"), Contains("\"efficient\" needs a CUDA device"));
  }
}

TEST_CASE("invalid JSON reports line and column", "[config]") {
  auto error_of = [](const std::string& text) {
    try {
      attnbench::testing::parse_owned(text, "x.json", no_gpu);
    } catch (const input_error& e) {
      REQUIRE(e.problems().size() == 1);
      CHECK(e.problems()[0].path.empty());
      return e.problems()[0].message;
    }
    FAIL("expected an input_error");
    return std::string{};
  };
  CHECK_THAT(error_of("{\n  \"name\": \"x\",\n  \"model\": bogus\n}"),
             StartsWith("invalid JSON at line 3, column 12: syntax error") && Contains("invalid literal"));
  CHECK_THAT(error_of(""), StartsWith("invalid JSON at line 1, column 1: "));
  CHECK_THAT(error_of("{\"a\": 1,}"), StartsWith("invalid JSON at line 1, column 9: "));
  CHECK_THAT(error_of("{\n\"a\": [1,\n 2\n"), StartsWith("invalid JSON at line 4, column 1: "));
}

TEST_CASE("nesting deeper than max_config_depth is refused before parsing", "[config][depth]") {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      attnbench::testing::parse_owned(text, "x.json", no_gpu);
    } catch (const input_error& e) {
      std::string all;  // a document within the bound fails for other reasons (no model, …): every problem
      for (const auto& p : e.problems()) all += p.message + "\n";
      return all;
    }
    return "no error";
  };
  const auto nested = [](int depth) {  // "name" an array nested `depth` deep
    return "{\"name\": " + std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']') +
           "}";
  };
  // 100,000 deep once crashed `validate` with SIGSEGV; now a clean error naming where.
  // The root object is the first level: the array's first bracket is column 10, its 64th is the 65th level.
  CHECK_THAT(error_of(nested(100000)),
             StartsWith("invalid JSON at line 1, column " + std::to_string(9 + max_config_depth) + ": ") &&
                 Contains("nested deeper than 64 levels"));
  CHECK_THAT(error_of(nested(max_config_depth)), Contains("nested deeper than 64 levels"));
  CHECK_THAT(error_of(nested(max_config_depth - 1)), !Contains("nested deeper"));  // within the bound: other errors
  CHECK_THAT(error_of(nested(max_config_depth - 1)), !Contains("invalid JSON"));
  // Brackets inside strings are text, not nesting.
  CHECK_THAT(error_of("{\"name\": \"" + std::string(100, '[') + "\\\"" + std::string(100, '{') + "\"}"),
             !Contains("nested deeper"));
}

TEST_CASE("the document must be an object", "[config]") {
  CHECK(only_problem(ordered_json::array(), "") == "expected an object; got an array");
}

TEST_CASE("unknown keys name the closest known key", "[config]") {
  ordered_json doc = minimal();
  SECTION("at the root") {
    doc["varients"] = ordered_json::array();
    CHECK(only_problem(doc, "varients") == "unknown key; did you mean \"variants\"?");
  }
  SECTION("in the model") {
    doc["model"]["hiden"] = 64;
    CHECK(only_problem(doc, "model.hiden") == "unknown key; did you mean \"hidden\"?");
  }
  SECTION("in a variant's batching") {
    doc["variants"][0]["batching"] = {{"batchsize", 4}};
    CHECK(only_problem(doc, "variants[0].batching.batchsize") == "unknown key; did you mean \"batch_size\"?");
  }
  SECTION("a long key within a third of its length") {
    doc["model"]["layer_norm_epsilon"] = 1e-5;
    CHECK(only_problem(doc, "model.layer_norm_epsilon") == "unknown key; did you mean \"layer_norm_eps\"?");
  }
  SECTION("in the lengths of a given kind") {
    doc["workload"]["lengths"]["lenght"] = 16;
    CHECK(only_problem(doc, "workload.lengths.lenght") == "unknown key; did you mean \"length\"?");
  }
  SECTION("nothing close: list the allowed keys") {
    doc["variants"][0]["bogus_kye"] = 1;
    // Then the keys registered techniques add (none in a build without src/techniques/).
    std::string registered;
    for (const auto& key : technique_option_keys())
      if (key != "precision") registered += ", " + key;
    CHECK(only_problem(doc, "variants[0].bogus_kye") ==
          "unknown key; allowed keys: name, description, precision, attention, sdpa_backend, "
          "batching, checkpointing, pending, offload, parallel, pipeline" + registered);
  }
  SECTION("tolerances are keyed by precision") {
    doc["check"] = {{"tolerances", {{"amp-bf61", 0.1}}}};
    CHECK(only_problem(doc, "check.tolerances.amp-bf61") == "unknown key; did you mean \"amp-bf16\"?");
  }
  SECTION("\"amp\" is a variant precision, not a tolerance key: its resolved precision's tolerance applies") {
    doc["check"] = {{"tolerances", {{"amp", 0.1}}}};
    CHECK_THAT(only_problem(doc, "check.tolerances.amp"), Catch::StartsWith("unknown key"));
  }
}

TEST_CASE("wrong types name the expected type and what was there", "[config]") {
  ordered_json doc = minimal();
  SECTION("a quoted integer") {
    doc["variants"][0]["batching"] = {{"batch_size", "8"}};
    CHECK(only_problem(doc, "variants[0].batching.batch_size") == "expected an integer; got \"8\"");
  }
  SECTION("a fraction for an integer") {
    doc["workload"]["samples"] = 8.5;
    CHECK(only_problem(doc, "workload.samples") == "expected an integer; got 8.5");
  }
  SECTION("an object for a string") {
    doc["name"] = ordered_json::object();
    CHECK(only_problem(doc, "name") == "expected a string; got an object");
  }
  SECTION("null for a number") {
    doc["measure"] = {{"min_time_s", nullptr}};
    CHECK(only_problem(doc, "measure.min_time_s") == "expected a number; got null");
  }
  SECTION("variants not a list") {
    doc["variants"] = {{"name", "fp32"}};
    auto ps = problems_of(doc);
    CHECK(message_at(ps, "variants") == "expected an array; got an object");
  }
  SECTION("a variant not an object") {
    doc["variants"].push_back("fp16");
    CHECK(only_problem(doc, "variants[1]") == "expected an object; got \"fp16\"");
  }
  SECTION("a description not a string") {
    doc["variants"][0]["description"] = 3;
    CHECK(only_problem(doc, "variants[0].description") == "expected a string; got 3");
  }
}

TEST_CASE("enumerations list the allowed values", "[config]") {
  ordered_json doc = minimal();
  SECTION("precision") {
    doc["variants"][0]["precision"] = "fp61";
    CHECK(only_problem(doc, "variants[0].precision") ==
          "expected one of fp32, amp-bf16, amp-fp16, amp, bf16, fp16, int8, int8-weight-only; got \"fp61\"");
  }
  SECTION("attention") {
    doc["variants"][0]["attention"] = "flash";
    CHECK(only_problem(doc, "variants[0].attention") ==
          "expected one of naive, sdpa, custom, cpu-flash, cuda-flash2; got \"flash\"");
  }
  SECTION("sdpa_backend") {
    doc["model"]["sdpa_backend"] = 2;
    CHECK(only_problem(doc, "model.sdpa_backend") ==
          "expected one of auto, flash, efficient, math, cudnn; got 2");
  }
  SECTION("padding") {
    doc["variants"][0]["batching"] = {{"padding", "shortest"}};
    CHECK(only_problem(doc, "variants[0].batching.padding") ==
          "expected one of max_length, longest; got \"shortest\"");
  }
  SECTION("batching kind") {
    doc["variants"][0]["batching"] = {{"kind", "adaptive"}};
    CHECK(only_problem(doc, "variants[0].batching.kind") == "expected one of static, dynamic; got \"adaptive\"");
  }
  SECTION("lengths kind") {
    doc["workload"]["lengths"] = {{"kind", "normal"}, {"length", 16}};
    CHECK(only_problem(doc, "workload.lengths.kind") ==
          "expected one of fixed, uniform, lognormal; got \"normal\"");
  }
  SECTION("device") {
    doc["device"] = "gpu";
    CHECK(only_problem(doc, "device") == "expected one of auto, cpu, cuda, cuda:N; got \"gpu\"");
    doc["device"] = "cuda:x";
    CHECK_THAT(only_problem(doc, "device"), Contains("got \"cuda:x\""));
  }
}

TEST_CASE("header problems", "[config]") {
  ordered_json doc = minimal();
  SECTION("schema version") {
    doc["schema_version"] = 2;
    CHECK(only_problem(doc, "schema_version") == "must be 1; got 2");
  }
  SECTION("missing name") {
    doc.erase("name");
    CHECK(only_problem(doc, "name") == "required");
  }
  SECTION("empty name") {
    doc["name"] = "";
    CHECK(only_problem(doc, "name") == "must not be empty");
  }
  SECTION("name with a space") {
    doc["name"] = "my run";
    CHECK_THAT(only_problem(doc, "name"), Contains("A-Z a-z 0-9 . _ -") && Contains("\"my run\""));
  }
  SECTION("negative threads") {
    doc["threads"] = -1;
    CHECK(only_problem(doc, "threads") == "must be >= 0; got -1");
  }
}

TEST_CASE("workload problems", "[config]") {
  ordered_json doc = minimal();
  ordered_json& w = doc["workload"];
  SECTION("samples at least one") {
    w["samples"] = 0;
    CHECK(only_problem(doc, "workload.samples") == "must be >= 1; got 0");
  }
  SECTION("samples and lengths required without a file") {
    w = ordered_json::object();
    auto ps = problems_of(doc);
    CHECK(ps.size() == 2);
    CHECK(message_at(ps, "workload.samples") == "required");
    CHECK(message_at(ps, "workload.lengths") == "required");
  }
  SECTION("max_length within the model's positions") {
    w["max_length"] = 600;
    CHECK(only_problem(doc, "workload.max_length") == "must be <= model.max_positions (512); got 600");
  }
  SECTION("fixed length within max_length") {
    w["max_length"] = 8;
    CHECK(only_problem(doc, "workload.lengths.length") == "must be <= workload.max_length (8); got 16");
  }
  SECTION("lengths hold at least [CLS] and [SEP]") {
    w["lengths"]["length"] = 1;
    CHECK(only_problem(doc, "workload.lengths.length") == "must be >= 2; got 1");
  }
  SECTION("uniform min <= max <= max_length") {
    w["lengths"] = {{"kind", "uniform"}, {"min", 64}, {"max", 32}};
    CHECK(only_problem(doc, "workload.lengths.min") == "must be <= max (32); got 64");
    w["lengths"] = {{"kind", "uniform"}, {"min", 8}, {"max", 64}};
    w["max_length"] = 32;
    CHECK(only_problem(doc, "workload.lengths.max") == "must be <= workload.max_length (32); got 64");
  }
  SECTION("uniform defaults max_length to max") {
    w["lengths"] = {{"kind", "uniform"}, {"min", 8}, {"max", 64}};
    config c = parse(doc);
    CHECK(c.workload.lengths.kind == length_kind::uniform);
    CHECK(c.workload.lengths.min == 8);
    CHECK(c.workload.lengths.max == 64);
    CHECK(c.workload.max_length == 64);
  }
  SECTION("lognormal median and sigma") {
    w["lengths"] = {{"kind", "lognormal"}, {"median", 0}, {"sigma", -1}, {"min", 2}, {"max", 8}};
    auto ps = problems_of(doc);
    CHECK(ps.size() == 2);
    CHECK(message_at(ps, "workload.lengths.median") == "must be > 0; got 0");
    CHECK(message_at(ps, "workload.lengths.sigma") == "must be >= 0; got -1");
  }
  SECTION("a kind's fields are required") {
    w["lengths"] = {{"kind", "lognormal"}, {"median", 30}, {"max", 8}};
    auto ps = problems_of(doc);
    CHECK(ps.size() == 2);
    CHECK(message_at(ps, "workload.lengths.sigma") == "required for kind \"lognormal\"");
    CHECK(message_at(ps, "workload.lengths.min") == "required for kind \"lognormal\"");
  }
  SECTION("keys of another kind") {
    w["lengths"] = {{"kind", "uniform"}, {"min", 2}, {"max", 8}, {"length", 4}};
    CHECK(only_problem(doc, "workload.lengths.length") == "unknown key; allowed keys: kind, min, max");
  }
  SECTION("missing kind") {
    w["lengths"] = {{"length", 4}};
    CHECK(only_problem(doc, "workload.lengths.kind") == "required");
  }
}

TEST_CASE("workload.file resolves against the config's directory", "[config]") {
  temp_dir tmp;
  fs::create_directories(tmp.path / "data");
  tmp.write("data/tokens.jsonl", "[101, 102]\n");
  ordered_json doc = minimal();
  doc["workload"] = {{"file", "data/tokens.jsonl"}};
  std::string source = (tmp.path / "exp.json").string();

  SECTION("samples and lengths are optional; max_length defaults to max_positions") {
    tmp.write("exp.json", doc.dump());
    config c = load_config(source, no_gpu);
    CHECK(c.source_path == source);
    CHECK(fs::path(c.workload.file) == tmp.path / "data" / "tokens.jsonl");
    CHECK(c.workload.lengths.kind == length_kind::file);
    CHECK(c.workload.samples == 0);
    CHECK(c.workload.max_length == 512);
  }
  SECTION("samples caps the count") {
    doc["workload"]["samples"] = 3;
    config c = attnbench::testing::parse_owned(doc.dump(), source, no_gpu);
    CHECK(c.workload.samples == 3);
  }
  SECTION("an absolute path stays") {
    doc["workload"]["file"] = (tmp.path / "data" / "tokens.jsonl").string();
    config c = attnbench::testing::parse_owned(doc.dump(), "elsewhere/exp.json", no_gpu);
    CHECK(fs::path(c.workload.file) == tmp.path / "data" / "tokens.jsonl");
  }
  SECTION("a missing file names the resolved path") {
    doc["workload"]["file"] = "data/missing.jsonl";
    try {
      attnbench::testing::parse_owned(doc.dump(), source, no_gpu);
      FAIL("expected an input_error");
    } catch (const input_error& e) {
      std::string resolved = (tmp.path / "data" / "missing.jsonl").string();
      CHECK(message_at(e.problems(), "workload.file") == "\"" + resolved + "\" does not exist");
    }
  }
  SECTION("a directory is not a token file") {
    doc["workload"]["file"] = "data";
    try {
      attnbench::testing::parse_owned(doc.dump(), source, no_gpu);
      FAIL("expected an input_error");
    } catch (const input_error& e) {
      CHECK_THAT(message_at(e.problems(), "workload.file"), Contains("is not a regular file"));
    }
  }
  SECTION("lengths conflict with a file") {
    doc["workload"]["lengths"] = {{"kind", "fixed"}, {"length", 8}};
    try {
      attnbench::testing::parse_owned(doc.dump(), source, no_gpu);
      FAIL("expected an input_error");
    } catch (const input_error& e) {
      CHECK(message_at(e.problems(), "workload.lengths") ==
            "not allowed with workload.file: lengths come from the file");
    }
  }
}

TEST_CASE("measure problems and defaults", "[config]") {
  ordered_json doc = minimal();
  SECTION("max_repetitions below repetitions") {
    doc["measure"] = {{"repetitions", 10}, {"max_repetitions", 5}};
    CHECK(only_problem(doc, "measure.max_repetitions") == "must be >= measure.repetitions (10); got 5");
  }
  SECTION("the default bound rises to the repetitions asked for") {
    doc["measure"] = {{"repetitions", 200}};
    CHECK(parse(doc).measure.max_repetitions == 200);
  }
  SECTION("repetitions given: fixed mode") {
    doc["measure"] = {{"repetitions", 7}};
    const config c = parse(doc);
    CHECK(!c.measure.adaptive);
    CHECK(c.measure.repetitions == 7);
  }
  SECTION("adaptive settings") {
    doc["measure"] = {{"min_repetitions", 3}, {"target_rel_half_width", 0.05}, {"max_time_s", 10}};
    const config c = parse(doc);
    CHECK(c.measure.adaptive);
    CHECK(c.measure.min_repetitions == 3);
    CHECK(c.measure.target_rel_half_width == 0.05);
    CHECK(c.measure.max_time_s == 10);
  }
  SECTION("adaptive settings beside a fixed count are refused, naming the key") {
    doc["measure"] = {{"repetitions", 5}, {"target_rel_half_width", 0.05}};
    CHECK(only_problem(doc, "measure.target_rel_half_width") ==
          "applies to adaptive repetitions only; remove measure.repetitions (fixed mode) to use it");
  }
  SECTION("adaptive bounds") {
    doc["measure"] = {{"min_repetitions", 1}, {"target_rel_half_width", 0}, {"max_time_s", -1}};
    auto ps = problems_of(doc);
    CHECK(ps.size() == 3);
    CHECK(message_at(ps, "measure.min_repetitions") == "must be >= 2; got 1");
    CHECK(message_at(ps, "measure.target_rel_half_width") == "must be > 0; got 0");
    CHECK(message_at(ps, "measure.max_time_s") == "must be >= 0; got -1");
    doc["measure"] = {{"min_repetitions", 10}, {"max_repetitions", 5}};
    CHECK(only_problem(doc, "measure.max_repetitions") == "must be >= measure.min_repetitions (10); got 5");
  }
  SECTION("ranges") {
    doc["measure"] = {{"warmup", -1}, {"repetitions", 0}, {"min_time_s", -0.5}};
    auto ps = problems_of(doc);
    CHECK(ps.size() == 3);
    CHECK(message_at(ps, "measure.warmup") == "must be >= 0; got -1");
    CHECK(message_at(ps, "measure.repetitions") == "must be >= 1; got 0");
    CHECK(message_at(ps, "measure.min_time_s") == "must be >= 0; got -0.5");
  }
}

TEST_CASE("tolerances: missing ones take defaults, given ones are positive", "[config]") {
  ordered_json doc = minimal();
  doc["check"] = {{"tolerances", {{"amp-bf16", 0.02}}}};
  config c = parse(doc);
  CHECK(c.check.tolerance.at(precision_kind::amp_bf16) == 0.02);
  CHECK(c.check.tolerance.at(precision_kind::fp32) == defaults::tolerance(precision_kind::fp32));
  CHECK(c.check.tolerance.at(precision_kind::amp_fp16) == defaults::tolerance(precision_kind::amp_fp16));
  doc["check"]["tolerances"]["fp32"] = 0;
  CHECK(only_problem(doc, "check.tolerances.fp32") == "must be > 0; got 0");
}

TEST_CASE("variant names and the baseline", "[config]") {
  ordered_json doc = minimal();
  doc["variants"].push_back({{"name", "sdpa-math"}, {"sdpa_backend", "math"}});
  SECTION("duplicate names are reported at the second") {
    doc["variants"].push_back({{"name", "fp32"}});
    CHECK(only_problem(doc, "variants[2].name") == "duplicate variant name \"fp32\" (first at variants[0])");
  }
  SECTION("a variant needs a name") {
    doc["variants"].push_back({{"precision", "fp32"}});
    CHECK(only_problem(doc, "variants[2].name") == "required");
  }
  SECTION("no variants") {
    doc["variants"] = ordered_json::array();
    CHECK(only_problem(doc, "variants") == "must list at least one variant");
  }
  SECTION("missing variants and baseline") {
    doc.erase("variants");
    doc.erase("baseline");
    auto ps = problems_of(doc);
    CHECK(ps.size() == 2);
    CHECK(message_at(ps, "variants") == "required");
    CHECK(message_at(ps, "baseline") == "required");
  }
  SECTION("a baseline typo") {
    doc["baseline"] = "fp23";
    CHECK(only_problem(doc, "baseline") == "no variant named \"fp23\"; did you mean \"fp32\"?");
  }
  SECTION("a baseline far from every name") {
    doc["baseline"] = "reference";
    CHECK(only_problem(doc, "baseline") == "no variant named \"reference\"; variants are: fp32, sdpa-math");
  }
  SECTION("a pending baseline") {
    doc["variants"][1]["pending"] = "later";
    doc["baseline"] = "sdpa-math";
    CHECK(only_problem(doc, "baseline") == "variant \"sdpa-math\" is pending and cannot be the baseline");
  }
  SECTION("find_variant") {
    config c = parse(doc);
    REQUIRE(find_variant(c, "sdpa-math") != nullptr);
    CHECK(find_variant(c, "sdpa-math")->backend == sdpa_backend::math);
    CHECK(find_variant(c, "nope") == nullptr);
  }
}

TEST_CASE("a pending variant keeps technique blocks unvalidated", "[config]") {
  ordered_json doc = minimal();
  SECTION("a pending variant keeps them unvalidated") {
    doc["variants"].push_back(
        {{"name", "tp2"}, {"pending", "parallel lands later"}, {"parallel", {{"tp", "x"}}}});
    config c = parse(doc);
    CHECK(c.variants[1].techniques.at("parallel") == nlohmann::json{{"tp", "x"}});
  }
  SECTION("a pending variant still rejects unknown keys and an empty reason") {
    doc["variants"].push_back({{"name", "x"}, {"pending", ""}, {"ofload", 1}});
    auto ps = problems_of(doc);
    CHECK(ps.size() == 2);
    CHECK(message_at(ps, "variants[1].pending") == "must not be empty");
    CHECK(message_at(ps, "variants[1].ofload") == "unknown key; did you mean \"offload\"?");
  }
}

TEST_CASE("the device must exist and suit every variant", "[config]") {
  ordered_json doc = minimal();
  SECTION("a CUDA device beyond the count") {
    doc["device"] = "cuda:1";
    CHECK(only_problem(doc, "device") == "\"cuda:1\" is not available: this machine has 0 CUDA devices");
    CHECK(only_problem(doc, "device", one_gpu) ==
          "\"cuda:1\" is not available: this machine has 1 CUDA device");
  }
  SECTION("cuda without a GPU") {
    doc["device"] = "cuda";
    CHECK(only_problem(doc, "device") == "\"cuda\" is not available: this machine has 0 CUDA devices");
    CHECK(parse(doc, one_gpu).device == "cuda");
  }
  SECTION("CUDA-only backends on a device that resolves to the CPU") {
    auto backend = GENERATE("efficient", "cudnn");
    doc["variants"][0]["sdpa_backend"] = backend;
    CHECK_THAT(only_problem(doc, "variants[0].sdpa_backend"),
               Contains(std::string("\"") + backend + "\" needs a CUDA device") &&
                   Contains("device \"auto\" runs on the CPU"));
    config c = parse(doc, one_gpu);  // auto resolves to cuda
    CHECK(c.device == "auto");
    doc["device"] = "cpu";
    CHECK_THAT(only_problem(doc, "variants[0].sdpa_backend", one_gpu),
               Contains("device \"cpu\" runs on the CPU"));
  }
  SECTION("flash and math run on the CPU") {
    doc["device"] = "cpu";
    doc["variants"][0]["sdpa_backend"] = GENERATE("flash", "math", "auto");
    CHECK_NOTHROW(parse(doc));
  }
  SECTION("a backend on a naive variant") {
    doc["variants"][0]["attention"] = "naive";
    doc["variants"][0]["sdpa_backend"] = "flash";
    CHECK(only_problem(doc, "variants[0].sdpa_backend") ==
          "\"flash\" applies only to attention \"sdpa\"; attention here is \"naive\"");
  }
  SECTION("a naive variant does not inherit the model's backend") {
    doc["model"]["sdpa_backend"] = "flash";
    doc["variants"].push_back({{"name", "naive"}, {"attention", "naive"}});
    config c = parse(doc);
    CHECK(c.variants[0].backend == sdpa_backend::flash);
    CHECK(c.variants[1].backend == sdpa_backend::auto_select);
  }
  SECTION("amp-fp16 on a CPU whose autocast lacks float16") {
    doc["variants"].push_back({{"name", "fp16"}, {"precision", "amp-fp16"}});
    CHECK_THAT(only_problem(doc, "variants[1].precision", no_cpu_fp16), Contains("amp-fp16 on the CPU"));
    CHECK_NOTHROW(parse(doc, no_gpu));
    CHECK_NOTHROW(parse(doc, device_caps{1, false}));   // auto resolves to cuda
    doc["variants"][1]["pending"] = "not on this CPU";  // never runs, so not checked
    CHECK_NOTHROW(parse(doc, no_cpu_fp16));
  }
}

TEST_CASE("output formats and directory", "[config]") {
  ordered_json doc = minimal();
  SECTION("unknown format") {
    doc["output"] = {{"formats", {"json", "xml"}}};
    CHECK(only_problem(doc, "output.formats[1]") == "expected one of json, csv, md, html; got \"xml\"");
  }
  SECTION("duplicate format") {
    doc["output"] = {{"formats", {"csv", "md", "csv"}}};
    CHECK(only_problem(doc, "output.formats[2]") == "duplicate format \"csv\"");
  }
  SECTION("empty format list") {
    doc["output"] = {{"formats", ordered_json::array()}};
    CHECK(only_problem(doc, "output.formats") == "must list at least one format");
  }
  SECTION("a relative dir stays as written") {
    doc["output"] = {{"dir", "some/where"}};
    CHECK(parse(doc).output.dir == "some/where");
  }
  SECTION("an ancestor that is a file") {
    temp_dir tmp;
    tmp.write("file", "x");
    std::string dir = (tmp.path / "file" / "sub").string();
    doc["output"] = {{"dir", dir}};
    CHECK(only_problem(doc, "output.dir") ==
          "cannot create \"" + dir + "\": \"" + (tmp.path / "file").string() + "\" is not a directory");
  }
  SECTION("the dir itself is a file") {
    temp_dir tmp;
    std::string file = tmp.write("file", "x").string();
    doc["output"] = {{"dir", file}};
    CHECK(only_problem(doc, "output.dir") == "\"" + file + "\" is not a directory");
  }
  SECTION("a read-only ancestor") {
    temp_dir tmp;
    fs::create_directories(tmp.path / "ro");
    fs::permissions(tmp.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    if (::access((tmp.path / "ro").c_str(), W_OK) == 0) {
      WARN("skipped: this user writes anywhere (root?)");
      return;
    }
    doc["output"] = {{"dir", (tmp.path / "ro" / "out").string()}};
    CHECK_THAT(only_problem(doc, "output.dir"), Contains("is not writable"));
  }
}

TEST_CASE("every problem is reported at once", "[config]") {
  ordered_json doc = minimal();
  doc["nmae"] = "x";
  doc["model"]["heads"] = 3;
  doc["workload"]["samples"] = 0;
  doc["variants"][0]["precision"] = "fp61";
  doc["variants"].push_back({{"name", "fp32"}});
  doc["baseline"] = "fp33";
  doc["device"] = "cuda:1";
  try {
    parse(doc);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    const auto& ps = e.problems();
    CHECK(ps.size() == 7);
    CHECK(message_at(ps, "nmae") == "unknown key; did you mean \"name\"?");
    CHECK_THAT(message_at(ps, "model.heads"), Contains("divisible"));
    CHECK_THAT(message_at(ps, "workload.samples"), Contains(">= 1"));
    CHECK_THAT(message_at(ps, "variants[0].precision"), Contains("fp61"));
    CHECK_THAT(message_at(ps, "variants[1].name"), Contains("duplicate"));
    CHECK_THAT(message_at(ps, "baseline"), Contains("did you mean \"fp32\"?"));
    CHECK_THAT(message_at(ps, "device"), Contains("0 CUDA devices"));
    // what() lists them one per line as "path: message".
    CHECK_THAT(std::string(e.what()),
               Contains("variants[0].precision: expected one of fp32, amp-bf16, amp-fp16, amp, bf16, fp16, int8, int8-weight-only; "
                        "got \"fp61\"\n"));
  }
}

TEST_CASE("load_config reports an unreadable file by its path", "[config]") {
  temp_dir tmp;
  std::string missing = (tmp.path / "nope.json").string();
  CHECK_THROWS_WITH(load_config(missing, no_gpu),
                    "cannot read config file: \"" + missing + "\" does not exist");
  CHECK_THROWS_WITH(load_config(tmp.path.string(), no_gpu), Contains("is not a regular file"));
  std::string bad = tmp.write("bad.json", "{\n  \"name\": ,\n}").string();
  CHECK_THROWS_WITH(load_config(bad, no_gpu), StartsWith("invalid JSON at line 2, column 11"));
}

TEST_CASE("enum spellings match the schema", "[config]") {
  CHECK(to_string(precision_kind::fp32) == "fp32");
  CHECK(to_string(precision_kind::amp_bf16) == "amp-bf16");
  CHECK(to_string(precision_kind::amp_fp16) == "amp-fp16");
  CHECK(to_string(attention_kind::naive) == "naive");
  CHECK(to_string(attention_kind::sdpa) == "sdpa");
  CHECK(to_string(sdpa_backend::auto_select) == "auto");
  CHECK(to_string(sdpa_backend::flash) == "flash");
  CHECK(to_string(sdpa_backend::efficient) == "efficient");
  CHECK(to_string(sdpa_backend::math) == "math");
  CHECK(to_string(sdpa_backend::cudnn) == "cudnn");
  CHECK(to_string(padding_kind::max_length) == "max_length");
  CHECK(to_string(padding_kind::longest) == "longest");
  CHECK(to_string(length_kind::fixed) == "fixed");
  CHECK(to_string(length_kind::uniform) == "uniform");
  CHECK(to_string(length_kind::lognormal) == "lognormal");
  CHECK(to_string(length_kind::file) == "file");
}

TEST_CASE("precisions registered by techniques: values, tolerances and what they exclude", "[config][precision]") {
  auto doc = minimal();
  doc["variants"].push_back({{"name", "cast"}, {"precision", "bf16"}});
  SECTION("a registered value is owned by its technique and runs without autocast") {
    const config c = parse(doc);
    const variant_config& v = *find_variant(c, "cast");
    CHECK(v.precision == precision_kind::fp32);
    CHECK(v.techniques.at("precision") == "bf16");
    CHECK(c.check.technique_tolerance.empty());  // the technique's default applies
  }
  SECTION("an unknown value lists the core and the registered ones") {
    doc["variants"][1]["precision"] = "int4";  // int8 is registered now (techniques/int8_quantization.cpp)
    const std::string m = only_problem(doc, "variants[1].precision");
    CHECK_THAT(m, Contains("fp32, amp-bf16, amp-fp16"));
    CHECK_THAT(m, Contains("bf16, fp16"));
    CHECK_THAT(m, Contains("\"int4\""));
  }
  SECTION("check.tolerances takes the registered values too") {
    doc["check"] = {{"tolerances", {{"bf16", 0.02}}}};
    CHECK(parse(doc).check.technique_tolerance.at("bf16") == 0.02);
    doc["check"]["tolerances"]["int4"] = 0.02;
    CHECK_THAT(only_problem(doc, "check.tolerances.int4"), Contains("unknown key"));
  }
  SECTION("blocks the technique cannot be combined with") {
    doc["variants"][1]["offload"] = {{"target", "cpu"}};
    CHECK(only_problem(doc, "variants[1].precision") ==
          "\"precision\" \"bf16\" is not supported together with offload in one variant (casts a copy of the model "
          "to bf16 for the plain executor)");
  }
  SECTION("scenarios it does not run in") {
    doc["scenario"] = "train";
    doc["train"] = ordered_json::object();
    const auto ps = problems_of(doc);
    bool named = false;
    for (const auto& p : ps)
      named = named || (p.path == "variants[1].precision" &&
                        p.message == "\"precision\" \"bf16\" runs in the offline, server, generate scenarios only, not in \"train\"");
    INFO(input_error(ps).what());
    CHECK(named);
  }
}

TEST_CASE("custom attention: the device's kernel or one by name, forward only, on its own device", "[config]") {
  ordered_json doc = minimal();
  doc["variants"][0]["attention"] = "custom";
  auto c = parse(doc);
  CHECK(c.variants[0].attention == attention_kind::custom);
  CHECK(c.variants[0].kernel.empty());
  CHECK(c.variants[0].backend == sdpa_backend::auto_select);
  doc["variants"][0]["attention"] = "cpu-flash";
  c = parse(doc);
  CHECK(c.variants[0].attention == attention_kind::custom);
  CHECK(c.variants[0].kernel == "cpu-flash");
  doc["variants"][0]["attention"] = "cuda-flash2";
  CHECK_THAT(only_problem(doc, "variants[0].attention"),
             Contains("kernel \"cuda-flash2\" runs on cuda") && Contains("runs on the CPU"));
  CHECK_NOTHROW(parse(doc, one_gpu));  // "auto" resolves to the GPU there
  // The model's default reaches variants that do not say.
  doc = minimal();
  doc["model"]["attention"] = "cpu-flash";
  c = parse(doc);
  CHECK(c.variants[0].kernel == "cpu-flash");
  CHECK(c.variants[0].attention == attention_kind::custom);
}

TEST_CASE("decoder presets and the generate block: shapes, defaults and the rules that tie them", "[config][decoder]") {
  ordered_json doc = minimal();
  doc["scenario"] = "generate";
  doc["model"]["preset"] = "llama-160m";
  SECTION("a decoder preset sets its family, grouped-query heads and rope; max_new_tokens defaults") {
    const config c = parse(doc);
    CHECK(c.model.family == model_family::llama);
    CHECK(c.model.layers == 12);
    CHECK(c.model.heads == 12);
    CHECK(c.model.kv_heads == 4);
    CHECK(c.model.max_positions == 2048);
    CHECK(c.model.rope_theta == 10000.0);
    CHECK(c.generate.max_new_tokens == 32);
  }
  SECTION("gpt2 keeps every head for keys and values, and max_new_tokens is read") {
    doc["model"]["preset"] = "gpt2";
    doc["generate"] = {{"max_new_tokens", 7}};
    const config c = parse(doc);
    CHECK(c.model.family == model_family::gpt2);
    CHECK(c.model.kv_heads == 12);
    CHECK(c.model.vocab_size == 50257);
    CHECK(c.generate.max_new_tokens == 7);
  }
  SECTION("generate needs a decoder") {
    doc["model"]["preset"] = "bert-tiny";
    CHECK(only_problem(doc, "scenario").find("\"generate\" needs a decoder") == 0);
  }
  SECTION("a decoder runs in generate and server only") {
    doc.erase("scenario");
    CHECK(only_problem(doc, "scenario") == "a llama decoder runs in the \"generate\" and \"server\" scenarios only; "
                                           "\"offline\" runs the encoder classifier");
  }
  SECTION("the generate block outside generate") {
    doc["model"]["preset"] = "bert-tiny";
    doc.erase("scenario");
    doc["generate"] = {{"max_new_tokens", 4}};
    CHECK(only_problem(doc, "generate") ==
          "only used with \"scenario\": \"generate\", or \"server\" with a decoder model");
  }
  SECTION("a decoder in the server scenario reads the generate block; an encoder's server does not") {
    doc["scenario"] = "server";
    doc["server"] = {{"rates", {1, 2}}, {"latency_bound_ms", 500}};
    doc["generate"] = {{"max_new_tokens", 9}};
    CHECK(parse(doc).generate.max_new_tokens == 9);
    doc["model"]["preset"] = "bert-tiny";
    CHECK(only_problem(doc, "generate") ==
          "only used with \"scenario\": \"generate\", or \"server\" with a decoder model");
  }
  SECTION("continuous batching's KV budget must hold the longest prompt and its new tokens") {
    doc["workload"]["lengths"] = {{"kind", "fixed"}, {"length", 40}};
    doc["generate"] = {{"max_new_tokens", 8}};
    doc["variants"][0]["batching"] = {{"kind", "dynamic"}, {"max_tokens", 47}, {"max_batch_size", 4}};
    CHECK(only_problem(doc, "variants[0].batching.max_tokens") ==
          "a decoder's continuous batching holds a KV cache of prompt + max_new_tokens positions per sequence; the "
          "longest prompt needs 48 (workload.max_length 40 + generate.max_new_tokens 8), more than max_tokens (47)");
    doc["variants"][0]["batching"]["max_tokens"] = 48;
    CHECK(parse(doc).variants[0].batching.max_tokens == 48);
  }
  SECTION("prompt plus new tokens past the positions") {
    doc["model"]["preset"] = "gpt2-tiny";  // 256 positions
    doc["workload"]["lengths"] = {{"kind", "fixed"}, {"length", 250}};
    doc["generate"] = {{"max_new_tokens", 8}};
    CHECK(only_problem(doc, "generate.max_new_tokens") ==
          "workload.max_length (250) + generate.max_new_tokens (8) is more than model.max_positions (256): the "
          "longest prompt could not be decoded to the end");
  }
  SECTION("at least one new token") {
    doc["generate"] = {{"max_new_tokens", 0}};
    CHECK(only_problem(doc, "generate.max_new_tokens") == "must be >= 1; got 0");
  }
}
