#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "config/hf_config.hpp"
#include "model/safetensors_builder.hpp"
#include "test_support.hpp"

using namespace attnbench;
using Catch::Contains;

namespace {

const std::string fixtures = std::string(ATTNBENCH_TEST_DATA_DIR) + "/model/fixtures";
const std::string workload_fixtures = std::string(ATTNBENCH_TEST_DATA_DIR) + "/workload/fixtures";

std::string doc(
    const std::string& model,
    const std::string& workload = R"({"samples": 4, "lengths": {"kind": "fixed", "length": 8}})") {
  return fmt::format(R"({{"name": "t", "model": {}, "workload": {}, "device": "cpu",
                         "variants": [{{"name": "a"}}], "baseline": "a"}})",
                     model, workload);
}

std::string error_of(const std::string& text) {
  try {
    attnbench::testing::parse_owned(text, "", testing::cpu_only());
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

std::string hf(const std::string& dir) {
  return fmt::format(R"({{"weights": "{0}/{1}/model.safetensors", "config": "{0}/{1}/config.json"}})",
                     fixtures, dir);
}

}  // namespace

TEST_CASE(
    "model.weights + model.config take the dimensions from config.json and the head from the checkpoint",
    "[config][hf]") {
  const config bare = attnbench::testing::parse_owned(doc(hf("tiny-bert")), "", testing::cpu_only());
  CHECK(bare.model.layers == 2);
  CHECK(bare.model.hidden == 32);
  CHECK(bare.model.heads == 4);
  CHECK(bare.model.ffn == 64);
  CHECK(bare.model.vocab_size == 64);
  CHECK(bare.model.max_positions == 32);
  CHECK(bare.model.mean_pool);  // no classifier head: the mean-pooled embedding is checked
  CHECK(bare.model.weights == fixtures + "/tiny-bert/model.safetensors");
  const config cls = attnbench::testing::parse_owned(doc(hf("tiny-bert-cls")), "", testing::cpu_only());
  CHECK_FALSE(cls.model.mean_pool);
  CHECK(cls.model.num_labels == 3);
}

TEST_CASE("real-model config mistakes are reported at their path", "[config][hf]") {
  CHECK_THAT(error_of(doc(fmt::format(R"({{"weights": "{}/tiny-bert/model.safetensors"}})", fixtures))),
             Contains("model.config: required with model.weights"));
  CHECK_THAT(error_of(doc(fmt::format(R"({{"config": "{}/tiny-bert/config.json", "layers": 4}})", fixtures))),
             Contains("model.layers: not allowed with model.config"));
  CHECK_THAT(error_of(doc(R"({"weights": "/nonexistent.safetensors", "config": "/nonexistent.json"})")),
             Contains("model.weights: \"/nonexistent.safetensors\" does not exist"));
  const auto broken = testing::write_temp_file("broken.safetensors", std::string("\x10\x00", 2));
  CHECK_THAT(error_of(doc(fmt::format(R"({{"weights": "{}", "config": "{}/tiny-bert/config.json"}})",
                                      broken.string(), fixtures))),
             Contains("model.weights: " + broken.string() + ": truncated: 2 bytes"));
  CHECK_THAT(
      error_of(doc(fmt::format(
          R"({{"torchscript": "{0}/tiny-bert/model.pt", "weights": "{0}/tiny-bert/model.safetensors"}})",
          fixtures))),
      Contains("model.weights: not allowed with model.torchscript"));
  CHECK_THAT(
      error_of(doc(fmt::format(R"({{"torchscript": "{0}/tiny-bert/model.pt", "layers": 2}})", fixtures))),
      Contains("model.layers: not allowed with model.torchscript"));
  CHECK_THAT(error_of(R"({"threads": 1e999})"), Contains("invalid JSON"));
}

TEST_CASE("config.json that the built-in encoder cannot reproduce is refused", "[config][hf]") {
  const auto path = testing::write_temp_file(
      "roberta.json",
      R"({"model_type": "roberta", "hidden_act": "relu", "num_hidden_layers": 2, "hidden_size": 30,
                          "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10})");
  model_config m;
  const auto problems = apply_hf_config(path.string(), "model.config", m);
  std::string all;
  for (const auto& p : problems) all += p.to_string() + "\n";
  CHECK_THAT(all, Contains("\"model_type\" must be \"bert\""));
  CHECK_THAT(all, Contains("\"hidden_act\" must be \"gelu\""));
  CHECK_THAT(all, Contains("\"max_position_embeddings\" is missing"));
  CHECK_THAT(all, Contains("\"hidden_size\" (30) must be divisible by \"num_attention_heads\" (4)"));
  CHECK_THAT(all, Contains("model.config: " + path.string()));
}

TEST_CASE("a Llama or GPT-2 config.json gives the decoder's shape, and what it cannot compute is refused",
          "[config][hf][decoder]") {
  const auto llama = testing::write_temp_file(
      "llama-config.json",
      R"({"model_type": "llama", "num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 8,
          "num_key_value_heads": 2, "intermediate_size": 176, "vocab_size": 500, "max_position_embeddings": 256,
          "rms_norm_eps": 1e-5, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
          "hidden_act": "silu", "rope_scaling": null})");
  model_config m;
  CHECK(apply_hf_config(llama.string(), "model.config", m).empty());
  CHECK(m.family == model_family::llama);
  CHECK(m.layers == 3);
  CHECK(m.heads == 8);
  CHECK(m.kv_heads == 2);
  CHECK(m.ffn == 176);
  CHECK(m.vocab_size == 500);
  CHECK(m.max_positions == 256);
  CHECK(m.layer_norm_eps == 1e-5);
  CHECK(m.rope_theta == 500000.0);
  CHECK(m.causal);
  const auto gpt2 = testing::write_temp_file(
      "gpt2-config.json",
      R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_inner": null, "vocab_size": 512,
          "n_positions": 128, "activation_function": "gelu_new"})");
  model_config g;
  CHECK(apply_hf_config(gpt2.string(), "model.config", g).empty());
  CHECK(g.family == model_family::gpt2);
  CHECK(g.ffn == 256);  // n_inner null: 4 × n_embd
  CHECK(g.kv_heads == 4);
  CHECK(g.layer_norm_eps == 1e-5);
  const auto scaled = testing::write_temp_file(
      "llama-scaled.json",
      R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 8,
          "num_key_value_heads": 3, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 16,
          "hidden_act": "gelu", "attention_bias": true, "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
          "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0}})");
  model_config x;
  std::string all;
  for (const auto& p : apply_hf_config(scaled.string(), "model.config", x)) all += p.to_string() + "\n";
  CHECK_THAT(all, Contains("\"rope_scaling\" must be null"));
  CHECK_THAT(all, Contains("\"rope_parameters\" must have rope_type \"default\""));
  CHECK_THAT(all, Contains("\"hidden_act\" must be \"silu\""));
  CHECK_THAT(all, Contains("\"attention_bias\" must be false"));
  CHECK_THAT(all, Contains("\"num_attention_heads\" (8) must be a multiple of \"num_key_value_heads\" (3)"));
  const auto t5 = testing::write_temp_file("t5.json", R"({"model_type": "t5"})");
  model_config y;
  std::string t5_all;
  for (const auto& p : apply_hf_config(t5.string(), "model.config", y)) t5_all += p.to_string() + "\n";
  CHECK_THAT(t5_all, Contains("\"model_type\" must be \"bert\" (the built-in encoder), \"llama\" or \"gpt2\""));
}

