#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "model/torchscript_model.hpp"

using namespace attnbench;

namespace {
const std::string fixtures = std::string(ATTNBENCH_TEST_DATA_DIR) + "/model/fixtures";
}

TEST_CASE("a traced Hugging Face model runs and is mean-pooled like the reference", "[model][torchscript]") {
  torch::InferenceMode guard;
  std::ifstream in(fixtures + "/tiny_reference.json");
  const auto ref = nlohmann::json::parse(in);
  const auto ids = ref["input_ids"].get<std::vector<std::vector<int64_t>>>();
  const auto mask = ref["attention_mask"].get<std::vector<std::vector<int64_t>>>();
  const auto want = ref["mean_pooled"].get<std::vector<std::vector<double>>>();
  torchscript_model model(fixtures + "/tiny-bert/model.pt");
  CHECK(model.parameter_count() > 0);
  auto out = model.forward(torch::stack({torch::tensor(ids[0]), torch::tensor(ids[1])}),
                           torch::stack({torch::tensor(mask[0]), torch::tensor(mask[1])}).to(torch::kBool));
  REQUIRE(out.sizes() == torch::IntArrayRef{2, 32});
  auto expected = torch::tensor(want[0], torch::kDouble);
  expected = torch::stack({expected, torch::tensor(want[1], torch::kDouble)});
  const double rel = ((out.to(torch::kDouble) - expected).abs().max() / expected.abs().max()).item<double>();
  CHECK(rel < 1e-4);
}

TEST_CASE("a file that is not TorchScript is an input error naming it", "[model][torchscript]") {
  CHECK_THROWS_WITH(torchscript_model(fixtures + "/tiny-bert/config.json"),
                    Catch::Contains(fixtures + "/tiny-bert/config.json: not a TorchScript module"));
  CHECK(torchscript_unsupported("offload") == "unsupported for TorchScript models");
  CHECK(torchscript_unsupported("parallel") == "unsupported for TorchScript models");  // replicas need the built-in encoder
  CHECK(torchscript_unsupported("precision").empty());
  CHECK(torchscript_unsupported("precision", "bf16") == "unsupported for TorchScript models");  // a cast copy of the built-in encoder
}
