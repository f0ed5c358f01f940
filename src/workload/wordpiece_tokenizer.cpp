#include "workload/wordpiece_tokenizer.hpp"

#include <fmt/format.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/utf8.hpp"

namespace attnbench {
namespace {

// Hugging Face's max_input_chars_per_word: longer words become [UNK] without a search.
constexpr std::size_t max_word_chars = 100;

bool is_whitespace(char32_t c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  return u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR;
}

bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  const auto t = u_charType(static_cast<UChar32>(c));
  return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR;
}

bool is_punctuation(char32_t c) {
  // ASCII symbols such as ^ $ ` count as punctuation too, as in BERT.
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

// The CJK Unified Ideographs blocks BERT surrounds with spaces (not Hangul, Hiragana, Katakana).
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Full Unicode lower-casing, then NFD with non-spacing marks removed (accent stripping).
std::u32string normalise_word(const std::u32string& word, bool lowercase) {
  if (!lowercase) return word;
  icu::UnicodeString s;
  for (char32_t c : word) s.append(static_cast<UChar32>(c));
  s.toLower(icu::Locale::getRoot());
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  icu::UnicodeString decomposed = U_SUCCESS(status) ? nfd->normalize(s, status) : s;
  if (U_FAILURE(status)) decomposed = s;
  std::u32string out;
  for (int32_t i = 0; i < decomposed.length();) {
    const UChar32 c = decomposed.char32At(i);
    i += U16_LENGTH(c);
    if (u_charType(c) != U_NON_SPACING_MARK) out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

std::vector<std::u32string> split_whitespace(const std::u32string& text) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : text) {
    if (c == ' ') {
      if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

int64_t require_token(const std::unordered_map<std::string, int64_t>& ids, const char* token,
                      const std::string& source) {
  auto it = ids.find(token);
  if (it == ids.end()) throw input_error(fmt::format("{}: the vocabulary has no {} token", source, token));
  return it->second;
}

}  // namespace

wordpiece_tokenizer wordpiece_tokenizer::from_file(const std::string& vocab_path, bool lowercase) {
  std::ifstream in(vocab_path, std::ios::binary);
  if (!in) throw input_error(fmt::format("{}: cannot read the vocabulary", vocab_path));
  std::vector<std::string> vocab;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_valid_utf8(line))
      throw input_error(fmt::format("{}:{}: not valid UTF-8", vocab_path, vocab.size() + 1));
    vocab.push_back(std::move(line));
  }
  return wordpiece_tokenizer(vocab, lowercase, vocab_path);
}

wordpiece_tokenizer::wordpiece_tokenizer(const std::vector<std::string>& vocab, bool lowercase,
                                         const std::string& source)
    : vocab_size_(vocab.size()), lowercase_(lowercase) {
  // A token listed twice keeps its last line's id, as Hugging Face's load_vocab does.
  for (std::size_t i = 0; i < vocab.size(); ++i) ids_[vocab[i]] = static_cast<int64_t>(i);
  unk_ = require_token(ids_, "[UNK]", source);
  cls_ = require_token(ids_, "[CLS]", source);
  sep_ = require_token(ids_, "[SEP]", source);
  auto pad = ids_.find("[PAD]");
  pad_ = pad == ids_.end() ? 0 : pad->second;
}

std::vector<std::string> wordpiece_tokenizer::basic_tokens(std::string_view text) const {
  std::size_t bad_at = 0;
  const auto decoded = decode_utf8(text, &bad_at);
  if (!decoded) throw input_error(fmt::format("text is not valid UTF-8 (byte {})", bad_at));
  std::u32string clean;
  for (char32_t c : *decoded) {
    if (c == 0 || c == 0xFFFD || is_control(c)) continue;
    if (is_whitespace(c)) {
      clean.push_back(' ');
    } else if (is_cjk(c)) {
      clean.push_back(' ');
      clean.push_back(c);
      clean.push_back(' ');
    } else {
      clean.push_back(c);
    }
  }
  std::vector<std::string> out;
  for (const auto& word : split_whitespace(clean)) {
    std::u32string piece;
    for (char32_t c : normalise_word(word, lowercase_)) {
      if (is_punctuation(c)) {
        if (!piece.empty()) out.push_back(encode_utf8(piece)), piece.clear();
        out.push_back(encode_utf8(std::u32string(1, c)));
      } else if (is_whitespace(c)) {  // lower-casing never makes spaces, but be safe
        if (!piece.empty()) out.push_back(encode_utf8(piece)), piece.clear();
      } else {
        piece.push_back(c);
      }
    }
    if (!piece.empty()) out.push_back(encode_utf8(piece));
  }
  return out;
}

std::vector<std::string> wordpiece_tokenizer::wordpieces(const std::string& word) const {
  const std::u32string chars = *decode_utf8(word);  // basic_tokens made it: valid
  if (chars.size() > max_word_chars) return {"[UNK]"};
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < chars.size()) {
    std::size_t end = chars.size();
    std::string found;
    for (; end > start; --end) {
      std::string candidate = (start > 0 ? "##" : "") + encode_utf8(chars.substr(start, end - start));
      if (ids_.count(candidate)) {
        found = std::move(candidate);
        break;
      }
    }
    if (found.empty()) return {"[UNK]"};
    pieces.push_back(std::move(found));
    start = end;
  }
  return pieces;
}

std::vector<int64_t> wordpiece_tokenizer::encode(std::string_view text, int64_t max_length) const {
  std::vector<int64_t> ids{cls_};
  const auto limit = static_cast<std::size_t>(std::max<int64_t>(max_length, 2) - 1);  // room for [SEP]
  for (const auto& word : basic_tokens(text)) {
    for (const auto& piece : wordpieces(word)) {
      if (ids.size() >= limit) break;
      ids.push_back(piece == "[UNK]" ? unk_ : ids_.at(piece));
    }
    if (ids.size() >= limit) break;
  }
  ids.push_back(sep_);
  return ids;
}

}  // namespace attnbench