TEST_CASE("workload.text needs a vocabulary, vocab and lowercase need text", "[config][hf]") {
  const std::string text = fmt::format(R"({{"text": "{}/tiny_text.txt"}})", workload_fixtures);
  CHECK_THAT(error_of(doc(R"({"preset": "bert-tiny"})", text)),
             Contains("workload.vocab: required with workload.text"));
  CHECK_THAT(
      error_of(doc(R"({"preset": "bert-tiny"})",
                   R"({"samples": 4, "lengths": {"kind": "fixed", "length": 8}, "lowercase": false})")),
      Contains("workload.lowercase: only used with workload.text"));
  // With model.config the vocab.txt beside it is the default (the tiny fixture has none).
  CHECK_THAT(error_of(doc(hf("tiny-bert"), text)),
             Contains("workload.vocab: required: no vocab.txt beside model.config"));
  const config ok = attnbench::testing::parse_owned(
      doc(hf("tiny-bert"),
          fmt::format(R"({{"text": "{0}/tiny_text.txt", "vocab": "{0}/tiny_vocab.txt", "lowercase": false}})",
                      workload_fixtures)),
      "", testing::cpu_only());
  CHECK(ok.workload.vocab == workload_fixtures + "/tiny_vocab.txt");
  CHECK_FALSE(ok.workload.lowercase);
  CHECK(ok.workload.max_length == 32);  // model.max_positions from config.json
}

