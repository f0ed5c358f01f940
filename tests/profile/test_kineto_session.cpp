// The Kineto wrapper on the real model: labelled regions and operators come back as events, and
// the saved Chrome trace is JSON that holds them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "model/encoder.hpp"
#include "profile/kineto_session.hpp"
#include "test_support.hpp"

using namespace attnbench;

TEST_CASE("kineto session: records the model's regions, operators and memory", "[profile]") {
  torch::InferenceMode inference;
  EncoderClassifier model(testing::tiny_model());
  model->init_weights(1);
  model->eval();
  model->set_attention({attention_kind::naive, sdpa_backend::auto_select, false, {}});
  const auto ids = torch::randint(1000, 2000, {2, 16}, torch::kLong);

  profile_config cfg;
  cfg.profile_memory = true;
  cfg.record_shapes = true;
  kineto_session session(cfg, /*cuda=*/false);
  session.prepare();
  session.enable();
  CHECK(session.recording());
  model->forward(ids, torch::Tensor());
  const profiled_cycle cycle = session.disable();
  CHECK_FALSE(session.recording());

  const auto count = [&](const std::string& name, event_kind kind) {
    return std::count_if(cycle.events.begin(), cycle.events.end(),
                         [&](const trace_event& e) { return e.name == name && e.kind == kind; });
  };
  CHECK(count("encoder.layer", event_kind::region) == 2);
  CHECK(count("attention.softmax", event_kind::region) == 2);
  CHECK(count("embeddings", event_kind::region) == 1);
  CHECK(count("aten::softmax", event_kind::op) >= 2);
  CHECK(std::any_of(cycle.events.begin(), cycle.events.end(),
                    [](const trace_event& e) { return e.kind == event_kind::memory && e.bytes > 0; }));

  const auto path =
      std::filesystem::temp_directory_path() / ("attnbench_kineto_" + std::to_string(::getpid()) + ".json");
  cycle.save_trace(path.string());
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  REQUIRE(trace.contains("traceEvents"));
  const auto& te = trace["traceEvents"];
  CHECK(std::any_of(te.begin(), te.end(), [](const nlohmann::json& e) {
    return e.value("name", "") == "attention.softmax" && e.value("cat", "") == "user_annotation";
  }));
}
