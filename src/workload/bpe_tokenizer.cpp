#include "workload/bpe_tokenizer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/error.hpp"
#include "common/utf8.hpp"

namespace attnbench {
namespace {

using json = nlohmann::json;

// GPT-2's bytes_to_unicode: the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves, every other byte for U+0100 + its index among them, so no byte maps to
// whitespace or a control character.
const std::array<char32_t, 256>& byte_to_unicode() {
  static const std::array<char32_t, 256> map = [] {
    std::array<char32_t, 256> m{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      m[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return m;
  }();
  return map;
}

const std::unordered_map<char32_t, unsigned char>& unicode_to_byte() {
  static const std::unordered_map<char32_t, unsigned char> map = [] {
    std::unordered_map<char32_t, unsigned char> m;
    const auto& forward = byte_to_unicode();
    for (std::size_t b = 0; b < forward.size(); ++b) m[forward[b]] = static_cast<unsigned char>(b);
    return m;
  }();
  return map;
}

// The regex's classes (see the header for what is approximated).
bool is_space(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0; }
bool is_letter(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_L_MASK) != 0; }
bool is_number(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0; }
bool is_other(char32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

// The length of the contraction ('s 't 're 've 'm 'll 'd, lower case only, as GPT-2's pattern)
// starting at i, or 0.
std::size_t contraction_at(const std::u32string& s, std::size_t i) {
  if (s[i] != U'\'' || i + 1 >= s.size()) return 0;
  const char32_t a = s[i + 1];
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 < s.size()) {
    const char32_t b = s[i + 2];
    if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  }
  return 0;
}

// ` ?CLASS+` at i: its length, or 0.
template <typename Class>
std::size_t optional_space_then_run(const std::u32string& s, std::size_t i, Class in_class) {
  std::size_t j = i;
  if (s[j] == U' ') ++j;
  const std::size_t start = j;
  while (j < s.size() && in_class(s[j])) ++j;
  return j > start ? j - i : 0;
}

// The pattern's alternatives in order at i: the first that matches wins, as in a regex engine.
std::size_t gpt2_piece_at(const std::u32string& s, std::size_t i) {
  if (auto n = contraction_at(s, i)) return n;
  if (auto n = optional_space_then_run(s, i, is_letter)) return n;
  if (auto n = optional_space_then_run(s, i, is_number)) return n;
  if (auto n = optional_space_then_run(s, i, is_other)) return n;
  // s[i] is whitespace here. \s+(?!\S): the run, less its last character when a non-space
  // follows (the backtracking that leaves " word" its space); \s+ when that leaves nothing.
  std::size_t j = i;
  while (j < s.size() && is_space(s[j])) ++j;
  const std::size_t run = j - i;
  if (j == s.size() || run == 1) return run;
  return run - 1;
}

// The length of the maximal subpart at `at`, where a UTF-8 sequence is invalid: its lead byte and
// the continuation bytes that could still begin a valid sequence with it (at least 1). Unicode's
// "substitution of maximal subparts", what Rust's from_utf8_lossy and so `tokenizers` replace
// with one U+FFFD: a 3-byte character cut after 2 bytes becomes one U+FFFD, not two.
std::size_t maximal_subpart(std::string_view s, std::size_t at) {
  const auto lead = static_cast<unsigned char>(s[at]);
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) lo = 0xA0;  // no overlongs
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) lo = 0x90;  // no overlongs
    if (lead == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return 1;
  }
  std::size_t n = 1;
  for (std::size_t k = 0; k < need && at + n < s.size(); ++k, ++n) {
    const auto c = static_cast<unsigned char>(s[at + n]);
    if (k == 0 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) break;
  }
  return n;
}

std::string map_bytes(std::string_view piece) {
  const auto& map = byte_to_unicode();
  std::string out;
  for (unsigned char b : piece) append_utf8(out, map[b]);
  return out;
}

// The tokenizer.json's keys, read with errors that name the file and the key.
class json_file {
 public:
  explicit json_file(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw input_error(key.empty() ? fmt::format("{}: {}", source_, what)
                                  : fmt::format("{}: key {}: {}", source_, key, what));
  }
  // A string key, or "" when absent or null.
  std::string string_or_empty(const json& obj, const char* name, const std::string& key) const {
    if (!obj.contains(name) || obj[name].is_null()) return {};
    if (!obj[name].is_string()) fail(key, "expected a string");
    return obj[name].get<std::string>();
  }
  bool boolean_or(const json& obj, const char* name, const std::string& key, bool fallback) const {
    if (!obj.contains(name) || obj[name].is_null()) return fallback;
    if (!obj[name].is_boolean()) fail(key, "expected true or false");
    return obj[name].get<bool>();
  }
  std::string type_of(const json& obj, const std::string& key) const {
    if (!obj.is_object()) fail(key, "expected an object");
    const std::string type = string_or_empty(obj, "type", key + ".type");
    if (type.empty()) fail(key + ".type", "missing");
    return type;
  }

