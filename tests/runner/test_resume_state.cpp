// resume.json (runner/resume_state.hpp): what an interrupted run leaves for `run --resume`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "common/error.hpp"
#include "runner/resume_state.hpp"

using namespace attnbench;
using Catch::Contains;

namespace {

resume_file sample() {
  resume_file r;
  r.config_hash = "fnv1a64:0123456789abcdef";
  r.cpu_id = "AuthenticAMD family 25 model 1 stepping 1";
  r.kind = "sweep";
  r.point = 2;
  r.has_state = true;
  r.state.rounds = 2;
  r.state.timed_s = 1.5;
  r.state.variants = {{"base", {0.5, 0.25}, {10, 11, 12, 13}, false}, {"oom", {}, {}, true}};
  return r;
}

std::string error_of(const nlohmann::ordered_json& j) {
  try {
    resume_from_json(j, "dir/resume.json");
  } catch (const input_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "--resume");
    return e.problems()[0].message;
  }
  FAIL("accepted: " << j.dump());
  return "";
}

}  // namespace

TEST_CASE("resume.json round-trips every field", "[runner][resume]") {
  const resume_file r = resume_from_json(resume_to_json(sample()), "x");
  CHECK(r.config_hash == "fnv1a64:0123456789abcdef");
  CHECK(r.cpu_id == "AuthenticAMD family 25 model 1 stepping 1");
  CHECK(r.kind == "sweep");
  CHECK(r.point == 2);
  REQUIRE(r.has_state);
  CHECK(r.state.rounds == 2);
  CHECK(r.state.timed_s == 1.5);
  REQUIRE(r.state.variants.size() == 2);
  CHECK(r.state.find("base")->pass_s == std::vector<double>{0.5, 0.25});
  CHECK(r.state.find("base")->unit_ms.size() == 4);
  CHECK(r.state.find("oom")->left_by_error);
  CHECK(r.state.find("missing") == nullptr);
  // Stopped between sweep points: nothing timed to keep.
  resume_file between = sample();
  between.has_state = false;
  const auto j = resume_to_json(between);
  CHECK_FALSE(j.contains("state"));
  CHECK_FALSE(resume_from_json(j, "x").has_state);
}

TEST_CASE("a malformed resume.json is refused naming the file and the field", "[runner][resume]") {
  auto j = resume_to_json(sample());
  j["attnbench_resume"] = 99;
  CHECK(error_of(j) == "dir/resume.json: attnbench_resume: version 99 is not this attnbench's (1)");
  j = resume_to_json(sample());
  j["kind"] = "profile";
  CHECK_THAT(error_of(j), Contains("kind: expected \"run\" or \"sweep\""));
  j = resume_to_json(sample());
  j["state"]["variants"][0]["pass_s"][1] = -1;
  CHECK(error_of(j) == "dir/resume.json: state.variants[0].pass_s[1]: expected a number >= 0");
  j = resume_to_json(sample());
  j["state"]["variants"][0]["pass_s"].push_back(0.5);  // 3 passes, 2 rounds
  CHECK(error_of(j) == "dir/resume.json: state.variants[0].pass_s: 3 passes for 2 complete rounds");
  j = resume_to_json(sample());
  j["state"]["variants"][1]["name"] = "base";
  CHECK_THAT(error_of(j), Contains("state.variants[1].name: \"base\" appears twice"));
  j = resume_to_json(sample());
  j["state"].erase("rounds");
  CHECK(error_of(j) == "dir/resume.json: state.rounds: missing field");
  CHECK_THAT(error_of(nlohmann::ordered_json::array()), Contains("(top level): expected an object"));
}

TEST_CASE("read_resume_file: a missing or broken file is an input error naming it", "[runner][resume]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnbench-resume-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(read_resume_file(dir / "resume.json"), Contains("resume.json: not found"));
  std::ofstream(dir / "resume.json") << "{\"attnbench_resume\": 1,";
  CHECK_THROWS_WITH(read_resume_file(dir / "resume.json"), Contains("resume.json: invalid JSON"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("config_hash_of ignores key order and sees every value", "[runner][resume]") {
  const auto a = nlohmann::ordered_json::parse(R"({"name": "x", "measure": {"warmup": 1, "repetitions": 5}})");
  const auto b = nlohmann::ordered_json::parse(R"({"measure": {"repetitions": 5, "warmup": 1}, "name": "x"})");
  const auto c = nlohmann::ordered_json::parse(R"({"name": "x", "measure": {"warmup": 1, "repetitions": 6}})");
  CHECK(config_hash_of(a) == config_hash_of(b));
  CHECK(config_hash_of(a) != config_hash_of(c));
  CHECK_THAT(config_hash_of(a), Catch::StartsWith("fnv1a64:"));
}
