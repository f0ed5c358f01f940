#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "model/safetensors_builder.hpp"
#include "workload/dataset.hpp"

using namespace attnbench;

namespace {

const std::string fixtures = std::string(ATTNBENCH_TEST_DATA_DIR) + "/workload/fixtures";

workload_config text_workload(const std::string& text, int64_t max_length = 32) {
  workload_config w;
  w.text = text;
  w.vocab = fixtures + "/tiny_vocab.txt";
  w.max_length = max_length;
  w.lengths.kind = length_kind::file;
  return w;
}

model_config model_with_vocab(int64_t vocab_size) {
  model_config m;
  m.vocab_size = vocab_size;
  m.max_positions = 32;
  return m;
}

}  // namespace

TEST_CASE("a text workload is one sample per non-blank line, through WordPiece", "[workload][text]") {
  const auto d = make_dataset(text_workload(fixtures + "/tiny_text.txt"), model_with_vocab(64));
  REQUIRE(d.samples.size() == 5);
  CHECK(d.samples[0] == std::vector<int64_t>{2, 4, 5, 6, 7, 4, 8, 9, 3});  // the cat sat on the mat .
  CHECK(d.samples[1] ==
        std::vector<int64_t>{2, 11, 12, 13, 10, 4, 5, 14, 6, 9, 3});  // a dog ran , the cat ##s sat .
  CHECK(d.description == "text " + fixtures + "/tiny_text.txt");
  CHECK(d.tokenizer == fixtures + "/tiny_vocab.txt");
  CHECK(d.tokenizer_fnv1a64 == "ac9bbd2242aa0c15");  // FNV-1a 64 of the file's bytes, computed in Python
}

TEST_CASE("long lines are truncated to max_length and the description says how many", "[workload][text]") {
  const auto d = make_dataset(text_workload(fixtures + "/tiny_text.txt", 6), model_with_vocab(64));
  for (const auto& s : d.samples) CHECK(s.size() <= 6);
  CHECK(d.samples[0] == std::vector<int64_t>{2, 4, 5, 6, 7, 3});
  CHECK_THAT(d.description, Catch::EndsWith(", 4 truncated to 6 tokens"));
}

TEST_CASE("text workload errors name the file, the line or the vocabulary", "[workload][text]") {
  const auto bad = testing::write_temp_file("bad.txt", "the cat\nthe caf\xE9\n");
  CHECK_THROWS_WITH(make_dataset(text_workload(bad.string()), model_with_vocab(64)),
                    Catch::Contains(bad.string() + ":2: not valid UTF-8"));
  CHECK_THROWS_WITH(make_dataset(text_workload(fixtures + "/tiny_text.txt"), model_with_vocab(8)),
                    Catch::Contains("holds 16 tokens, more than the model's vocabulary of 8"));
  const auto blank = testing::write_temp_file("blank.txt", "\n  \n");
  CHECK_THROWS_WITH(make_dataset(text_workload(blank.string()), model_with_vocab(64)),
                    Catch::Contains("holds no samples"));
}

namespace {

const std::string handbook_bpe = std::string(ATTNBENCH_SOURCE_DIR) + "/configs/data/handbook-bpe.json";

workload_config bpe_workload(const std::string& text, int64_t max_length = 32) {
  workload_config w;
  w.text = text;
  w.tokenizer = handbook_bpe;
  w.max_length = max_length;
  w.lengths.kind = length_kind::file;
  return w;
}

model_config decoder_with_vocab(int64_t vocab_size) {
  model_config m;
  m.family = model_family::llama;
  m.vocab_size = vocab_size;
  m.max_positions = 64;
  return m;
}

}  // namespace

TEST_CASE("a decoder's text workload is each line through byte-level BPE, no special token added",
          "[workload][text][bpe]") {
  const auto d = make_dataset(bpe_workload(fixtures + "/tiny_text.txt"), decoder_with_vocab(32000));
  REQUIRE(d.samples.size() == 5);
  // The ids `tokenizers` gives the lines (configs/data/handbook-bpe.json, encode_special_tokens).
  CHECK(d.samples[0] ==
        std::vector<int64_t>{1224, 267, 320, 264, 320, 424, 299, 1834, 14});  // The cat sat on the mat.
  CHECK(d.samples[2] == std::vector<int64_t>{4079, 862, 71});                 // the dog
  CHECK(d.description == "text " + fixtures + "/tiny_text.txt, byte-level BPE " + handbook_bpe);
  CHECK(d.tokenizer == handbook_bpe);
  // The file's FNV-1a 64 as scripts/corpus_bpe.py computes it (tests/workload/fixtures/bpe_reference.json).
  CHECK(d.tokenizer_fnv1a64 == "ab68ee5b8ba7b2d3");
  // workload.samples caps the count, blank lines skipped.
  workload_config two = bpe_workload(fixtures + "/tiny_text.txt");
  two.samples = 2;
  const auto capped = make_dataset(two, decoder_with_vocab(32000));
  REQUIRE(capped.samples.size() == 2);
  CHECK(capped.samples[1].front() == 33);  // "A dog ran, ...": line 3
}

TEST_CASE("a decoder's prompts are cut to their first max_length ids, and the description counts them",
          "[workload][text][bpe]") {
  const auto d = make_dataset(bpe_workload(fixtures + "/tiny_text.txt", 8), decoder_with_vocab(32000));
  REQUIRE(d.samples.size() == 5);
  CHECK(d.samples[0] ==
        std::vector<int64_t>{1224, 267, 320, 264, 320, 424, 299, 1834});  // 9 ids: the "." cut
  CHECK(d.samples[2].size() == 3);
  CHECK(d.samples[4].size() == 8);  // exactly 8: kept whole, not counted
  CHECK_THAT(d.description, Catch::EndsWith(", 3 truncated to 8 tokens"));
}

TEST_CASE(
    "a decoder's tokenizer is refused when the model has no embedding for its ids, or it is unsupported",
    "[workload][text][bpe]") {
  CHECK_THROWS_WITH(
      make_dataset(bpe_workload(fixtures + "/tiny_text.txt"), decoder_with_vocab(4095)),
      "workload.tokenizer: " + handbook_bpe +
          ": its largest id is 4095, not below the model's vocab_size 4095: the model has no embedding "
          "for it");
  CHECK_NOTHROW(make_dataset(bpe_workload(fixtures + "/tiny_text.txt"), decoder_with_vocab(4096)));
  const auto wordpiece = testing::write_temp_file(
      "wordpiece-tokenizer.json", R"({"model": {"type": "WordPiece", "vocab": {}}, "pre_tokenizer": null})");
  workload_config w = bpe_workload(fixtures + "/tiny_text.txt");
  w.tokenizer = wordpiece.string();
  CHECK_THROWS_WITH(make_dataset(w, decoder_with_vocab(32000)),
                    Catch::StartsWith("workload.tokenizer: " + wordpiece.string() +
                                      ": key model.type: \"WordPiece\" is not implemented"));
  w.tokenizer.clear();
  CHECK_THROWS_WITH(make_dataset(w, decoder_with_vocab(32000)),
                    Catch::StartsWith("workload.tokenizer: required with workload.text for a llama decoder"));
  w.tokenizer = "/nonexistent/tokenizer.json";
  CHECK_THROWS_WITH(make_dataset(w, decoder_with_vocab(32000)),
                    "workload.tokenizer: cannot read /nonexistent/tokenizer.json");
}
