// GPT-2's byte-level BPE tokenizer, from a Hugging Face tokenizer.json, matching the `tokenizers`
// library's encode for the files it accepts:
//   pre-tokenizer ByteLevel: GPT-2's split
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   written out by hand over code points (no regex engine), each piece's UTF-8 bytes mapped to
//   GPT-2's printable byte-to-unicode alphabet ("Ġ" for a space); add_prefix_space puts a space
//   before text that does not start with one; use_regex false leaves the text one piece;
//   model BPE: the lowest-ranked adjacent pair merged first (the leftmost of equal ranks), until
//   no listed merge applies; merges in either form, "a b" strings or ["a", "b"] pairs;
//   ignore_merges takes a piece that is itself in the vocabulary whole.
// Added tokens (`added_tokens`, such as <|endoftext|>) are never matched inside the text: a
// prompt line is data, so "<|endoftext|>" in it is its characters, as `tokenizers` encodes with
// encode_special_tokens set (its default would turn them into the special id). No special token
// is added before or after the text (GPT-2's tokenizer adds none).
//
// Approximated: \s is Unicode White_Space, \p{L} and \p{N} the general categories L* and N*, as
// ICU of this build knows them; the Oniguruma that `tokenizers` uses may know another Unicode
// version, so a code point assigned in one and not the other splits differently.
// Refused, with the file and the JSON key: another model type (WordPiece, Unigram), a
// SentencePiece-style file (a Metaspace pre-tokenizer, byte_fallback, a normalizer), dropout,
// sub-word prefixes or suffixes, a post-processor that adds tokens (TemplateProcessing) and a
// decoder other than ByteLevel. Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace attnbench {

class bpe_tokenizer {
 public:
  // Throws input_error naming the file (and the JSON key) when it cannot be read, is not JSON,
  // or asks for something the header above does not implement.
  static bpe_tokenizer from_file(const std::string& path);
  // The same from tokenizer.json's text; `source` names it in errors.
  static bpe_tokenizer from_json_text(const std::string& text, const std::string& source);

  // GPT-2's pre-tokenizer split of `text` (code points, before the byte mapping). Throws
  // input_error on invalid UTF-8.
  std::vector<std::string> pre_tokens(std::string_view text) const;
  // The ids of `text`, every one of them (the caller truncates). Throws input_error on invalid
  // UTF-8, or when a byte has no token and the file names no unk_token.
  std::vector<int64_t> encode(std::string_view text) const;
  // The text of `ids`: added tokens as written (`tokenizers`' decode with skip_special_tokens
  // false), the rest through the byte map back to bytes; bytes that are not UTF-8 (a character
  // cut by truncation) become U+FFFD, one per maximal subpart as `tokenizers` does. Throws
  // input_error for an id the vocabulary lacks.
  std::string decode(const std::vector<int64_t>& ids) const;

  // One past the largest id (vocabulary or added tokens).
  int64_t vocab_size() const { return vocab_size_; }
  const std::string& source() const { return source_; }

 private:
  std::vector<int64_t> bpe(const std::string& mapped) const;  // one pre-token, byte-mapped

  std::string source_;
  std::unordered_map<std::string, int64_t> ids_;
  std::unordered_map<int64_t, std::string> tokens_;  // id → token, added tokens included
  std::unordered_set<int64_t> added_;                 // ids of added tokens
  std::map<std::pair<std::string, std::string>, int64_t> ranks_;  // merge → its rank
  int64_t vocab_size_ = 0;
  int64_t unk_ = -1;  // -1: none
  bool add_prefix_space_ = false;
  bool use_regex_ = true;
  bool ignore_merges_ = false;
};

}  // namespace attnbench
