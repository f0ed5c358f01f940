// libFuzzer target: the WordPiece tokenizer on arbitrary bytes must return [CLS] … [SEP] within
// max_length, or refuse invalid UTF-8 with an input_error; nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "workload/wordpiece_tokenizer.hpp"

namespace {
// Pieces that make the greedy search work: words, sub-words, CJK, accented and punctuation.
const attnbench::wordpiece_tokenizer& tokenizer() {
  static const attnbench::wordpiece_tokenizer t(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "ab", "##b", "##bc",  "##c",    "the",
       "##s",   "東",    "é",     "e",     ",", "!",  "un",  "##aff", "##able", "😀"},
      true, "fuzz-vocab");
  return t;
}
constexpr int64_t max_length = 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto ids = tokenizer().encode(text, max_length);
    if (ids.size() < 2 || static_cast<int64_t>(ids.size()) > max_length) __builtin_trap();
    if (ids.front() != tokenizer().cls_id() || ids.back() != tokenizer().sep_id()) __builtin_trap();
    for (auto id : ids)
      if (id < 0 || id >= tokenizer().vocab_size()) __builtin_trap();
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
