#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <limits>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "config/hf_config.hpp"
#include "model/hf_weights.hpp"
#include "model/safetensors_builder.hpp"
#include "reference_model.hpp"
#include "test_support.hpp"
#include "workload/wordpiece_tokenizer.hpp"

using namespace attnbench;

namespace {

const std::string fixtures = std::string(ATTNBENCH_TEST_DATA_DIR) + "/model/fixtures";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

torch::Tensor matrix(const nlohmann::json& rows) {
  const auto values = rows.get<std::vector<std::vector<double>>>();
  auto t = torch::empty({static_cast<int64_t>(values.size()), static_cast<int64_t>(values[0].size())},
                        torch::kDouble);
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < values[i].size(); ++j) t[i][j] = values[i][j];
  return t;
}

double max_rel_error(const torch::Tensor& got, const torch::Tensor& want) {
  auto g = got.to(torch::kDouble);
  return ((g - want).abs().max() / want.abs().max()).item<double>();
}

// The built-in model with the dimensions of `dir`/config.json and its checkpoint's weights.
EncoderClassifier load(const std::string& dir, std::vector<std::string>* warnings = nullptr) {
  model_config cfg;
  REQUIRE(apply_hf_config(dir + "/config.json", "model.config", cfg).empty());
  const safetensors_file file(dir + "/model.safetensors");
  const auto* head = file.header().find("classifier.weight");
  cfg.mean_pool = head == nullptr;
  cfg.num_labels = head ? head->shape[0] : 0;
  EncoderClassifier model(cfg);
  auto w = load_hf_weights(*model, file);
  if (warnings) *warnings = w;
  model->eval();
  return model;
}

}  // namespace

TEST_CASE("a tiny Hugging Face BertModel's mean-pooled output is reproduced", "[model][hf]") {
  torch::InferenceMode guard;
  const auto ref = read_json(fixtures + "/tiny_reference.json");
  auto model = load(fixtures + "/tiny-bert");
  CHECK(model->output_width() == 32);
  const auto all_ids = ref["input_ids"].get<std::vector<std::vector<int64_t>>>();
  const auto all_mask = ref["attention_mask"].get<std::vector<std::vector<int64_t>>>();
  auto input = torch::stack({torch::tensor(all_ids[0]), torch::tensor(all_ids[1])});  // (2, 8)
  auto mask = torch::stack({torch::tensor(all_mask[0]), torch::tensor(all_mask[1])});
  for (auto kind : {attention_kind::naive, attention_kind::sdpa}) {
    model->set_attention({kind, sdpa_backend::auto_select, false, {}});
    auto out = model->forward(input, mask);  // (2, 32)
    INFO("attention " << to_string(kind));
    CHECK(max_rel_error(out, matrix(ref["mean_pooled"])) < 1e-4);
  }
}

TEST_CASE("a tiny BertForSequenceClassification (bert. prefixes) gives Hugging Face's logits",
          "[model][hf]") {
  torch::InferenceMode guard;
  const auto ref = read_json(fixtures + "/tiny_reference.json");
  auto model = load(fixtures + "/tiny-bert-cls");
  CHECK(model->output_width() == 3);
  const auto all_ids = ref["input_ids"].get<std::vector<std::vector<int64_t>>>();
  const auto all_mask = ref["attention_mask"].get<std::vector<std::vector<int64_t>>>();
  auto input = torch::stack({torch::tensor(all_ids[0]), torch::tensor(all_ids[1])});
  auto mask = torch::stack({torch::tensor(all_mask[0]), torch::tensor(all_mask[1])});
  auto logits = model->forward(input, mask);
  CHECK(max_rel_error(logits, matrix(ref["logits"])) < 1e-4);
  // And a wrong one would be caught: the two rows differ by far more than the tolerance.
  CHECK(max_rel_error(logits.flip(0), matrix(ref["logits"])) > 1e-2);
}