 private:
  std::string source_;
};

}  // namespace

bpe_tokenizer bpe_tokenizer::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(fmt::format("{}: cannot read the tokenizer", path));
  std::ostringstream text;
  text << in.rdbuf();
  return from_json_text(text.str(), path);
}

bpe_tokenizer bpe_tokenizer::from_json_text(const std::string& text, const std::string& source) {
  const json_file f(source);
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) f.fail("", "not a JSON object (a Hugging Face tokenizer.json)");
  bpe_tokenizer t;
  t.source_ = source;

  if (!doc.contains("model")) f.fail("model", "missing");
  const json& model = doc["model"];
  if (const std::string type = f.type_of(model, "model"); type != "BPE")
    f.fail("model.type", fmt::format("\"{}\" is not implemented: attnbench reads byte-level BPE (GPT-2's) only",
                                     type));
  if (model.contains("dropout") && !model["dropout"].is_null() &&
      !(model["dropout"].is_number() && model["dropout"].get<double>() == 0))
    f.fail("model.dropout", "BPE dropout is not implemented (it makes encoding random)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!f.string_or_empty(model, key, std::string("model.") + key).empty())
      f.fail(std::string("model.") + key, "not implemented: byte-level BPE marks no sub-words");
  if (f.boolean_or(model, "byte_fallback", "model.byte_fallback", false))
    f.fail("model.byte_fallback", "byte fallback (<0xNN> tokens, SentencePiece's) is not implemented");
  t.ignore_merges_ = f.boolean_or(model, "ignore_merges", "model.ignore_merges", false);

  if (!model.contains("vocab") || !model["vocab"].is_object()) f.fail("model.vocab", "expected an object of token: id");
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0)
      f.fail("model.vocab", fmt::format("the id of {} is not a non-negative integer", json(token).dump()));
    const int64_t i = id.get<int64_t>();
    t.ids_[token] = i;
    t.tokens_[i] = token;
    t.vocab_size_ = std::max(t.vocab_size_, i + 1);
  }

  if (!model.contains("merges") || !model["merges"].is_array()) f.fail("model.merges", "expected an array");
  const json& merges = model["merges"];
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    const std::string key = fmt::format("model.merges[{}]", r);
    std::pair<std::string, std::string> pair;
    if (m.is_string()) {  // "a b"
      const std::string s = m.get<std::string>();
      const auto space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
        f.fail(key, fmt::format("{} is not two tokens separated by one space", m.dump()));
      pair = {s.substr(0, space), s.substr(space + 1)};
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["a", "b"]
      pair = {m[0].get<std::string>(), m[1].get<std::string>()};
    } else {
      f.fail(key, "expected \"a b\" or [\"a\", \"b\"]");
    }
    for (const auto& part : {pair.first, pair.second, pair.first + pair.second})
      if (!t.ids_.count(part)) f.fail(key, fmt::format("{} is not in model.vocab", json(part).dump()));
    t.ranks_.emplace(std::move(pair), static_cast<int64_t>(r));  // a pair listed twice keeps its first rank
  }
  if (const std::string unk = f.string_or_empty(model, "unk_token", "model.unk_token"); !unk.empty()) {
    auto it = t.ids_.find(unk);
    if (it == t.ids_.end()) f.fail("model.unk_token", fmt::format("{} is not in model.vocab", json(unk).dump()));
    t.unk_ = it->second;
  }

  if (doc.contains("added_tokens") && !doc["added_tokens"].is_null()) {
    if (!doc["added_tokens"].is_array()) f.fail("added_tokens", "expected an array");
    const json& added = doc["added_tokens"];
    for (std::size_t i = 0; i < added.size(); ++i) {
      const std::string key = fmt::format("added_tokens[{}]", i);
      const json& a = added[i];
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 ||
          !a.contains("content") || !a["content"].is_string())
        f.fail(key, "expected {\"id\": N, \"content\": \"...\"}");
      const int64_t id = a["id"].get<int64_t>();
      t.tokens_[id] = a["content"].get<std::string>();
      t.added_.insert(id);
      t.vocab_size_ = std::max(t.vocab_size_, id + 1);
    }
  }

  if (doc.contains("normalizer") && !doc["normalizer"].is_null())
    f.fail("normalizer", fmt::format("{} is not implemented (byte-level BPE takes the text as it is)",
                                     json(f.type_of(doc["normalizer"], "normalizer")).dump()));
  if (!doc.contains("pre_tokenizer") || doc["pre_tokenizer"].is_null())
    f.fail("pre_tokenizer", "missing: attnbench reads byte-level BPE, whose pre-tokenizer is ByteLevel");
  const json& pre = doc["pre_tokenizer"];
  if (const std::string type = f.type_of(pre, "pre_tokenizer"); type != "ByteLevel")
    f.fail("pre_tokenizer.type",
           fmt::format("\"{}\" is not implemented: only ByteLevel (GPT-2's){}", type,
                       type == "Metaspace" ? "; a Metaspace file is a SentencePiece tokenizer (Llama 2's)" : ""));
  t.add_prefix_space_ = f.boolean_or(pre, "add_prefix_space", "pre_tokenizer.add_prefix_space", false);
  t.use_regex_ = f.boolean_or(pre, "use_regex", "pre_tokenizer.use_regex", true);

  if (doc.contains("post_processor") && !doc["post_processor"].is_null()) {
    // ByteLevel's post-processor only trims offsets; anything else adds or rearranges tokens.
    if (const std::string type = f.type_of(doc["post_processor"], "post_processor"); type != "ByteLevel")
      f.fail("post_processor.type",
             fmt::format("\"{}\" is not implemented (it adds special tokens around the text)", type));
  }
  if (doc.contains("decoder") && !doc["decoder"].is_null()) {
    if (const std::string type = f.type_of(doc["decoder"], "decoder"); type != "ByteLevel")
      f.fail("decoder.type", fmt::format("\"{}\" is not implemented: only ByteLevel", type));
  }
  return t;
}

