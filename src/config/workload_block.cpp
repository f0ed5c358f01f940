// The `workload` block and its `lengths` distribution: how many samples, how long, or a file of
// them (token ids, or text: through a WordPiece vocabulary for an encoder, a byte-level BPE
// tokenizer.json for a decoder).
#include <fmt/format.h>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {
namespace {

namespace fs = std::filesystem;

// Length distributions: which keys each kind takes (all required).
struct length_shape {
  std::string kind;
  names keys;
};
const std::vector<length_shape> length_shapes{
    {"fixed", {"length"}}, {"uniform", {"min", "max"}}, {"lognormal", {"median", "sigma", "min", "max"}}};

std::shared_ptr<const block_schema> lengths_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The length distribution: fixed (length), uniform (min, max) or lognormal (median, sigma, min, max)";
  names kinds;
  for (const auto& s : length_shapes) kinds.push_back(s.kind);
  const auto shortest = static_cast<double>(defaults::min_sample_length);
  b->keys = {
      choice_key("kind", kinds, "The distribution; it decides which other keys are required").is_required(),
      integer_key("length", "kind fixed: every sample's length in tokens").at_least(shortest),
      integer_key("min", "kind uniform, lognormal: the shortest length; <= max").at_least(shortest),
      integer_key("max", "kind uniform, lognormal: the longest length; <= workload.max_length").at_least(shortest),
      number_key("median", "kind lognormal: the median length").above(0),
      number_key("sigma", "kind lognormal: the log-space standard deviation").at_least(0),
  };
  b->extra["allOf"] = ordered_json::array();
  for (const auto& s : length_shapes) b->extra["allOf"].push_back(required_when("kind", s.kind, s.keys));
  return b;
}

}  // namespace

std::shared_ptr<const block_schema> workload_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The samples: a count and a length distribution, or a file of token ids (file) or of text (text)";
  b->keys = {
      integer_key("samples", "How many samples (required without file or text; with them it caps the count)")
          .at_least(1),
      object_key("lengths", lengths_schema(), "How long the samples are (required without file or text)"),
      integer_key("max_length",
                  "Padding target and longest sample, <= model.max_positions; default the longest length the "
                  "distribution can draw (with a file: model.max_positions)")
          .at_least(static_cast<double>(defaults::min_sample_length)),
      integer_key("seed", "Token and length seed").at_least(0).by_default(defaults::workload_seed),
      string_key("file", "Token ids, one JSON array (or {\"input_ids\": [...]}) per line; relative to the config file"),
      number_key("duplicate_fraction", "The fraction of samples that repeat an earlier one").at_least(0).below(1),
      string_key(
          "text",
          "Text, one sample per line, tokenized with workload.vocab (an encoder) or workload.tokenizer (a "
          "decoder); relative to the config file"),
      string_key("vocab",
                 "With text and an encoder: the WordPiece vocab.txt; default the one beside model.config"),
      boolean_key("lowercase", "With text and an encoder: lowercase before tokenizing"),
      string_key(
          "tokenizer",
          "With text and a decoder (gpt2, llama): a Hugging Face tokenizer.json, byte-level BPE (GPT-2's); "
          "default the one beside model.config; relative to the config file"),
  };
  return b;
}

void config_reader::read_workload() {
  object_reader w = root_.object("workload", true);
  if (!w.present()) return;
  w.check_keys();
  workload_config& wc = cfg_.workload;
  wc.seed = defaults::workload_seed;
  assign(wc.seed, w.unsigned_integer("seed"));
  bool from_file = w.has("file") || w.has("text");
  if (auto file = w.string("file")) {
    fs::path resolved = *file;
    if (resolved.is_relative()) resolved = fs::path(cfg_.source_path).parent_path() / resolved;
    wc.file = resolved.string();
    if (auto why = unreadable_reason(resolved)) w.add("file", *why);
  }
  read_text_workload(w, wc);
  if (auto f = w.number("duplicate_fraction")) {
    if (const double limit = *w.spec("duplicate_fraction").maximum; *f >= limit)
      w.add("duplicate_fraction", fmt::format("must be < {}; got {}", limit, *f));
    else
      wc.duplicate_fraction = *f;
  }
  if (!from_file) w.require("samples");
  assign(wc.samples, w.integer("samples"));

  std::optional<int64_t> longest;  // the longest length the lengths block allows
  if (from_file) {
    wc.lengths.kind = length_kind::file;
    if (w.has("lengths")) w.add("lengths", "not allowed with workload.file: lengths come from the file");
    longest = cfg_.model.max_positions;
  } else {
    longest = read_lengths(w.object("lengths", true));
  }

  auto max_length = w.integer("max_length");
  wc.max_length = max_length.value_or(longest.value_or(0));
  const int64_t max_positions = cfg_.model.max_positions;
  if (max_length && max_positions > 0 && *max_length > max_positions)
    w.add("max_length", fmt::format("must be <= model.max_positions ({}); got {}", max_positions, *max_length));
  if (max_length && longest && *longest > *max_length && !from_file) {
    const char* key = wc.lengths.kind == length_kind::fixed ? "length" : "max";
    w.add(child_path("lengths", key),
          fmt::format("must be <= workload.max_length ({}); got {}", *max_length, *longest));
  }
}