TEST_CASE("checkpoint problems name the tensor", "[model][hf]") {
  model_config cfg;
  REQUIRE(apply_hf_config(fixtures + "/tiny-bert/config.json", "model.config", cfg).empty());
  cfg.mean_pool = true;
  const std::string good_dir = fixtures + "/tiny-bert/model.safetensors";
  const safetensors_file good(good_dir);
  // Rebuild the tiny checkpoint with one change, tensor by tensor.
  const auto rebuild = [&](const std::string& name, const std::string& drop, const std::string& rename,
                           bool poison) {
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    for (const auto& t : good.header().tensors) {
      if (t.name == drop) continue;
      std::string bytes(reinterpret_cast<const char*>(good.data(t)), t.end - t.begin);
      if (poison && t.name == "encoder.layer.1.output.dense.bias") {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(bytes.data(), &nan, sizeof nan);
      }
      header[t.name == rename ? "encoder.layer.9.output.dense.bias" : t.name] = {
          {"dtype", t.dtype},
          {"shape", t.shape},
          {"data_offsets", {data.size(), data.size() + bytes.size()}}};
      data += bytes;
    }
    return testing::write_temp_file(name, testing::safetensors_bytes(header.dump(), data)).string();
  };
  const auto load_error = [&](const std::string& path) -> std::string {
    EncoderClassifier model(cfg);
    try {
      load_hf_weights(*model, safetensors_file(path));
    } catch (const input_error& e) {
      return e.what();
    }
    return "";
  };
  SECTION("missing") {
    CHECK_THAT(
        load_error(rebuild("missing.safetensors", "encoder.layer.0.attention.self.key.weight", "", false)),
        Catch::Contains("missing tensor \"encoder.layer.0.attention.self.key.weight\""));
  }
  SECTION("unexpected") {
    CHECK_THAT(load_error(rebuild("unexpected.safetensors", "", "encoder.layer.1.output.dense.bias", false)),
               Catch::Contains("unexpected tensor \"encoder.layer.9.output.dense.bias\""));
  }
  SECTION("shape that does not fit config.json") {
    cfg.ffn = 48;
    CHECK_THAT(
        load_error(good_dir),
        Catch::Contains(
            "tensor \"encoder.layer.0.intermediate.dense.bias\" has shape [64]; config.json makes it [48]"));
  }
  SECTION("NaN weights: a warning naming the tensor") {
    EncoderClassifier model(cfg);
    const auto warnings = load_hf_weights(*model, safetensors_file(rebuild("nan.safetensors", "", "", true)));
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0],
               Catch::Contains("tensor \"encoder.layer.1.output.dense.bias\" holds 1 non-finite"));
  }
}

TEST_CASE("all-MiniLM-L6-v2 from its safetensors matches Hugging Face within 1e-4 in fp32",
          "[model][hf][real]") {
  const auto dir = testing::reference_model_dir();
  if (!dir) {
    testing::skip_test(testing::reference_model_missing);
    return;
  }
  torch::InferenceMode guard;
  const auto ref = read_json(fixtures + "/minilm_reference.json");
  auto model = load(dir->string());
  CHECK(model->config().layers == 6);
  CHECK(model->config().hidden == 384);
  CHECK(model->config().heads == 12);
  CHECK(model->config().mean_pool);
  const auto tokenizer = wordpiece_tokenizer::from_file((*dir / "vocab.txt").string(), true);
  const auto sentences = ref["sentences"].get<std::vector<std::string>>();
  const auto want_ids = ref["input_ids"].get<std::vector<std::vector<int64_t>>>();
  const auto pooled = matrix(ref["mean_pooled"]);
  const auto cls = matrix(ref["cls_hidden"]);
  // One padded batch: padding must not change any sentence's result.
  int64_t longest = 0;
  for (const auto& ids : want_ids) longest = std::max<int64_t>(longest, static_cast<int64_t>(ids.size()));
  const auto n = static_cast<int64_t>(sentences.size());
  auto input = torch::zeros({n, longest}, torch::kLong);
  auto mask = torch::zeros({n, longest}, torch::kLong);
  for (int64_t i = 0; i < n; ++i) {
    const auto ids = tokenizer.encode(sentences[i], 512);
    INFO("sentence " << i);
    REQUIRE(ids == want_ids[i]);
    input[i].narrow(0, 0, ids.size()).copy_(torch::tensor(ids));
    mask[i].narrow(0, 0, ids.size()).fill_(1);
  }
  auto out = model->forward(input, mask);  // (N, 384)
  CHECK(max_rel_error(out, pooled) < 1e-4);
  auto hidden = model->encode(input, mask).select(1, 0);  // (N, 384): the [CLS] row
  CHECK(max_rel_error(hidden, cls) < 1e-4);
  // Per sentence too, so one bad row cannot hide behind the others' scale.
  for (int64_t i = 0; i < n; ++i) CHECK(max_rel_error(out[i].unsqueeze(0), pooled[i].unsqueeze(0)) < 1e-4);
}