TEST_CASE(
    "workload.tokenizer: a decoder's text tokenizer, by default beside model.config, refused for encoders",
    "[config][hf][decoder][bpe]") {
  const std::string text = workload_fixtures + "/tiny_text.txt";
  const std::string handbook_bpe = std::string(ATTNBENCH_SOURCE_DIR) + "/configs/data/handbook-bpe.json";
  nlohmann::ordered_json d = {{"name", "t"},
                              {"scenario", "generate"},
                              {"model", {{"preset", "llama-160m"}}},
                              {"workload", {{"text", text}, {"tokenizer", handbook_bpe}, {"max_length", 32}}},
                              {"device", "cpu"},
                              {"variants", {{{"name", "a"}}}},
                              {"baseline", "a"}};
  SECTION("given: resolved, and the WordPiece keys are not read") {
    const config c = attnbench::testing::parse(d);
    CHECK(c.workload.tokenizer == handbook_bpe);
    CHECK(c.workload.text == text);
    CHECK(c.workload.vocab.empty());
  }
  SECTION("a decoder without one, and no model.config to find one beside") {
    d["workload"].erase("tokenizer");
    CHECK(
        attnbench::testing::problem_at(d, "workload.tokenizer") ==
        "required with workload.text for a llama decoder: a Hugging Face tokenizer.json, byte-level BPE (no "
        "model.config to find a tokenizer.json beside)");
  }
  SECTION("WordPiece's keys with a decoder") {
    d["workload"]["vocab"] = workload_fixtures + "/tiny_vocab.txt";
    d["workload"]["lowercase"] = false;
    const std::string why =
        "only for an encoder: a llama decoder's text goes through workload.tokenizer (a "
        "byte-level BPE tokenizer.json), not WordPiece";
    CHECK(attnbench::testing::problem_at(d, "workload.vocab") == why);
    CHECK(attnbench::testing::problem_at(d, "workload.lowercase") == why);
  }
  SECTION("a tokenizer with an encoder") {
    d.erase("scenario");
    d["model"] = {{"preset", "bert-tiny"}};
    d["workload"]["vocab"] = workload_fixtures + "/tiny_vocab.txt";
    CHECK(attnbench::testing::problem_at(d, "workload.tokenizer") ==
          "only for a decoder (model.family gpt2 or llama): an encoder's text goes through WordPiece, "
          "workload.vocab");
  }
  SECTION("a tokenizer without text") {
    d["workload"] = {
        {"samples", 2}, {"lengths", {{"kind", "fixed"}, {"length", 8}}}, {"tokenizer", handbook_bpe}};
    CHECK(attnbench::testing::problem_at(d, "workload.tokenizer") == "only used with workload.text");
  }
  SECTION("relative to the config file, and checked readable") {
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("attnbench-tokenizer-{}", ::getpid());
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(handbook_bpe, dir / "tok.json",
                               std::filesystem::copy_options::overwrite_existing);
    d["workload"]["tokenizer"] = "tok.json";
    const std::string source = (dir / "experiment.json").string();
    CHECK(attnbench::testing::parse_owned(d.dump(), source, testing::cpu_only()).workload.tokenizer ==
          (dir / "tok.json").string());
    d["workload"]["tokenizer"] = "missing.json";
    try {
      attnbench::testing::parse_owned(d.dump(), source, testing::cpu_only());
      FAIL("missing.json was accepted");
    } catch (const input_error& e) {
      CHECK_THAT(e.what(), Contains("workload.tokenizer: \"" + (dir / "missing.json").string() + "\" does not exist"));
    }
    std::filesystem::remove_all(dir);
  }
  SECTION("the tokenizer.json beside a decoder's model.config is the default") {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("attnbench-hf-gpt2-{}", ::getpid());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json")
        << R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_inner": null, "vocab_size": 4096,
              "n_positions": 128, "activation_function": "gelu_new"})";
    d["model"] = {{"config", (dir / "config.json").string()}};
    d["workload"].erase("tokenizer");
    CHECK_THAT(attnbench::testing::problem_at(d, "workload.tokenizer"),
               Catch::StartsWith("required: no tokenizer.json beside model.config ("));
    std::filesystem::copy_file(handbook_bpe, dir / "tokenizer.json");
    const config c = attnbench::testing::parse(d);
    CHECK(c.model.family == model_family::gpt2);
    CHECK(c.workload.tokenizer == (dir / "tokenizer.json").string());
    std::filesystem::remove_all(dir);
  }
}
