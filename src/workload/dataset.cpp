#include "workload/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/utf8.hpp"
#include "workload/bpe_tokenizer.hpp"
#include "workload/wordpiece_tokenizer.hpp"

namespace attnbench {
namespace {

constexpr double two_pi = 6.283185307179586;
// BERT's vocabulary keeps [PAD]=0, [CLS]=101, [SEP]=102 and ordinary word pieces from 999 on.
constexpr int64_t bert_vocab_min = 1000;
// Seed offset of the duplicate-picking stream (any fixed odd constant).
constexpr uint64_t duplicate_stream = 0x9e3779b97f4a7c15ULL;

// A uniform double in [0, 1) from the top 53 bits: the same on every platform.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

int64_t uniform_int(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // inclusive
  const auto span = static_cast<double>(hi - lo + 1);
  return std::min(hi, lo + static_cast<int64_t>(uniform01(rng) * span));
}

double standard_normal(std::mt19937_64& rng) {  // Box–Muller
  const double u1 = 1.0 - uniform01(rng);       // (0, 1]: log() stays finite
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

int64_t draw_length(const length_config& l, std::mt19937_64& rng) {
  switch (l.kind) {
    case length_kind::fixed: return l.length;
    case length_kind::uniform: return uniform_int(rng, l.min, l.max);
    case length_kind::lognormal: {
      const double x = l.median * std::exp(l.sigma * standard_normal(rng));
      return std::clamp(static_cast<int64_t>(std::llround(x)), l.min, l.max);
    }
    case length_kind::file: break;
  }
  throw std::logic_error("draw_length: file lengths come from the file");
}

std::string describe(const length_config& l) {
  switch (l.kind) {
    case length_kind::fixed: return fmt::format("fixed({})", l.length);
    case length_kind::uniform: return fmt::format("uniform[{}, {}]", l.min, l.max);
    case length_kind::lognormal:
      return fmt::format("lognormal(median={}, sigma={}) clipped to [{}, {}]", l.median, l.sigma, l.min, l.max);
    case length_kind::file: break;
  }
  return "file";
}

dataset generate(const workload_config& w, const model_config& m) {
  const special_tokens sp = special_tokens_for(m.vocab_size);
  std::mt19937_64 rng(w.seed);
  dataset d;
  d.description = describe(w.lengths);
  d.samples.reserve(static_cast<std::size_t>(w.samples));
  for (int64_t i = 0; i < w.samples; ++i) {
    const int64_t len = draw_length(w.lengths, rng);
    std::vector<int64_t> ids(static_cast<std::size_t>(len));
    ids.front() = sp.cls;
    for (int64_t t = 1; t + 1 < len; ++t) ids[static_cast<std::size_t>(t)] = uniform_int(rng, sp.first_regular, m.vocab_size - 1);
    ids.back() = sp.sep;
    d.samples.push_back(std::move(ids));
  }
  if (w.duplicate_fraction > 0) {
    // A separate stream, so adding duplicates leaves every other sample as it was.
    std::mt19937_64 dup(w.seed ^ duplicate_stream);
    for (std::size_t i = 1; i < d.samples.size(); ++i)
      if (uniform01(dup) < w.duplicate_fraction)
        d.samples[i] = d.samples[static_cast<std::size_t>(uniform_int(dup, 0, static_cast<int64_t>(i) - 1))];
    d.description += fmt::format(", {:.0f}% duplicates requested", w.duplicate_fraction * 100);
  }
  return d;
}

// One sample per line: a JSON array of token ids, or an object with "input_ids". Blank lines
// are skipped.
dataset read_jsonl(const workload_config& w, const model_config& m) {
  std::ifstream in(w.file);
  if (!in) throw input_error("workload.file", fmt::format("cannot read {}", w.file));
  dataset d;
  d.description = fmt::format("file {}", w.file);
  std::string line;
  std::vector<problem> problems;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (w.samples > 0 && static_cast<int64_t>(d.samples.size()) >= w.samples) break;
    const auto where = [&](const std::string& what) {
      problems.push_back({"workload.file", fmt::format("{}:{}: {}", w.file, lineno, what)});
    };
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) { where("not valid JSON"); continue; }
    if (j.is_object() && j.contains("input_ids")) j = j["input_ids"];
    if (!j.is_array() || j.empty()) { where("expected a non-empty array of token ids (or {\"input_ids\": [...]})"); continue; }
    if (static_cast<int64_t>(j.size()) > w.max_length) {
      where(fmt::format("{} tokens exceed workload.max_length {}", j.size(), w.max_length));
      continue;
    }
    std::vector<int64_t> ids;
    for (const auto& v : j) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= m.vocab_size) {
        where(fmt::format("token {} is not an integer in [0, {})", v.dump(), m.vocab_size));
        ids.clear();
        break;
      }
      ids.push_back(v.get<int64_t>());
    }
    if (!ids.empty()) d.samples.push_back(std::move(ids));
    if (problems.size() >= 10) break;  // enough to act on; the rest are likely the same mistake
  }
  if (problems.empty() && d.samples.empty()) problems.push_back({"workload.file", fmt::format("{} holds no samples", w.file)});
  if (!problems.empty()) throw input_error(std::move(problems));
  return d;
}

