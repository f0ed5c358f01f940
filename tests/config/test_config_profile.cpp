// The `profile` block of the schema.
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/error.hpp"
#include "config/config_defaults.hpp"
#include "config/config_parser.hpp"
#include "config/profile_config.hpp"
#include "test_support.hpp"

using namespace attnbench;
using ordered_json = nlohmann::ordered_json;

namespace {

ordered_json base() {
  return ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "fixed", "length": 16}},
    "output": {"dir": "/tmp"},
    "variants": [{"name": "a"}],
    "baseline": "a"
  })");
}

using testing::parse;
using testing::problems_of;

}  // namespace

TEST_CASE("profile: defaults come from the defaults table", "[config]") {
  const profile_config p = profile_config_of(parse(base()));
  CHECK(p.wait == defaults::profile_wait);
  CHECK(p.warmup == defaults::profile_warmup);
  CHECK(p.active == defaults::profile_active);
  CHECK(p.repeat == defaults::profile_repeat);
  CHECK(p.profile_memory == defaults::profile_memory);
  CHECK(p.top == defaults::profile_top);
}

TEST_CASE("profile: every key is read", "[config]") {
  auto doc = base();
  doc["profile"] = ordered_json::parse(R"({"skip_first": 2, "wait": 3, "warmup": 0, "active": 4, "repeat": 2,
    "record_shapes": false, "profile_memory": false, "with_flops": false, "with_stack": true, "top": 7})");
  const profile_config p = profile_config_of(parse(doc));
  CHECK(p.skip_first == 2);
  CHECK(p.wait == 3);
  CHECK(p.warmup == 0);
  CHECK(p.active == 4);
  CHECK(p.repeat == 2);
  CHECK_FALSE(p.record_shapes);
  CHECK_FALSE(p.profile_memory);
  CHECK_FALSE(p.with_flops);
  CHECK(p.with_stack);
  CHECK(p.top == 7);
}

TEST_CASE("profile: an empty schedule and bad values are errors with their paths", "[config]") {
  auto doc = base();
  doc["profile"] = ordered_json::parse(R"({"active": 0, "repeat": 0, "wait": -1, "top": 0, "actve": 2})");
  const auto problems = problems_of(doc);
  std::vector<std::string> text;
  for (const auto& p : problems) text.push_back(p.to_string());
  const auto has = [&](const std::string& s) {
    return std::any_of(text.begin(), text.end(),
                       [&](const std::string& t) { return t.find(s) != std::string::npos; });
  };
  CHECK(has("profile.active: must be >= 1: a schedule without active steps records nothing"));
  CHECK(has("profile.repeat: must be >= 1"));
  CHECK(has("profile.wait: must be >= 0"));
  CHECK(has("profile.top: must be >= 1"));
  CHECK(has("profile.actve: unknown key; did you mean \"active\"?"));
  CHECK(problems.size() == 5);
}