// workload.text: one sample per line, through the WordPiece vocabulary workload.vocab for an
// encoder, the byte-level BPE tokenizer.json workload.tokenizer for a decoder (each by default the
// file of that name beside model.config, as Hugging Face ships them).
void config_reader::read_text_workload(const object_reader& w, workload_config& wc) {
  if (!w.has("text")) {
    for (const char* key : {"vocab", "lowercase", "tokenizer"})
      if (w.has(key)) w.add(key, "only used with workload.text");
    return;
  }
  if (w.has("file")) w.add("text", "not allowed with workload.file: give token ids or text, not both");
  assign(wc.text, readable_file(w, "text"));
  const model_family family = cfg_.model.family;
  if (family == model_family::bert) {
    if (w.has("tokenizer"))
      w.add("tokenizer",
            "only for a decoder (model.family gpt2 or llama): an encoder's text goes through "
            "WordPiece, workload.vocab");
    read_text_file_beside_model(w, "vocab", "vocab.txt", wc.vocab, "");
    assign(wc.lowercase, w.boolean("lowercase"));
    return;
  }
  for (const char* key : {"vocab", "lowercase"})
    if (w.has(key))
      w.add(key, fmt::format("only for an encoder: a {} decoder's text goes through workload.tokenizer (a "
                             "byte-level BPE tokenizer.json), not WordPiece",
                             to_string(family)));
  read_text_file_beside_model(
      w, "tokenizer", "tokenizer.json", wc.tokenizer,
      fmt::format(" for a {} decoder: a Hugging Face tokenizer.json, byte-level BPE", to_string(family)));
}

// workload.<key>: given (resolved, readable), else `file_name` beside model.config, else required.
// `what` adds to the message of the last case.
void config_reader::read_text_file_beside_model(const object_reader& w, const std::string& key,
                                                const std::string& file_name, std::string& out,
                                                const std::string& what) {
  if (w.has(key)) {
    assign(out, readable_file(w, key));
  } else if (!cfg_.model.hf_config.empty()) {
    const fs::path beside = fs::path(cfg_.model.hf_config).parent_path() / file_name;
    if (auto why = unreadable_reason(beside))
      w.add(key, fmt::format("required: no {} beside model.config ({})", file_name, *why));
    else
      out = beside.string();
  } else {
    w.require(key, fmt::format("required with workload.text{} (no model.config to find a {} beside)", what,
                               file_name));
  }
}

// Reads the length distribution; returns the longest length it can draw when that is known.
std::optional<int64_t> config_reader::read_lengths(const object_reader& l) {
  if (!l.present()) return std::nullopt;
  length_config& lc = cfg_.workload.lengths;
  names all_keys{"kind"};
  for (const auto& s : length_shapes) all_keys.insert(all_keys.end(), s.keys.begin(), s.keys.end());
  l.require("kind");
  auto kind = l.choice("kind");
  auto shape = std::find_if(length_shapes.begin(), length_shapes.end(),
                            [&](const auto& s) { return kind && s.kind == *kind; });
  if (shape == length_shapes.end()) {
    std::sort(all_keys.begin(), all_keys.end());
    all_keys.erase(std::unique(all_keys.begin(), all_keys.end()), all_keys.end());
    l.check_keys(all_keys);
    return std::nullopt;
  }
  names keys{"kind"};
  keys.insert(keys.end(), shape->keys.begin(), shape->keys.end());
  l.check_keys(keys);
  for (const auto& key : shape->keys) l.require(key, "required for kind " + quote(*kind));

  if (*kind == "fixed") {
    lc.kind = length_kind::fixed;
    auto length = l.integer("length");
    assign(lc.length, length);
    return length;
  }
  lc.kind = *kind == "uniform" ? length_kind::uniform : length_kind::lognormal;
  if (lc.kind == length_kind::lognormal) {
    assign(lc.median, l.number("median"));
    assign(lc.sigma, l.number("sigma"));
  }
  auto min = l.integer("min");
  auto max = l.integer("max");
  assign(lc.min, min);
  assign(lc.max, max);
  if (min && max && *min > *max) l.add("min", fmt::format("must be <= max ({}); got {}", *max, *min));
  return max;
}

}  // namespace attnbench::config_reading