// A file's bytes, read once: what is hashed is what is parsed. `key` names the config key in errors.
std::string file_bytes(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(key, fmt::format("cannot read {}", path));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string fnv1a64_of(const std::string& bytes) {
  fnv1a64 h;
  h.update(bytes);
  return h.hex();
}

// One sample per line of UTF-8 text: `encode(line, lineno, cut)` gives its ids, at most max_length
// of them, and sets `cut` when it dropped some. Blank lines are skipped, as in token files;
// workload.samples caps the count. The description is `description` and how many lines were cut.
template <typename Encode>
dataset read_text_lines(const workload_config& w, std::string description, Encode encode) {
  std::ifstream in(w.text, std::ios::binary);
  if (!in) throw input_error("workload.text", fmt::format("cannot read {}", w.text));
  dataset d;
  d.description = std::move(description);
  std::string line;
  int64_t truncated = 0;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (w.samples > 0 && static_cast<int64_t>(d.samples.size()) >= w.samples) break;
    if (!is_valid_utf8(line)) throw input_error("workload.text", fmt::format("{}:{}: not valid UTF-8", w.text, lineno));
    bool cut = false;
    d.samples.push_back(encode(line, lineno, cut));
    if (cut) ++truncated;
  }
  if (d.samples.empty()) throw input_error("workload.text", fmt::format("{} holds no samples", w.text));
  if (truncated > 0) d.description += fmt::format(", {} truncated to {} tokens", truncated, w.max_length);
  return d;
}

// An encoder's samples: each line through the WordPiece tokenizer, [CLS] … [SEP], truncated to
// max_length with [SEP] kept.
dataset read_wordpiece_text(const workload_config& w, const model_config& m) {
  const auto tokenizer = wordpiece_tokenizer::from_file(w.vocab, w.lowercase);
  if (tokenizer.vocab_size() > m.vocab_size)
    throw input_error("workload.vocab",
                      fmt::format("{} holds {} tokens, more than the model's vocabulary of {}", w.vocab,
                                  tokenizer.vocab_size(), m.vocab_size));
  dataset d = read_text_lines(w, fmt::format("text {}", w.text),
                              [&](const std::string& line, int64_t /*lineno*/, bool& cut) {
                                auto ids = tokenizer.encode(line, w.max_length);
                                cut = static_cast<int64_t>(ids.size()) == w.max_length &&
                                      tokenizer.encode(line, w.max_length + 1).size() > ids.size();
                                return ids;
                              });
  d.tokenizer = w.vocab;
  d.tokenizer_fnv1a64 = fnv1a64_of(file_bytes(w.vocab, "workload.vocab"));
  return d;
}

// A decoder's prompts: each line through the byte-level BPE tokenizer.json with no special token
// added (a GPT-2 or Llama prompt as generate() is given it), truncated to its first max_length ids.
dataset read_bpe_text(const workload_config& w, const model_config& m) {
  const std::string bytes = file_bytes(w.tokenizer, "workload.tokenizer");
  const bpe_tokenizer tokenizer = [&] {
    try {
      return bpe_tokenizer::from_json_text(bytes, w.tokenizer);
    } catch (const input_error& e) {
      throw input_error("workload.tokenizer", e.what());  // the message names the file and the key
    }
  }();
  if (tokenizer.vocab_size() > m.vocab_size)
    throw input_error(
        "workload.tokenizer",
        fmt::format("{}: its largest id is {}, not below the model's vocab_size {}: the model has no "
                    "embedding for it",
                    w.tokenizer, tokenizer.vocab_size() - 1, m.vocab_size));
  const std::string description = fmt::format("text {}, byte-level BPE {}", w.text, w.tokenizer);
  dataset d = read_text_lines(w, description, [&](const std::string& line, int64_t lineno, bool& cut) {
    std::vector<int64_t> ids;
    try {
      ids = tokenizer.encode(line);
    } catch (const input_error& e) {
      throw input_error("workload.tokenizer", fmt::format("{}:{}: {}", w.text, lineno, e.what()));
    }
    cut = static_cast<int64_t>(ids.size()) > w.max_length;
    if (cut) ids.resize(static_cast<std::size_t>(w.max_length));
    return ids;
  });
  d.tokenizer = w.tokenizer;
  d.tokenizer_fnv1a64 = fnv1a64_of(bytes);
  return d;
}

// The model decides the tokenizer: WordPiece for the encoder, byte-level BPE for a decoder.
dataset read_text(const workload_config& w, const model_config& m) {
  if (m.family == model_family::bert) return read_wordpiece_text(w, m);
  if (w.tokenizer.empty())
    throw input_error("workload.tokenizer",
                      fmt::format("required with workload.text for a {} decoder: a Hugging "
                                  "Face tokenizer.json, byte-level BPE",
                                  to_string(m.family)));
  return read_bpe_text(w, m);
}

}  // namespace

special_tokens special_tokens_for(int64_t vocab_size) {
  if (vocab_size >= bert_vocab_min) return {0, 101, 102, 999};
  return {0, 1, 2, std::min<int64_t>(3, vocab_size - 1)};
}

dataset make_dataset(const workload_config& workload, const model_config& model) {
  if (!workload.text.empty()) return read_text(workload, model);
  return workload.file.empty() ? generate(workload, model) : read_jsonl(workload, model);
}

int64_t dataset::real_tokens() const {
  int64_t n = 0;
  for (const auto& s : samples) n += static_cast<int64_t>(s.size());
  return n;
}

int64_t dataset::min_length() const {
  int64_t n = samples.empty() ? 0 : INT64_MAX;
  for (const auto& s : samples) n = std::min<int64_t>(n, static_cast<int64_t>(s.size()));
  return n;
}

int64_t dataset::max_length() const {
  int64_t n = 0;
  for (const auto& s : samples) n = std::max<int64_t>(n, static_cast<int64_t>(s.size()));
  return n;
}

double dataset::mean_length() const {
  return samples.empty() ? 0.0 : static_cast<double>(real_tokens()) / static_cast<double>(samples.size());
}

}  // namespace attnbench
