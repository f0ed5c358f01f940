// The schema declarations (config/config_schema.hpp) and the JSON Schema generated from them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "config/config_defaults.hpp"
#include "config/config_schema.hpp"

namespace attnbench {
namespace {

using ordered_json = nlohmann::ordered_json;

const ordered_json& property(const ordered_json& object, const std::string& key) {
  REQUIRE(object.contains("properties"));
  REQUIRE(object["properties"].contains(key));
  return object["properties"][key];
}

std::vector<std::string> strings(const ordered_json& array) { return array.get<std::vector<std::string>>(); }

}  // namespace

TEST_CASE("schema: keys carry their declared type, default, minimum and help", "[config]") {
  const ordered_json s = json_schema(*config_document_schema());
  CHECK(s["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  CHECK(s["additionalProperties"] == false);
  CHECK(strings(s["required"]) == std::vector<std::string>{"name", "model", "workload", "variants", "baseline"});

  const ordered_json& model = property(s, "model");
  CHECK(model["additionalProperties"] == false);
  CHECK(property(model, "layers")["type"] == "integer");
  CHECK(property(model, "layers")["minimum"] == 1);
  CHECK(property(model, "vocab_size")["default"] == defaults::vocab_size);
  CHECK(property(model, "max_positions")["minimum"] == defaults::min_sample_length);
  CHECK(property(model, "layer_norm_eps")["exclusiveMinimum"] == 0);
  CHECK(property(model, "layer_norm_eps")["default"] == defaults::layer_norm_eps);
  CHECK(strings(property(model, "sdpa_backend")["enum"]) ==
        std::vector<std::string>{"auto", "flash", "efficient", "math", "cudnn"});
  CHECK_FALSE(property(model, "layers")["description"].get<std::string>().empty());

  const ordered_json& measure = property(s, "measure");
  CHECK(property(measure, "warmup")["default"] == defaults::warmup);
  CHECK(property(measure, "min_repetitions")["minimum"] == 2);
  CHECK(property(measure, "target_rel_half_width")["type"] == "number");

  const ordered_json& dropout = property(property(s, "train"), "dropout");
  CHECK(dropout["minimum"] == 0);
  CHECK(dropout["exclusiveMaximum"] == 1);
  CHECK(property(property(s, "server"), "latency_bound_ms")["exclusiveMinimum"] == 0);
  CHECK(strings(property(s, "server")["required"]) == std::vector<std::string>{"latency_bound_ms"});

  const ordered_json& variant = property(s, "variants")["items"];
  CHECK(variant["additionalProperties"] == false);
  CHECK(strings(variant["required"]) == std::vector<std::string>{"name"});
  const ordered_json& batching = property(variant, "batching");
  CHECK(property(batching, "batch_size")["default"] == defaults::batch_size);
  CHECK(strings(property(batching, "padding")["enum"]) == std::vector<std::string>{"max_length", "longest"});
  CHECK(strings(property(variant, "pipeline")["required"]) == std::vector<std::string>{"stages", "micro_batch"});
}

TEST_CASE("schema: values and keys registered techniques add appear in it", "[config]") {
  const ordered_json s = json_schema(*config_document_schema());
  const ordered_json& variant = property(s, "variants")["items"];
  const auto precisions = strings(property(variant, "precision")["enum"]);
  for (const char* value : {"fp32", "amp-bf16", "amp-fp16", "amp", "bf16", "fp16", "int8"})
    CHECK(std::count(precisions.begin(), precisions.end(), value) == 1);
  CHECK(strings(property(variant, "linear")["enum"]) == std::vector<std::string>{"packed"});
  CHECK(property(variant, "pruning")["type"] == "object");
  // Each registered precision has a tolerance, bounded by its class's.
  const ordered_json& tolerances = property(property(s, "check"), "tolerances");
  CHECK(property(tolerances, "int8")["exclusiveMinimum"] == 0);
  CHECK(property(tolerances, "fp32")["maximum"].get<double>() == Approx(5e-6));
}

TEST_CASE("schema: attention takes names a higher layer adds, or any string without them", "[config]") {
  const ordered_json open = property(property(json_schema(*config_document_schema()), "variants")["items"],
                                     "attention");
  REQUIRE(open.contains("anyOf"));
  CHECK(strings(open["anyOf"][0]["enum"]) == std::vector<std::string>{"naive", "sdpa", "custom"});
  CHECK(open["anyOf"][1]["type"] == "string");

  json_schema_options options;
  options.extra_choices["attention"] = {"cpu-flash", "sdpa"};
  const ordered_json closed =
      property(property(json_schema(*config_document_schema(), options), "model"), "attention");
  CHECK(strings(closed["enum"]) == std::vector<std::string>{"naive", "sdpa", "custom", "cpu-flash"});
  CHECK_FALSE(closed.contains("anyOf"));
}

TEST_CASE("schema: a key read but not declared is a programming error", "[config]") {
  const auto s = config_document_schema();
  CHECK(s->key("model").block->key("layers").minimum == 1);
  CHECK_THROWS_AS(s->key("model").block->key("no_such_key"), std::logic_error);
}

}  // namespace attnbench
