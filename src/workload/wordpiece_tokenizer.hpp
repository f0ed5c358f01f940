// BERT's WordPiece tokenizer, from a vocab.txt, matching Hugging Face's BertTokenizer:
//   basic tokenizer: drop NUL, U+FFFD and control characters, map whitespace to spaces, put
//   spaces around CJK ideographs, split on whitespace; per word lower-case and strip accents
//   (NFD, drop non-spacing marks) when asked, then split off every punctuation character;
//   WordPiece: greedy longest match first, continuation pieces prefixed "##", a word with no
//   match (or longer than 100 characters) becomes [UNK];
//   [CLS] pieces [SEP], truncated to max_length (the two specials included).
// Unicode case mapping, normalisation and categories come from ICU. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnbench {

class wordpiece_tokenizer {
 public:
  // Reads one token per line (id = line number from 0). Throws input_error naming the file when
  // it cannot be read, is not UTF-8, or lacks [UNK], [CLS] or [SEP].
  static wordpiece_tokenizer from_file(const std::string& vocab_path, bool lowercase);
  wordpiece_tokenizer(const std::vector<std::string>& vocab, bool lowercase, const std::string& source);

  // The words of the basic tokenizer, before WordPiece. Throws input_error on invalid UTF-8.
  std::vector<std::string> basic_tokens(std::string_view text) const;
  // Sub-word pieces of one basic token ("[UNK]" when it has none).
  std::vector<std::string> wordpieces(const std::string& word) const;
  // [CLS] ids… [SEP], at most max_length ids (>= 2).
  std::vector<int64_t> encode(std::string_view text, int64_t max_length) const;

  int64_t vocab_size() const { return static_cast<int64_t>(vocab_size_); }
  int64_t unk_id() const { return unk_; }
  int64_t cls_id() const { return cls_; }
  int64_t sep_id() const { return sep_; }
  int64_t pad_id() const { return pad_; }  // [PAD], or 0 when the vocabulary has none

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::size_t vocab_size_ = 0;
  bool lowercase_ = true;
  int64_t unk_ = 0, cls_ = 0, sep_ = 0, pad_ = 0;
};

}  // namespace attnbench