std::vector<std::string> bpe_tokenizer::pre_tokens(std::string_view text) const {
  std::size_t bad_at = 0;
  auto decoded = decode_utf8(text, &bad_at);
  if (!decoded) throw input_error(fmt::format("text is not valid UTF-8 (byte {})", bad_at));
  std::u32string s = std::move(*decoded);
  if (add_prefix_space_ && !s.empty() && s.front() != U' ') s.insert(s.begin(), U' ');
  std::vector<std::string> out;
  if (s.empty()) return out;
  if (!use_regex_) return {encode_utf8(s)};
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = gpt2_piece_at(s, i);
    out.push_back(encode_utf8(std::u32string_view(s).substr(i, n)));
    i += n;
  }
  return out;
}

std::vector<int64_t> bpe_tokenizer::bpe(const std::string& mapped) const {
  if (ignore_merges_) {
    if (auto it = ids_.find(mapped); it != ids_.end()) return {it->second};
  }
  // One symbol per byte-mapped character, then merges until none applies.
  std::vector<std::string> symbols;
  const std::u32string chars = decode_utf8(mapped).value_or(std::u32string{});  // map_bytes made it: valid
  for (char32_t c : chars) symbols.push_back(encode_utf8(std::u32string(1, c)));
  while (symbols.size() > 1) {
    int64_t best_rank = std::numeric_limits<int64_t>::max();
    std::size_t best = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = ranks_.find({symbols[i], symbols[i + 1]});
      if (it != ranks_.end() && it->second < best_rank) best_rank = it->second, best = i;
    }
    if (best_rank == std::numeric_limits<int64_t>::max()) break;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<int64_t> ids;
  ids.reserve(symbols.size());
  for (const auto& sym : symbols) {
    auto it = ids_.find(sym);
    if (it != ids_.end()) {
      ids.push_back(it->second);
    } else if (unk_ >= 0) {
      ids.push_back(unk_);
    } else {
      throw input_error(fmt::format("{}: no token for {} and no model.unk_token", source_, json(sym).dump()));
    }
  }
  return ids;
}

std::vector<int64_t> bpe_tokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  for (const auto& piece : pre_tokens(text))
    for (int64_t id : bpe(map_bytes(piece))) ids.push_back(id);
  return ids;
}

std::string bpe_tokenizer::decode(const std::vector<int64_t>& ids) const {
  const auto& back = unicode_to_byte();
  std::string bytes;
  for (int64_t id : ids) {
    auto it = tokens_.find(id);
    if (it == tokens_.end()) throw input_error(fmt::format("{}: no token has id {}", source_, id));
    if (added_.count(id)) {
      bytes += it->second;
      continue;
    }
    const std::u32string chars = decode_utf8(it->second).value_or(std::u32string{});  // JSON strings: UTF-8
    for (char32_t c : chars) {
      auto b = back.find(c);
      if (b != back.end())
        bytes.push_back(static_cast<char>(b->second));
      else
        append_utf8(bytes, c);  // not a byte-mapped character: as written, as `tokenizers` does
    }
  }
  std::string out;
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t bad = 0;
    const std::string_view rest = std::string_view(bytes).substr(at);
    if (decode_utf8(rest, &bad)) {
      out.append(rest);
      break;
    }
    out.append(rest.substr(0, bad));
    append_utf8(out, U'\uFFFD');
    at += bad + maximal_subpart(rest, bad);
  }
  return out;
}

}  // namespace attnbench
