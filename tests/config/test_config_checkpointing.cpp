// The variant's checkpointing block and the train scenario's block: values, defaults and every
// error path with its JSON path.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "test_support.hpp"
#include "config/config_defaults.hpp"
#include "config/config_parser.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

const device_caps no_gpu{0, true};

// bert-tiny has 2 layers.
ordered_json with_checkpointing(ordered_json block) {
  auto doc = ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 16}},
    "variants": [{"name": "base"}, {"name": "ckpt"}],
    "baseline": "base"
  })");
  doc["variants"][1]["checkpointing"] = std::move(block);
  return doc;
}

std::vector<problem> problems_of(const ordered_json& doc) {
  try {
    attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  } catch (const input_error& e) {
    return e.problems();
  }
  FAIL("expected an input_error for " << doc.dump());
  return {};
}

std::string only_problem(const ordered_json& doc, const std::string& path) {
  auto ps = problems_of(doc);
  INFO("problems: " << input_error(ps).what());
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == path);
  return ps[0].message;
}

}  // namespace

TEST_CASE("checkpointing block: policies and their segment length", "[config]") {
  auto c = attnbench::testing::parse_owned(with_checkpointing({{"policy", "every"}, {"every", 2}}).dump(), "", no_gpu);
  CHECK(c.variants[0].checkpointing.policy == checkpoint_policy::none);
  CHECK(c.variants[1].checkpointing.policy == checkpoint_policy::every);
  CHECK(c.variants[1].checkpointing.every == 2);
  c = attnbench::testing::parse_owned(with_checkpointing({{"policy", "sqrt"}}).dump(), "", no_gpu);
  CHECK(c.variants[1].checkpointing.policy == checkpoint_policy::sqrt);
  c = attnbench::testing::parse_owned(with_checkpointing({{"policy", "none"}}).dump(), "", no_gpu);
  CHECK(c.variants[1].checkpointing.policy == checkpoint_policy::none);
}

TEST_CASE("checkpointing block: bad input names its path", "[config]") {
  CHECK(only_problem(with_checkpointing({{"policy", "every"}, {"every", 0}}),
                     "variants[1].checkpointing.every") == "must be >= 1; got 0");
  CHECK(only_problem(with_checkpointing({{"policy", "every"}, {"every", 3}}),
                     "variants[1].checkpointing.every") == "must be <= model.layers (2); got 3");
  CHECK(only_problem(with_checkpointing({{"policy", "every"}}), "variants[1].checkpointing.every") ==
        "required for policy \"every\"");
  CHECK(only_problem(with_checkpointing({{"policy", "sqrt"}, {"every", 1}}),
                     "variants[1].checkpointing.every") == "only used with policy \"every\"");
  CHECK(only_problem(with_checkpointing({{"policy", "half"}}), "variants[1].checkpointing.policy") ==
        "expected one of none, every, sqrt; got \"half\"");
  CHECK(only_problem(with_checkpointing(ordered_json::object()), "variants[1].checkpointing.policy") ==
        "required");
  CHECK(only_problem(with_checkpointing(true), "variants[1].checkpointing") ==
        "expected an object; got true");
  CHECK(only_problem(with_checkpointing({{"policy", "sqrt"}, {"evry", 1}}),
                     "variants[1].checkpointing.evry") == "unknown key; did you mean \"every\"?");
}

TEST_CASE("train block: defaults, values and errors", "[config]") {
  auto doc = with_checkpointing({{"policy", "sqrt"}});
  doc["scenario"] = "train";
  auto c = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  CHECK(c.scenario == "train");
  CHECK(c.train.learning_rate == defaults::learning_rate);
  CHECK(c.train.weight_decay == defaults::weight_decay);
  CHECK(c.train.dropout == 0);
  CHECK(c.train.seed == defaults::train_seed);

  doc["train"] = {{"learning_rate", 1e-3}, {"weight_decay", 0}, {"dropout", 0.1}, {"seed", 9}};
  c = attnbench::testing::parse_owned(doc.dump(), "", no_gpu);
  CHECK(c.train.learning_rate == 1e-3);
  CHECK(c.train.weight_decay == 0);
  CHECK(c.train.dropout == 0.1);
  CHECK(c.train.seed == 9);

  doc["train"] = {{"dropout", 1}};
  CHECK(only_problem(doc, "train.dropout") == "must be < 1; got 1");
  doc["train"] = {{"learning_rate", 0}};
  CHECK(only_problem(doc, "train.learning_rate") == "must be > 0; got 0");
  doc["scenario"] = "offline";
  doc["train"] = ordered_json::object();
  CHECK(only_problem(doc, "train") == "only used with \"scenario\": \"train\"");
}

TEST_CASE("train scenario: a forward-only attention kernel is refused before anything runs", "[config]") {
  auto doc = with_checkpointing({{"policy", "sqrt"}});
  doc["scenario"] = "train";
  doc["variants"][1]["attention"] = "custom";
  CHECK_THAT(only_problem(doc, "variants[1].attention"), Catch::Contains("forward-only kernel"));
}
