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
