#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "reference_model.hpp"
#include "test_support.hpp"
#include "workload/wordpiece_tokenizer.hpp"

using namespace attnbench;

namespace {

const std::vector<std::string> tiny_vocab{"[PAD]", "[UNK]", "[CLS]",  "[SEP]", "hello", ",",  "world", "!",
                                          "un",    "##aff", "##able", "cafe",  "東",    "京", "a",     "##b"};

std::vector<int64_t> ids(const std::string& text, int64_t max_length = 512, bool lowercase = true) {
  return wordpiece_tokenizer(tiny_vocab, lowercase, "tiny").encode(text, max_length);
}

}  // namespace

TEST_CASE("WordPiece: basic tokenizer rules and greedy longest-match sub-words", "[workload][tokenizer]") {
  using v = std::vector<int64_t>;
  CHECK(ids("Hello, world!") == v{2, 4, 5, 6, 7, 3});
  CHECK(ids("  HELLO\t\n world  ") == v{2, 4, 6, 3});  // whitespace cleanup, lower-casing
  CHECK(ids("unaffable") == v{2, 8, 9, 10, 3});        // un ##aff ##able
  CHECK(ids("Café") == v{2, 11, 3});                   // accent stripped
  CHECK(ids("東京") == v{2, 12, 13, 3});               // CJK characters split
  CHECK(ids("ab") == v{2, 14, 15, 3});
  CHECK(ids("xyz hello") == v{2, 1, 4, 3});  // no piece matches: [UNK]
  CHECK(ids("hel\x01lo") == v{2, 4, 3});     // control characters dropped
  CHECK(ids("") == v{2, 3});
  CHECK(ids("Hello", 512, /*lowercase=*/false) == v{2, 1, 3});  // cased: "Hello" is unknown
  CHECK(ids(std::string(101, 'a')) == v{2, 1, 3});              // longer than 100 characters
}

TEST_CASE("WordPiece truncates to max_length with [SEP] kept", "[workload][tokenizer]") {
  CHECK(ids("hello world hello", 4) == std::vector<int64_t>{2, 4, 6, 3});
  CHECK(ids("unaffable", 3) == std::vector<int64_t>{2, 8, 3});
}

TEST_CASE("a vocabulary without [UNK], or text that is not UTF-8, is an input error",
          "[workload][tokenizer]") {
  CHECK_THROWS_WITH(wordpiece_tokenizer({"[CLS]", "[SEP]", "a"}, true, "vocab.txt"),
                    "vocab.txt: the vocabulary has no [UNK] token");
  CHECK_THROWS_AS(wordpiece_tokenizer::from_file("/nonexistent/vocab.txt", true), input_error);
  CHECK_THROWS_WITH(wordpiece_tokenizer(tiny_vocab, true, "tiny").encode("caf\xE9", 512),
                    Catch::Contains("not valid UTF-8 (byte 3)"));
}

TEST_CASE("WordPiece ids equal Hugging Face's BertTokenizer on varied lines", "[workload][tokenizer]") {
  const auto dir = testing::reference_model_dir();
  if (!dir) {
    testing::skip_test(testing::reference_model_missing);
    return;
  }
  std::ifstream in(std::string(ATTNBENCH_TEST_DATA_DIR) + "/workload/fixtures/tokenizer_reference.json");
  const auto fixture = nlohmann::json::parse(in);
  const auto tokenizer = wordpiece_tokenizer::from_file((*dir / "vocab.txt").string(), true);
  const auto& lines = fixture["lines"];
  REQUIRE(lines.size() >= 10);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i << ": " << lines[i].get<std::string>());
    CHECK(tokenizer.encode(lines[i].get<std::string>(), fixture["max_length"].get<int64_t>()) ==
          fixture["input_ids"][i].get<std::vector<int64_t>>());
  }
}
