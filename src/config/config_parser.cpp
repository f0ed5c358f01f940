#include "config/config_parser.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "config/byte_size.hpp"
#include "config/config_defaults.hpp"
#include "config/fp16_training.hpp"
#include "config/hf_config.hpp"
#include "config/profile_config.hpp"
#include "config/technique_catalog.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;
using names = std::vector<std::string>;

// Keys each object accepts. An unknown key is an error, so a typo never silently becomes a default.
const names root_keys{"schema_version", "name",     "model",    "workload", "measure",  "check",  "device",
                      "threads",        "variants", "baseline", "output",   "scenario", "server", "train",
                      "sweep",          "profile",  "distributed", "device_memory_limit", "description"};
const names model_keys{"preset",         "layers",        "hidden",          "heads",      "head_dim", "ffn",
                       "vocab_size",     "max_positions", "type_vocab_size", "num_labels", "attention",
                       "layer_norm_eps", "sdpa_backend",  "causal",          "seed",       "weights",
                       "config",         "torchscript",   "head"};
// With model.config the dimensions come from config.json, so these may not be given too.
const names hf_dim_keys{"preset",     "layers",        "hidden",          "heads",          "head_dim", "ffn",
                        "vocab_size", "max_positions", "type_vocab_size", "layer_norm_eps", "num_labels",
                        "seed",       "causal"};
const names workload_keys{"samples", "lengths", "max_length", "seed", "file", "duplicate_fraction",
                          "text",    "vocab",   "lowercase"};
const names measure_keys{"warmup",     "repetitions", "min_repetitions", "target_rel_half_width",
                         "max_time_s", "min_time_s",  "max_repetitions", "assemble_inputs",
                         "max_memory_bytes"};
const names check_block_keys{"tolerances", "study"};
// Batching keys shared by every kind, then each kind's own.
const names batching_common_keys{"kind", "pool", "cache", "max_queue_delay_ms"};
const names static_batching_keys{"batch_size", "padding"};
const names dynamic_batching_keys{"max_tokens", "max_batch_size", "grouping", "boundaries", "planner"};
const names server_keys{"rates", "requests", "max_time_s", "latency_bound_ms", "seed", "trace"};
const names scenarios{"offline", "server", "train"};
const names train_keys{"learning_rate", "weight_decay", "dropout", "seed"};
const names checkpointing_keys{"policy", "every"};
const names output_keys{"dir", "formats"};
const names offload_keys{"enabled", "prefetch", "pinned", "host_dtype", "target"};
const names offload_host_dtypes{"fp32", "compute"};
const names parallel_keys{"mode", "devices", "threads_per_worker"};
const names parallel_modes{"threads", "processes"};
const names distributed_keys{"timeout_s", "backend"};
const names distributed_backends{"auto", "gloo", "nccl"};
const names profile_keys{"skip_first",    "wait",           "warmup",     "active",     "repeat",
                         "record_shapes", "profile_memory", "with_flops", "with_stack", "top"};
// Technique blocks. offload and pipeline are read below; the others belong to later issues and
// only a pending variant may carry them (stored, not validated).
const names technique_keys{"offload", "parallel", "pipeline"};
const names pipeline_keys{"stages", "micro_batch", "layers", "threads_per_stage"};
// A function, not a constant: registered techniques may add keys ("linear"), and they register
// from other files' static initializers.
names variant_keys() {
  names keys{"name",         "description", "precision",     "attention",
             "sdpa_backend", "batching",    "checkpointing", "pending"};
  keys.insert(keys.end(), technique_keys.begin(), technique_keys.end());
  for (const auto& key : technique_option_keys())
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}
// Without a preset these must all be given; the other model fields have BERT defaults.
const names required_dims{"layers", "hidden", "heads", "vocab_size", "max_positions"};

// Length distributions: which keys each kind takes (all required).
struct length_shape {
  std::string kind;
  names keys;
};
const std::vector<length_shape> length_shapes{
    {"fixed", {"length"}}, {"uniform", {"min", "max"}}, {"lognormal", {"median", "sigma", "min", "max"}}};

const names batching_kinds{"static", "dynamic"};
const names groupings{"sorted", "bucketed"};
const names device_forms{"auto", "cpu", "cuda", "cuda:N"};

// A key or name this close to a known one is taken for a typo of it.
constexpr size_t typo_distance = 2;
constexpr size_t typo_fraction = 3;  // ... or within a third of its length, for long keys
// Long string values are cut in messages so one bad value cannot flood the report.
constexpr size_t shown_chars = 60;

std::string join(const names& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string quote(const std::string& s) { return ordered_json(s).dump(); }

template <class E, size_t N>
names names_of(const std::array<E, N>& values) {
  names out;
  for (E v : values) out.push_back(to_string(v));
  return out;
}
constexpr std::array all_precisions{precision_kind::fp32, precision_kind::amp_bf16, precision_kind::amp_fp16};

// "precision": "amp" asks the runner for the device's AMP dtype (techniques/amp_choice.hpp).
// Not a tolerance key: the resolved precision's tolerance applies.
constexpr const char* amp_auto_precision = "amp";

// The core precisions, then those registered techniques add (config/technique_catalog.hpp).
names tolerance_keys() {
  names all = names_of(all_precisions);
  for (const auto* o : technique_options("precision")) all.push_back(o->value);
  return all;
}

// What a variant's "precision" may be: the tolerance keys and "amp".
names precision_values() {
  names all = tolerance_keys();
  all.insert(all.begin() + static_cast<std::ptrdiff_t>(all_precisions.size()), amp_auto_precision);
  return all;
}
constexpr std::array all_backends{sdpa_backend::auto_select, sdpa_backend::flash, sdpa_backend::efficient,
                                  sdpa_backend::math, sdpa_backend::cudnn};
constexpr std::array all_paddings{padding_kind::max_length, padding_kind::longest};
constexpr std::array all_planners{planner_kind::greedy, planner_kind::cost};
constexpr std::array all_checkpoint_policies{checkpoint_policy::none, checkpoint_policy::every,
                                             checkpoint_policy::sqrt};

names preset_names() {
  names out;
  for (const auto& p : defaults::model_presets) out.emplace_back(p.name);
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The candidate nearest to `word`, when it is near enough to be a likely typo.
std::optional<std::string> closest(const std::string& word, const names& candidates) {
  std::optional<std::string> best;
  size_t best_distance = std::max(typo_distance, word.size() / typo_fraction) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

// How a value is shown in "got ...": strings quoted, containers by kind.
std::string describe(const ordered_json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string text = v.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  if (v.is_string() && text.size() > shown_chars) text = text.substr(0, shown_chars) + "...\"";
  return text;
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Collects problems while walking the document, so the user sees all of them at once.
class problem_log {
 public:
  void add(std::string path, std::string message) {
    problems_.push_back({std::move(path), std::move(message)});
  }
  bool empty() const { return problems_.empty(); }
  std::vector<problem> take() { return std::move(problems_); }

  // Typed reads of one value: the value, or nullopt after logging why not.
  std::optional<int64_t> integer(const ordered_json& v, const std::string& path, int64_t min) {
    if (!v.is_number_integer()) return type_error(path, "an integer", v);
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
      add(path, fmt::format("must be <= {}; got {}", std::numeric_limits<int64_t>::max(), v.dump()));
      return std::nullopt;
    }
    auto n = v.get<int64_t>();
    if (n >= min) return n;
    add(path, fmt::format("must be >= {}; got {}", min, n));
    return std::nullopt;
  }

  std::optional<uint64_t> unsigned_integer(const ordered_json& v, const std::string& path) {
    if (!v.is_number_integer()) return type_error(path, "an integer", v);
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    add(path, fmt::format("must be >= 0; got {}", v.dump()));
    return std::nullopt;
  }

  // A number >= min, or > min when `exclusive`.
  std::optional<double> number(const ordered_json& v, const std::string& path, double min, bool exclusive) {
    if (!v.is_number()) return type_error(path, "a number", v);
    auto x = v.get<double>();
    if (exclusive ? x > min : x >= min) return x;
    add(path, fmt::format("must be {} {}; got {}", exclusive ? ">" : ">=", min, v.dump()));
    return std::nullopt;
  }

  std::optional<bool> boolean(const ordered_json& v, const std::string& path) {
    if (!v.is_boolean()) return type_error(path, "a boolean", v);
    return v.get<bool>();
  }

  std::optional<std::string> string(const ordered_json& v, const std::string& path) {
    if (!v.is_string()) return type_error(path, "a string", v);
    auto s = v.get<std::string>();
    if (!s.empty()) return s;
    add(path, "must not be empty");
    return std::nullopt;
  }

  std::optional<std::string> choice(const ordered_json& v, const std::string& path, const names& options) {
    if (v.is_string() && std::count(options.begin(), options.end(), v.get<std::string>()))
      return v.get<std::string>();
    add(path, fmt::format("expected one of {}; got {}", join(options), describe(v)));
    return std::nullopt;
  }

  template <class E, size_t N>
  std::optional<E> enumeration(const ordered_json& v, const std::string& path,
                               const std::array<E, N>& values) {
    auto name = choice(v, path, names_of(values));
    if (!name) return std::nullopt;
    return *std::find_if(values.begin(), values.end(), [&](E e) { return to_string(e) == *name; });
  }

  std::nullopt_t type_error(const std::string& path, const char* expected, const ordered_json& v) {
    add(path, fmt::format("expected {}; got {}", expected, describe(v)));
    return std::nullopt;
  }

 private:
  std::vector<problem> problems_;
};

// One JSON object at a known path (or an absent one): finds fields and reads them typed, so
// every problem names the field's full path.
class object_reader {
 public:
  object_reader(const ordered_json* obj, std::string path, problem_log& log)
      : obj_(obj), path_(std::move(path)), log_(&log) {}

  bool present() const { return obj_ != nullptr; }
  const std::string& path() const { return path_; }
  std::string path(const std::string& key) const { return child_path(path_, key); }
  const ordered_json* find(const std::string& key) const {
    if (!obj_) return nullptr;
    auto it = obj_->find(key);
    return it == obj_->end() ? nullptr : &*it;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }
  void add(const std::string& key, std::string message) const { log_->add(path(key), std::move(message)); }
  bool require(const std::string& key, const std::string& why = "required") const {
    if (!present() || has(key)) return true;
    add(key, why);
    return false;
  }

  // Reports keys outside `allowed`, suggesting the nearest allowed one.
  void check_keys(const names& allowed) const {
    if (!obj_) return;
    for (const auto& [key, value] : obj_->items()) {
      if (std::count(allowed.begin(), allowed.end(), key)) continue;
      auto guess = closest(key, allowed);
      add(key, guess ? fmt::format("unknown key; did you mean {}?", quote(*guess))
                     : "unknown key; allowed keys: " + join(allowed));
    }
  }

  // The sub-object at `key`: absent when missing or not an object (the latter logged).
  object_reader object(const std::string& key, bool required = false) const {
    const ordered_json* v = find(key);
    if (!v && required) require(key);
    if (v && !v->is_object()) {
      log_->type_error(path(key), "an object", *v);
      v = nullptr;
    }
    return object_reader(v, path(key), *log_);
  }

  std::optional<int64_t> integer(const std::string& key, int64_t min) const {
    return read(key, [&](const ordered_json& v, const std::string& p) { return log_->integer(v, p, min); });
  }
  std::optional<uint64_t> unsigned_integer(const std::string& key) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->unsigned_integer(v, p); });
  }
  std::optional<double> number(const std::string& key, double min, bool exclusive) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->number(v, p, min, exclusive); });
  }
  std::optional<bool> boolean(const std::string& key) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->boolean(v, p); });
  }
  std::optional<std::string> string(const std::string& key) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->string(v, p); });
  }
  std::optional<std::string> choice(const std::string& key, const names& options) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->choice(v, p, options); });
  }
  template <class E, size_t N>
  std::optional<E> enumeration(const std::string& key, const std::array<E, N>& values) const {
    return read(key, [&](const auto& v, const auto& p) { return log_->enumeration(v, p, values); });
  }

 private:
  template <class F>
  auto read(const std::string& key, F&& reader) const
      -> std::invoke_result_t<F, const ordered_json&, const std::string&> {
    const ordered_json* v = find(key);
    if (!v) return std::nullopt;
    return reader(*v, path(key));
  }

  const ordered_json* obj_;
  std::string path_;
  problem_log* log_;
};

template <class T, class U>
void assign(T& target, const std::optional<U>& value) {
  if (value) target = *value;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// 0 for "cuda", N for "cuda:N", nullopt for anything else.
std::optional<int> cuda_index(const std::string& device) {
  if (device == "cuda") return 0;
  const std::string prefix = "cuda:";
  if (device.rfind(prefix, 0) != 0) return std::nullopt;
  std::string digits = device.substr(prefix.size());
  bool numeric = !digits.empty() && digits.size() <= size_t(std::numeric_limits<int>::digits10) &&
                 std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? std::optional<int>(std::stoi(digits)) : std::nullopt;
}

// Line and column (1-based) of a byte offset, for parse errors a person can find in an editor.
std::pair<size_t, size_t> line_and_column(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  size_t line_start = text.rfind('\n', offset == 0 ? std::string::npos : offset - 1);
  if (offset == 0 || line_start == std::string::npos) return {line, offset + 1};
  return {line, offset - line_start};
}

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." →
// "syntax error ...": the location is recomputed by the caller.
std::string parse_error_reason(const std::string& what) {
  auto colon = what.find(": ", what.find(']'));
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Why the directory `dir` could not be created or written, or nullopt if it can.
std::optional<std::string> unwritable_reason(const std::string& dir) {
  fs::path existing = dir;
  std::error_code ec;
  while (!fs::exists(existing, ec)) {
    fs::path parent = existing.parent_path();
    existing = (parent.empty() || parent == existing) ? fs::path(".") : parent;
  }
  bool self = existing == fs::path(dir);
  std::string prefix = self ? "" : fmt::format("cannot create {}: ", quote(dir));
  if (!fs::is_directory(existing, ec))
    return prefix + fmt::format("{} is not a directory", quote(existing.string()));
  if (::access(existing.c_str(), W_OK) != 0)
    return prefix + fmt::format("{} is not writable", quote(existing.string()));
  return std::nullopt;
}

// Why `file` cannot be read, or nullopt if it can.
std::optional<std::string> unreadable_reason(const fs::path& file) {
  std::error_code ec;
  std::string shown = quote(file.string());
  if (!fs::exists(file, ec)) return shown + " does not exist";
  if (!fs::is_regular_file(file, ec)) return shown + " is not a regular file";
  if (::access(file.c_str(), R_OK) != 0) return shown + " is not readable";
  return std::nullopt;
}

// The `profile` block into `pc`, reporting problems through the reader's log.
void read_profile_block(const object_reader& root, profile_config& pc) {
  pc = {defaults::profile_skip_first, defaults::profile_wait,       defaults::profile_warmup,
        defaults::profile_active,     defaults::profile_repeat,     defaults::profile_record_shapes,
        defaults::profile_memory,     defaults::profile_with_flops, defaults::profile_with_stack,
        defaults::profile_top};
  object_reader p = root.object("profile");
  p.check_keys(profile_keys);
  assign(pc.skip_first, p.integer("skip_first", 0));
  assign(pc.wait, p.integer("wait", 0));
  assign(pc.warmup, p.integer("warmup", 0));
  // 0 is let through the reader so that the message can say why it is wrong.
  if (auto active = p.integer("active", 0)) {
    pc.active = *active;
    if (*active == 0) p.add("active", "must be >= 1: a schedule without active steps records nothing");
  }
  if (auto repeat = p.integer("repeat", 0)) {
    pc.repeat = *repeat;
    if (*repeat == 0) p.add("repeat", "must be >= 1: 0 (repeat forever) has no end in a benchmark");
  }
  assign(pc.record_shapes, p.boolean("record_shapes"));
  assign(pc.profile_memory, p.boolean("profile_memory"));
  assign(pc.with_flops, p.boolean("with_flops"));
  assign(pc.with_stack, p.boolean("with_stack"));
  assign(pc.top, p.integer("top", 1));
}

// Walks one document into a config. Sections are read in dependency order: the device before
// what it constrains, the model before the workload, variants before the baseline.
class config_reader {
 public:
  config_reader(const ordered_json& doc, std::string source_path, const device_caps& caps)
      : doc_(doc), caps_(caps), root_(&doc, "", log_) {
    cfg_.source_path = std::move(source_path);
    cfg_.raw = doc;
  }

  config read() {
    if (!doc_.is_object()) {
      log_.type_error("", "an object", doc_);
      throw input_error(log_.take());
    }
    root_.check_keys(root_keys);
    read_header();
    read_device();
    read_model();
    read_workload();
    read_measure();
    read_check();
    read_scenario();
    read_variants();
    read_distributed();
    read_baseline();
    read_output();
    read_sweep_block();
    read_profile();
    if (!log_.empty()) throw input_error(log_.take());
    return std::move(cfg_);
  }

 private:
  void read_header() {
    if (auto v = root_.integer("schema_version", std::numeric_limits<int64_t>::min());
        v && *v != config_schema_version)
      root_.add("schema_version", fmt::format("must be {}; got {}", config_schema_version, *v));
    root_.require("name");
    if (auto name = root_.string("name")) {
      cfg_.name = *name;
      if (!std::all_of(name->begin(), name->end(), is_name_char))
        root_.add("name", "must use only the characters A-Z a-z 0-9 . _ -; got " + quote(*name));
    }
    if (auto d = root_.string("description")) cfg_.description = *d;  // free text: what the config is for
    cfg_.threads = defaults::threads;
    assign(cfg_.threads, root_.integer("threads", 0));
  }

  // "device_memory_limit" (config/byte_size.hpp): validated here, read from the document by the
  // runner.
  void read_memory_limit() {
    const ordered_json* v = root_.find("device_memory_limit");
    if (!v || parse_byte_size(*v)) return;
    log_.add(root_.path("device_memory_limit"),
             fmt::format("expected a size in bytes or a string such as \"4GiB\", \"512MiB\"; got {}", v->dump()));
  }

  void read_device() {
    read_memory_limit();
    cfg_.device = std::string(defaults::device);
    auto device = root_.string("device");
    if (!device) {
      if (!root_.has("device")) on_cpu_ = caps_.cuda_devices == 0;
      return;
    }
    cfg_.device = *device;
    std::optional<int> index;  // the CUDA device asked for
    if (*device == "auto") {
      on_cpu_ = caps_.cuda_devices == 0;
    } else if (*device == "cpu") {
      on_cpu_ = true;
    } else if (index = cuda_index(*device); !index) {
      root_.add("device", fmt::format("expected one of {}; got {}", join(device_forms), quote(*device)));
      return;
    }
    if (!index) return;
    on_cpu_ = false;
    if (*index >= caps_.cuda_devices)
      root_.add("device",
                fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*device),
                            caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
  }

  void read_model() {
    object_reader m = root_.object("model", true);
    if (!m.present()) return;
    m.check_keys(model_keys);
    model_config& mc = cfg_.model;
    mc.vocab_size = defaults::vocab_size;
    mc.max_positions = defaults::max_positions;
    mc.type_vocab_size = defaults::type_vocab_size;
    mc.layer_norm_eps = defaults::layer_norm_eps;
    mc.num_labels = defaults::num_labels;
    mc.attention = defaults::attention;
    mc.backend = defaults::backend;
    mc.causal = defaults::causal;
    mc.seed = defaults::model_seed;
    const auto head = m.choice("head", {"random", "decisive"});
    if (head) mc.head = *head == "decisive" ? head_kind::decisive : head_kind::random;
    if (read_real_model(m, mc)) {
      if (mc.head == head_kind::decisive)
        m.add("head", "\"decisive\" fits the head of seeded weights; a loaded model keeps its own");
      return;
    }
    if (auto name = m.choice("preset", preset_names())) {
      mc.preset = *name;
      for (const auto& p : defaults::model_presets) {
        if (p.name != *name) continue;
        mc.layers = p.layers;
        mc.hidden = p.hidden;
        mc.heads = p.heads;
      }
    } else if (!m.has("preset")) {
      for (const auto& dim : required_dims) m.require(dim, "required without model.preset");
    }
    assign(mc.layers, m.integer("layers", 1));
    assign(mc.hidden, m.integer("hidden", 1));
    assign(mc.heads, m.integer("heads", 1));
    if (auto ffn = m.integer("ffn", 1)) {
      mc.ffn = *ffn;
    } else if (mc.hidden > std::numeric_limits<int64_t>::max() / defaults::ffn_multiplier) {
      // The default ffn, ffn_multiplier × hidden, would overflow int64
      // (tests/fuzz/corpus/config/ffn-overflow.json).
      m.add("hidden", fmt::format("must be <= {} when model.ffn is not given ({} × hidden); got {}",
                                  std::numeric_limits<int64_t>::max() / defaults::ffn_multiplier,
                                  defaults::ffn_multiplier, mc.hidden));
    } else {
      mc.ffn = defaults::ffn_multiplier * mc.hidden;
    }
    assign(mc.vocab_size, m.integer("vocab_size", 1));
    assign(mc.max_positions, m.integer("max_positions", defaults::min_sample_length));
    assign(mc.type_vocab_size, m.integer("type_vocab_size", 1));
    assign(mc.num_labels, m.integer("num_labels", 1));
    assign(mc.layer_norm_eps, m.number("layer_norm_eps", 0, true));
    read_attention(m, mc.attention, mc.kernel);
    auto backend = m.enumeration("sdpa_backend", all_backends);
    assign(mc.backend, backend);
    assign(mc.causal, m.boolean("causal"));
    assign(mc.seed, m.unsigned_integer("seed"));

    if (mc.hidden > 0 && mc.heads > 0 && mc.hidden % mc.heads != 0)
      m.add(m.has("heads") ? "heads" : "hidden",
            fmt::format("hidden ({}) must be divisible by heads ({})", mc.hidden, mc.heads));
    // A known key, refused with the reason rather than as a typo.
    if (m.has("head_dim"))
      m.add("head_dim",
            "not supported: each head is hidden / heads wide, so heads × head_dim = hidden; to trade heads against "
            "head_dim at a fixed hidden size give model.heads (or sweep the \"heads\" axis); attention narrower "
            "than hidden comes from pruning heads (a variant's \"pruning\" block)");
    if (backend) check_backend(m, mc.attention, *backend);
  }

  // A path in the config, resolved against the config's directory and checked readable.
  std::optional<std::string> readable_file(const object_reader& obj, const std::string& key) {
    auto file = obj.string(key);
    if (!file) return std::nullopt;
    fs::path resolved = *file;
    if (resolved.is_relative()) resolved = fs::path(cfg_.source_path).parent_path() / resolved;
    if (auto why = unreadable_reason(resolved)) {
      obj.add(key, *why);
      return std::nullopt;
    }
    return resolved.string();
  }

  // model.weights / model.config / model.torchscript. Returns true when the model is a real one
  // whose dimensions need no preset.
  bool read_real_model(const object_reader& m, model_config& mc) {
    const bool hf = m.has("weights") || m.has("config");
    const bool scripted = m.has("torchscript");
    if (!hf && !scripted) return false;
    if (scripted && m.has("weights")) m.add("weights", "not allowed with model.torchscript");
    if (m.has("weights")) m.require("config", "required with model.weights: the dimensions come from config.json");
    if (m.has("config"))
      for (const auto& key : hf_dim_keys)
        if (m.has(key)) m.add(key, "not allowed with model.config: config.json gives the model's shape");
    read_attention(m, mc.attention, mc.kernel);
    auto backend = m.enumeration("sdpa_backend", all_backends);
    assign(mc.backend, backend);
    if (backend) check_backend(m, mc.attention, *backend);
    if (scripted) {
      assign(mc.torchscript, readable_file(m, "torchscript"));
      if (!m.has("config")) {
        // Without a config.json only what the workload needs is known: token range and length.
        for (const auto& key : hf_dim_keys)
          if (key != "vocab_size" && key != "max_positions" && m.has(key))
            m.add(key, "not allowed with model.torchscript (give model.config for the model's shape)");
        assign(mc.vocab_size, m.integer("vocab_size", 1));
        assign(mc.max_positions, m.integer("max_positions", defaults::min_sample_length));
        return true;
      }
    }
    if (auto config = readable_file(m, "config")) {
      mc.hf_config = *config;
      for (auto& p : apply_hf_config(*config, m.path("config"), mc)) log_.add(p.path, p.message);
    }
    // Its header (the classifier head, which decides the output) is read by the model's layer
    // (model/weights_check.hpp), called by the runner before anything runs.
    if (auto weights = readable_file(m, "weights"); weights && !scripted) mc.weights = *weights;
    return true;
  }

  // "attention": naive, sdpa, custom (the device's kernel) or a kernel's name (checked by
  // kernels/kernel_check.hpp: that it exists, runs on the device, and is not asked to train).
  void read_attention(const object_reader& obj, attention_kind& kind, std::string& kernel) {
    const auto name = obj.string("attention");
    if (!name) return;
    kernel.clear();
    if (*name == "naive") {
      kind = attention_kind::naive;
    } else if (*name == "sdpa") {
      kind = attention_kind::sdpa;
    } else {
      kind = attention_kind::custom;
      if (*name != "custom") kernel = *name;
    }
  }

  // An explicit sdpa_backend must suit the attention it goes with and the device it runs on.
  void check_backend(const object_reader& obj, attention_kind attention, sdpa_backend backend) {
    if (attention != attention_kind::sdpa && backend != sdpa_backend::auto_select)
      obj.add("sdpa_backend", fmt::format("{} applies only to attention \"sdpa\"; attention "
                                          "here is {}",
                                          quote(to_string(backend)), quote(to_string(attention))));
    else if (on_cpu_.value_or(false) &&
             (backend == sdpa_backend::efficient || backend == sdpa_backend::cudnn))
      obj.add("sdpa_backend", fmt::format("{} needs a CUDA device; device {} runs on the CPU",
                                          quote(to_string(backend)), quote(cfg_.device)));
  }

  void read_workload() {
    object_reader w = root_.object("workload", true);
    if (!w.present()) return;
    w.check_keys(workload_keys);
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
    if (auto f = w.number("duplicate_fraction", 0, false)) {
      if (*f >= 1)
        w.add("duplicate_fraction", fmt::format("must be < 1; got {}", *f));
      else
        wc.duplicate_fraction = *f;
    }
    if (!from_file) w.require("samples");
    assign(wc.samples, w.integer("samples", 1));

    std::optional<int64_t> longest;  // the longest length the lengths block allows
    if (from_file) {
      wc.lengths.kind = length_kind::file;
      if (w.has("lengths")) w.add("lengths", "not allowed with workload.file: lengths come from the file");
      longest = cfg_.model.max_positions;
    } else {
      longest = read_lengths(w.object("lengths", true));
    }

    auto max_length = w.integer("max_length", defaults::min_sample_length);
    wc.max_length = max_length.value_or(longest.value_or(0));
    const int64_t max_positions = cfg_.model.max_positions;
    if (max_length && max_positions > 0 && *max_length > max_positions)
      w.add("max_length",
            fmt::format("must be <= model.max_positions ({}); got {}", max_positions, *max_length));
    if (max_length && longest && *longest > *max_length && !from_file) {
      const char* key = wc.lengths.kind == length_kind::fixed ? "length" : "max";
      w.add(child_path("lengths", key),
            fmt::format("must be <= workload.max_length ({}); got {}", *max_length, *longest));
    }
  }

  // workload.text: one sample per line, through the WordPiece vocabulary workload.vocab (by
  // default the vocab.txt beside model.config).
  void read_text_workload(const object_reader& w, workload_config& wc) {
    if (!w.has("text")) {
      for (const char* key : {"vocab", "lowercase"})
        if (w.has(key)) w.add(key, "only used with workload.text");
      return;
    }
    if (w.has("file")) w.add("text", "not allowed with workload.file: give token ids or text, not both");
    assign(wc.text, readable_file(w, "text"));
    assign(wc.lowercase, w.boolean("lowercase"));
    if (w.has("vocab")) {
      assign(wc.vocab, readable_file(w, "vocab"));
    } else if (!cfg_.model.hf_config.empty()) {
      const fs::path beside = fs::path(cfg_.model.hf_config).parent_path() / "vocab.txt";
      if (auto why = unreadable_reason(beside))
        w.add("vocab", "required: no vocab.txt beside model.config (" + *why + ")");
      else
        wc.vocab = beside.string();
    } else {
      w.require("vocab", "required with workload.text (no model.config to find a vocab.txt beside)");
    }
  }

  // Reads the length distribution; returns the longest length it can draw when that is known.
  std::optional<int64_t> read_lengths(const object_reader& l) {
    if (!l.present()) return std::nullopt;
    length_config& lc = cfg_.workload.lengths;
    names kinds, all_keys{"kind"};
    for (const auto& s : length_shapes) {
      kinds.push_back(s.kind);
      all_keys.insert(all_keys.end(), s.keys.begin(), s.keys.end());
    }
    l.require("kind");
    auto kind = l.choice("kind", kinds);
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

    const int64_t shortest = defaults::min_sample_length;
    if (*kind == "fixed") {
      lc.kind = length_kind::fixed;
      auto length = l.integer("length", shortest);
      assign(lc.length, length);
      return length;
    }
    lc.kind = *kind == "uniform" ? length_kind::uniform : length_kind::lognormal;
    if (lc.kind == length_kind::lognormal) {
      assign(lc.median, l.number("median", 0, true));
      assign(lc.sigma, l.number("sigma", 0, false));
    }
    auto min = l.integer("min", shortest);
    auto max = l.integer("max", shortest);
    assign(lc.min, min);
    assign(lc.max, max);
    if (min && max && *min > *max) l.add("min", fmt::format("must be <= max ({}); got {}", *max, *min));
    return max;
  }

  void read_measure() {
    measure_config& mc = cfg_.measure;
    mc.warmup = defaults::warmup;
    mc.min_repetitions = defaults::min_repetitions;
    mc.target_rel_half_width = defaults::target_rel_half_width;
    mc.max_time_s = defaults::max_time_s;
    mc.min_time_s = defaults::min_time_s;
    object_reader m = root_.object("measure");
    m.check_keys(measure_keys);
    assign(mc.warmup, m.integer("warmup", 0));
    auto repetitions = m.integer("repetitions", 1);
    assign(mc.repetitions, repetitions);
    mc.adaptive = !m.has("repetitions");
    auto min_repetitions = m.integer("min_repetitions", 2);
    assign(mc.min_repetitions, min_repetitions);
    assign(mc.target_rel_half_width, m.number("target_rel_half_width", 0, true));
    assign(mc.max_time_s, m.number("max_time_s", 0, false));
    assign(mc.min_time_s, m.number("min_time_s", 0, false));
    assign(mc.assemble_inputs, m.boolean("assemble_inputs"));
    // max_time_s in fixed mode is only the per-pass limit (TIMEOUT); max_memory_bytes is read
    // from the document by the loop (config/byte_size.hpp).
    if (const ordered_json* cap = m.find("max_memory_bytes"); cap && !parse_byte_size(*cap))
      m.add("max_memory_bytes",
            fmt::format("expected a size in bytes or a string such as \"4GiB\", \"512MiB\"; got {}", cap->dump()));
    if (!mc.adaptive)
      for (const char* key : {"min_repetitions", "target_rel_half_width"})
        if (m.has(key))
          m.add(key,
                "applies to adaptive repetitions only; remove measure.repetitions (fixed mode) to use it");
    auto max_repetitions = m.integer("max_repetitions", 1);
    const int64_t floor = mc.adaptive ? mc.min_repetitions : mc.repetitions;
    mc.max_repetitions = max_repetitions.value_or(std::max(defaults::max_repetitions, floor));
    if (max_repetitions && repetitions && *max_repetitions < *repetitions)
      m.add("max_repetitions",
            fmt::format("must be >= measure.repetitions ({}); got {}", *repetitions, *max_repetitions));
    if (max_repetitions && min_repetitions && mc.adaptive && *max_repetitions < *min_repetitions)
      m.add("max_repetitions", fmt::format("must be >= measure.min_repetitions ({}); got {}",
                                           *min_repetitions, *max_repetitions));
  }

  void read_check() {
    for (auto p : all_precisions) cfg_.check.tolerance[p] = defaults::tolerance(p);
    object_reader c = root_.object("check");
    c.check_keys(check_block_keys);
    object_reader t = c.object("tolerances");
    t.check_keys(tolerance_keys());
    // A config may tighten its class's tolerance, never raise it (common/precision_classes.hpp):
    // a verdict must not depend on a bound chosen after seeing the run.
    const auto within_class = [&](const std::string& key, std::optional<double> tol) -> std::optional<double> {
      const precision_class& pc = precision_class_of(key);
      if (tol && *tol > pc.tolerance) {
        t.add(key, fmt::format("{} raises the {} class's tolerance {} (fixed before any run, "
                               "src/common/precision_classes.hpp); a config may only tighten it",
                               *tol, pc.name, pc.tolerance));
        return std::nullopt;
      }
      return tol;
    };
    for (auto p : all_precisions)
      assign(cfg_.check.tolerance[p], within_class(to_string(p), t.number(to_string(p), 0, true)));
    for (const auto* o : technique_options("precision"))
      if (auto tol = within_class(o->value, t.number(o->value, 0, true))) cfg_.check.technique_tolerance[o->value] = *tol;
    cfg_.check.study = c.choice("study", {"on-change", "always"}).value_or("on-change");
  }

  void read_variants() {
    root_.require("variants");
    const ordered_json* list = root_.find("variants");
    if (!list) return;
    if (!list->is_array()) {
      log_.type_error("variants", "an array", *list);
      return;
    }
    if (list->empty()) root_.add("variants", "must list at least one variant");
    std::map<std::string, std::string> first_path;  // variant name → where it was first defined
    for (size_t i = 0; i < list->size(); ++i) {
      object_reader v(&(*list)[i], fmt::format("variants[{}]", i), log_);
      if (!(*list)[i].is_object()) {
        log_.type_error(v.path(), "an object", (*list)[i]);
        continue;
      }
      variant_config& vc = cfg_.variants.emplace_back(read_variant(v));
      if (vc.name.empty()) continue;
      auto [it, inserted] = first_path.emplace(vc.name, v.path());
      if (!inserted)
        v.add("name", fmt::format("duplicate variant name {} (first at {})", quote(vc.name), it->second));
    }
  }

  variant_config read_variant(const object_reader& v) {
    variant_config vc;
    v.check_keys(variant_keys());
    v.require("name");
    assign(vc.name, v.string("name"));
    if (const ordered_json* d = v.find("description")) {
      if (d->is_string())
        vc.description = d->get<std::string>();  // may be empty: generated
      else
        log_.type_error(v.path("description"), "a string", *d);
    }
    vc.precision = defaults::precision;
    read_precision(v, vc);
    vc.attention = cfg_.model.attention;
    vc.kernel = cfg_.model.kernel;
    read_attention(v, vc.attention, vc.kernel);
    read_technique_keys(v, vc);
    auto backend = v.enumeration("sdpa_backend", all_backends);
    // A naive or custom variant under an sdpa model default has no backend to inherit.
    vc.backend = backend.value_or(vc.attention != attention_kind::sdpa ? sdpa_backend::auto_select
                                                                       : cfg_.model.backend);
    vc.pending = v.string("pending");

    read_batching(v.object("batching"), vc.batching);
    read_checkpointing(v.object("checkpointing"), vc.checkpointing);

    const bool pending = v.has("pending");
    for (const auto& key : technique_keys) {
      const ordered_json* block = v.find(key);
      if (!block) continue;
      if (key == "offload" && !pending) {
        read_offload(v.object("offload"), vc);
        // Offloaded training already recomputes every layer in backward (offload_trainer.hpp):
        // segments of several layers would need them resident together, above the bound.
        if (vc.offload && cfg_.scenario == "train" && vc.checkpointing.policy != checkpoint_policy::none)
          v.add("checkpointing",
                "not supported with offload in the train scenario: offloading already "
                "recomputes every layer in backward (keeping only the layer inputs)");
        continue;
      }
      if (key == "parallel" && !pending) {
        read_parallel(v.object("parallel"), vc);
        continue;
      }
      if (key == "pipeline" && !pending) {
        read_pipeline(v.object("pipeline"), vc);
        continue;
      }
      if (pending)
        vc.techniques[key] = nlohmann::json(*block);
      else
        v.add(key, fmt::format("technique {} is not available in this version (pending)", quote(key)));
    }
    // A pending variant never runs, so what this machine can run does not constrain it.
    if (pending) return vc;
    if (vc.offload && vc.pipeline)
      v.add("pipeline", "not supported together with offload in one variant: a pipeline stage runs its layers "
                        "resident on its device");
    if (vc.parallel && vc.pipeline)
      v.add("pipeline", "not supported together with parallel in one variant: use one or the other");
    if (backend) check_backend(v, vc.attention, *backend);
    check_technique_options(v, vc);
    if (vc.precision == precision_kind::amp_fp16 && cfg_.scenario == "train")
      v.add("precision", fp16_training_refusal());
    else if (vc.precision == precision_kind::amp_fp16 && on_cpu_.value_or(false) && !caps_.cpu_amp_fp16)
      v.add("precision", fmt::format("amp-fp16 on the CPU needs a LibTorch whose CPU autocast "
                                     "supports float16 (this one does not); device {} runs on "
                                     "the CPU",
                                     quote(cfg_.device)));
    return vc;
  }

  // A core precision (autocast), or a value a registered technique adds: the variant then runs
  // without autocast and the technique owns it (vc.techniques["precision"]).
  void read_precision(const object_reader& v, variant_config& vc) {
    const ordered_json* p = v.find("precision");
    if (!p) return;
    if (p->is_string())
      if (const technique_option* o = find_technique_option("precision", p->get<std::string>())) {
        vc.techniques["precision"] = o->value;
        return;
      }
    const auto name = v.choice("precision", precision_values());
    vc.precision_auto = name && *name == amp_auto_precision;
    for (auto k : all_precisions)
      if (name && to_string(k) == *name) vc.precision = k;
  }

  // Keys registered techniques add beside "precision" ("linear": "packed"): one of their values.
  void read_technique_keys(const object_reader& v, variant_config& vc) {
    for (const auto& key : technique_option_keys()) {
      if (key == "precision" || !v.has(key)) continue;
      if (const technique_option* block = chosen_option(key, nlohmann::json::object())) {
        // A block option: an object its technique checks against the run's model.
        const object_reader b = v.object(key);
        if (!b.present()) continue;  // not an object: object() logged it
        bool ok = true;
        for (auto& [sub, message] : block->check_block(*v.find(key), cfg_.model)) {
          log_.add(sub.empty() ? v.path(key) : child_path(v.path(key), sub), std::move(message));
          ok = false;
        }
        if (ok) vc.techniques[key] = nlohmann::json(*v.find(key));
        continue;
      }
      names values;
      for (const auto* o : technique_options(key)) values.push_back(o->value);
      if (auto value = v.choice(key, values)) vc.techniques[key] = *value;
    }
  }

  // What a registered technique's value cannot be combined with, as it declared.
  void check_technique_options(const object_reader& v, const variant_config& vc) {
    std::vector<std::string> chosen;  // "key": "value" of each registered value the variant chose
    std::vector<const technique_option*> options;
    for (const auto& [key, value] : vc.techniques)
      if (const technique_option* o = chosen_option(key, value)) {
        chosen.push_back(value.is_string() ? fmt::format("{}: {}", quote(key), quote(value.get<std::string>()))
                                           : quote(key));
        options.push_back(o);
      }
    if (options.size() > 1 && !owning_option(options)) {
      // What each of them does combine with, so the message says what would work.
      std::vector<std::string> combinable;
      for (const auto* o : options)
        for (const auto& [key, value] : o->combines_with)
          combinable.push_back(fmt::format("{} {} with {} {}", quote(o->key), quote(o->value), quote(key), quote(value)));
      v.add(vc.techniques.rbegin()->first,
            fmt::format("one technique per variant: {} are each run by a technique of their own{}", join(chosen),
                        combinable.empty() ? "" : fmt::format(" (combinable: {})", join(combinable))));
    }
    for (const auto& [key, value] : vc.techniques) {
      const technique_option* o = chosen_option(key, value);
      if (!o) continue;
      const std::string what = o->is_block() ? quote(key) : fmt::format("{} {}", quote(key), quote(o->value));
      if (std::find(o->scenarios.begin(), o->scenarios.end(), cfg_.scenario) == o->scenarios.end())
        v.add(key, fmt::format("{} runs in the {} scenario{} only, not in {}", what, join(o->scenarios),
                               o->scenarios.size() == 1 ? "" : "s", quote(cfg_.scenario)));
      const std::map<std::string, bool> present{{"offload", vc.offload.has_value()},
                                                {"parallel", vc.parallel.has_value()},
                                                {"pipeline", vc.pipeline.has_value()},
                                                {"checkpointing", vc.checkpointing.policy != checkpoint_policy::none}};
      for (const auto& block : o->excludes)
        if (auto it = present.find(block); it != present.end() && it->second)
          v.add(key, fmt::format("{} is not supported together with {} in one variant ({})", what, block, o->summary));
      const auto& allowed = o->precisions;
      const std::string precision = vc.precision_auto ? std::string(amp_auto_precision) : to_string(vc.precision);
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), precision) == allowed.end())
        v.add(key, fmt::format("{} runs under precision {} only; this variant's precision is {} ({})", what,
                               join(allowed), quote(precision), o->summary));
    }
  }

  void read_offload(const object_reader& o, variant_config& vc) {
    if (!o.present()) return;
    o.check_keys(offload_keys);
    if (auto enabled = o.boolean("enabled"); enabled && !*enabled) return;
    offload_config oc;
    oc.prefetch = defaults::offload_prefetch;
    oc.pinned = defaults::offload_pinned;
    if (auto prefetch = o.integer("prefetch", 0)) {
      if (cfg_.model.layers > 0 && *prefetch > cfg_.model.layers)
        o.add("prefetch", fmt::format("must be <= the model's {} layers; got {}", cfg_.model.layers, *prefetch));
      else
        oc.prefetch = *prefetch;
    }
    assign(oc.pinned, o.boolean("pinned"));
    if (auto host = o.choice("host_dtype", offload_host_dtypes)) {
      oc.host_in_compute_dtype = *host == "compute";
      if (oc.host_in_compute_dtype && cfg_.scenario == "train")
        o.add("host_dtype",
              "\"compute\" is for inference: training keeps the fp32 master weights in host memory "
              "and streams those");
    }
    if (auto target = o.string("target")) {
      const auto index = cuda_index(*target);
      if (*target != "cpu" && !index)
        o.add("target", fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*target)));
      else if (index && *index >= caps_.cuda_devices)
        o.add("target", fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*target),
                                    caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
      else if (index && on_cpu_.value_or(false))
        o.add("target", fmt::format("{} is not the run's device ({}): offloading streams weights to the device "
                                    "the model runs on; use \"cpu\" to exercise the mechanism on the CPU",
                                    quote(*target), quote(cfg_.device)));
      else if (*target == "cpu" && on_cpu_ && !*on_cpu_)
        o.add("target", fmt::format("\"cpu\" exercises the mechanism on a CPU run; this run's device is {}: leave "
                                    "target out to offload to it",
                                    quote(cfg_.device)));
      else if (const auto run_index = cuda_index(cfg_.device); index && run_index && *run_index != *index)
        o.add("target", fmt::format("{} is not the run's device ({})", quote(*target), quote(cfg_.device)));
      oc.target = *target;
    }
    vc.offload = oc;
  }

  void read_parallel(const object_reader& o, variant_config& vc) {
    if (!o.present()) return;
    o.check_keys(parallel_keys);
    parallel_config pc;
    if (auto mode = o.choice("mode", parallel_modes)) pc.mode = *mode == "processes" ? parallel_mode::processes
                                                                                      : parallel_mode::threads;
    assign(pc.threads_per_worker, o.integer("threads_per_worker", 1));
    const ordered_json* devices = o.find("devices");
    if (pc.mode == parallel_mode::processes) {
      // A rank is one process on one device: the run's device, or cuda:LOCAL_RANK on a GPU run.
      if (devices) o.add("devices", "not used with \"mode\": \"processes\": each rank runs on the run's device "
                                    "(cuda:LOCAL_RANK on a GPU run); start the ranks with `attnbench launch --nproc N`");
    } else if (!devices) {
      o.require("devices", "required: one worker per entry, e.g. [\"cpu\", \"cpu\"] or \"all\" (every GPU)");
    } else if (devices->is_string() && devices->get<std::string>() == "all") {
      // Without a GPU the variant is SKIPPED ("needs an accelerator"), as offloading is: one config
      // serves every machine.
      pc.all_gpus = true;
      for (int i = 0; i < caps_.cuda_devices; ++i) pc.devices.push_back(fmt::format("cuda:{}", i));
    } else if (!devices->is_array() || devices->empty()) {
      log_.type_error(o.path("devices"), "\"all\" or a non-empty array of devices", *devices);
    } else {
      for (size_t i = 0; i < devices->size(); ++i) {
        const std::string path = fmt::format("{}[{}]", o.path("devices"), i);
        auto d = log_.string((*devices)[i], path);
        if (!d) continue;
        const auto index = cuda_index(*d);
        if (*d != "cpu" && !index)
          log_.add(path, fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*d)));
        else if (index && *index >= caps_.cuda_devices)
          log_.add(path, fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*d),
                                     caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
        else
          pc.devices.push_back(index ? fmt::format("cuda:{}", *index) : "cpu");
      }
    }
    if (vc.offload) log_.add(o.path(), "parallel and offload in one variant are not supported: each worker holds the whole "
                              "model");
    if (cfg_.scenario != "offline")
      log_.add(o.path(), fmt::format("parallel variants run in the offline scenario; this config's scenario is {}",
                            quote(cfg_.scenario)));
    vc.parallel = pc;
  }

  void read_distributed() {
    distributed_config& dc = cfg_.distributed;
    dc.timeout_s = defaults::distributed_timeout_s;
    object_reader d = root_.object("distributed");
    d.check_keys(distributed_keys);
    assign(dc.timeout_s, d.number("timeout_s", 0, true));
    assign(dc.backend, d.choice("backend", distributed_backends));
    if (dc.backend == "nccl" && on_cpu_.value_or(false))
      d.add("backend", fmt::format("NCCL needs CUDA devices; this run's device is {}: use \"gloo\" or \"auto\"",
                                   quote(cfg_.device)));
  }

  // Segments are runs of encoder layers, so "every" must fit the model's layer count.
  void read_checkpointing(const object_reader& c, checkpointing_config& cc) {
    if (!c.present()) return;
    c.check_keys(checkpointing_keys);
    c.require("policy");
    assign(cc.policy, c.enumeration("policy", all_checkpoint_policies));
    if (cc.policy == checkpoint_policy::every)
      c.require("every", "required for policy \"every\"");
    else if (c.has("every"))
      c.add("every", "only used with policy \"every\"");
    auto every = c.integer("every", 1);
    const int64_t layers = cfg_.model.layers;
    if (every && layers > 0 && *every > layers)
      c.add("every", fmt::format("must be <= model.layers ({}); got {}", layers, *every));
    else
      assign(cc.every, every);
  }

  // Stages are devices; each needs at least one encoder layer, and explicit layer counts must
  // cover the model's layers exactly.
  void read_pipeline(const object_reader& p, variant_config& vc) {
    if (!p.present()) return;
    p.check_keys(pipeline_keys);
    pipeline_config pc;
    pc.threads_per_stage = defaults::pipeline_threads_per_stage;
    p.require("stages");
    p.require("micro_batch", "required: the rows per micro-batch");
    const int64_t model_layers = cfg_.model.layers;
    if (const ordered_json* stages = p.find("stages")) {
      if (!stages->is_array() || stages->empty()) {
        log_.type_error(p.path("stages"), "a non-empty array of devices", *stages);
      } else {
        for (size_t i = 0; i < stages->size(); ++i) {
          const std::string path = fmt::format("{}[{}]", p.path("stages"), i);
          auto device = log_.string((*stages)[i], path);
          if (!device) continue;
          const auto index = cuda_index(*device);
          if (*device != "cpu" && !index)
            log_.add(path, fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*device)));
          else if (index && *index >= caps_.cuda_devices)
            log_.add(path, fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*device),
                                       caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
          // Canonical as the parallel block's devices are: "cuda" is "cuda:0", so a stage on
          // "cuda" is the model's own device and shares its weights (core/device.hpp).
          pc.stages.push_back(index ? fmt::format("cuda:{}", *index) : *device);
        }
        const auto n = static_cast<int64_t>(stages->size());
        if (model_layers > 0 && n > model_layers)
          p.add("stages", fmt::format("{} stages for the model's {} encoder layers: every stage needs at least one "
                                      "layer", n, model_layers));
      }
    }
    assign(pc.micro_batch, p.integer("micro_batch", 1));
    assign(pc.threads_per_stage, p.integer("threads_per_stage", 1));
    if (const ordered_json* layers = p.find("layers")) {
      if (!layers->is_array()) {
        log_.type_error(p.path("layers"), "an array of layer counts, one per stage", *layers);
      } else {
        int64_t sum = 0;
        // overflow: the counts' sum is past int64 (tests/fuzz/corpus/config/pipeline-layers-overflow.json).
        bool complete = true, overflow = false;
        for (size_t i = 0; i < layers->size(); ++i) {
          auto k = log_.integer((*layers)[i], fmt::format("{}[{}]", p.path("layers"), i), 1);
          complete = complete && k.has_value();
          if (!k) continue;
          pc.layers.push_back(*k);
          if (sum > std::numeric_limits<int64_t>::max() - *k)
            overflow = true;
          else
            sum += *k;
        }
        if (!pc.stages.empty() && layers->size() != pc.stages.size())
          p.add("layers", fmt::format("must give one layer count per stage ({} stages); got {}", pc.stages.size(),
                                      layers->size()));
        else if (complete && model_layers > 0 && (overflow || sum != model_layers))
          p.add("layers", fmt::format("must add up to the model's {} encoder layers; they add up to {}",
                                      model_layers, overflow ? "more than that" : std::to_string(sum)));
      }
    }
    vc.pipeline = pc;
  }

  void read_batching(const object_reader& b, batching_config& bc) {
    bc.kind = std::string(defaults::batching_kind);
    bc.batch_size = defaults::batch_size;
    bc.padding = defaults::padding;
    bc.max_batch_size = defaults::max_batch_size;
    bc.planner = defaults::planner;
    bc.max_queue_delay_ms = defaults::max_queue_delay_ms;
    assign(bc.kind, b.choice("kind", batching_kinds));
    const bool dynamic = bc.kind == "dynamic";
    names keys = batching_common_keys;
    const names& own = dynamic ? dynamic_batching_keys : static_batching_keys;
    keys.insert(keys.end(), own.begin(), own.end());
    b.check_keys(keys);
    assign(bc.pool, b.boolean("pool"));
    assign(bc.cache, b.boolean("cache"));
    assign(bc.max_queue_delay_ms, b.number("max_queue_delay_ms", 0, false));
    if (!dynamic) {
      assign(bc.batch_size, b.integer("batch_size", 1));
      assign(bc.padding, b.enumeration("padding", all_paddings));
      return;
    }
    b.require("max_tokens", "required for kind \"dynamic\"");
    assign(bc.max_tokens, b.integer("max_tokens", 1));
    assign(bc.max_batch_size, b.integer("max_batch_size", 1));
    assign(bc.planner, b.enumeration("planner", all_planners));
    if (auto g = b.choice("grouping", groupings)) bc.grouping = *g == "bucketed" ? grouping_kind::bucketed : grouping_kind::sorted;
    const ordered_json* bounds = b.find("boundaries");
    if (bc.grouping == grouping_kind::bucketed && !bounds) b.require("boundaries", "required for grouping \"bucketed\"");
    if (!bounds) return;
    if (bc.grouping != grouping_kind::bucketed) b.add("boundaries", "only used with grouping \"bucketed\"");
    if (!bounds->is_array() || bounds->empty()) {
      log_.type_error(b.path("boundaries"), "a non-empty array of lengths", *bounds);
      return;
    }
    for (size_t i = 0; i < bounds->size(); ++i) {
      const std::string path = fmt::format("{}[{}]", b.path("boundaries"), i);
      auto x = log_.integer((*bounds)[i], path, defaults::min_sample_length);
      if (!x) continue;
      if (!bc.boundaries.empty() && *x <= bc.boundaries.back())
        log_.add(path, fmt::format("boundaries must ascend; {} follows {}", *x, bc.boundaries.back()));
      bc.boundaries.push_back(*x);
    }
    if (!bc.boundaries.empty() && cfg_.workload.max_length > 0 && bc.boundaries.back() < cfg_.workload.max_length)
      b.add("boundaries", fmt::format("the last boundary ({}) must be >= workload.max_length ({}) so every "
                                      "sample has a bucket", bc.boundaries.back(), cfg_.workload.max_length));
  }

  void read_scenario() {
    assign(cfg_.scenario, root_.choice("scenario", scenarios));
    // Training builds its own models from the seed, with a classifier head to take a loss from.
    if (cfg_.scenario == "train" && (!cfg_.model.torchscript.empty() || !cfg_.model.weights.empty()))
      root_.add("scenario", fmt::format("\"train\" runs the built-in encoder with seeded weights; model.{} is "
                                        "not supported there",
                                        cfg_.model.torchscript.empty() ? "weights" : "torchscript"));
    read_train();
    object_reader srv = root_.object("server");
    if (cfg_.scenario != "server") {
      if (srv.present()) root_.add("server", "only used with \"scenario\": \"server\"");
      return;
    }
    if (!srv.present()) {
      root_.require("server", "required for \"scenario\": \"server\"");
      return;
    }
    srv.check_keys(server_keys);
    server_config& sc = cfg_.server;
    sc.requests = defaults::server_requests;
    sc.max_time_s = defaults::server_max_time_s;
    sc.seed = defaults::workload_seed;
    assign(sc.requests, srv.integer("requests", 1));
    assign(sc.max_time_s, srv.number("max_time_s", 0, true));
    srv.require("latency_bound_ms");
    assign(sc.latency_bound_ms, srv.number("latency_bound_ms", 0, true));
    assign(sc.seed, srv.unsigned_integer("seed"));
    if (auto trace = srv.string("trace")) {
      fs::path resolved = *trace;
      if (resolved.is_relative()) resolved = fs::path(cfg_.source_path).parent_path() / resolved;
      sc.trace = resolved.string();
      if (auto why = unreadable_reason(resolved)) srv.add("trace", *why);
      if (srv.has("rates")) srv.add("rates", "not allowed with server.trace: the trace sets the arrivals");
      return;
    }
    const ordered_json* rates = srv.find("rates");
    if (!rates) {
      srv.require("rates", "required unless server.trace is given");
      return;
    }
    if (!rates->is_array() || rates->empty()) {
      log_.type_error(srv.path("rates"), "a non-empty array of requests/s", *rates);
      return;
    }
    for (size_t i = 0; i < rates->size(); ++i)
      if (auto r = log_.number((*rates)[i], fmt::format("{}[{}]", srv.path("rates"), i), 0, true)) sc.rates.push_back(*r);
    std::sort(sc.rates.begin(), sc.rates.end());
  }

  void read_train() {
    train_config& tc = cfg_.train;
    tc.learning_rate = defaults::learning_rate;
    tc.weight_decay = defaults::weight_decay;
    tc.dropout = defaults::dropout;
    tc.seed = defaults::train_seed;
    object_reader t = root_.object("train");
    if (t.present() && cfg_.scenario != "train") root_.add("train", "only used with \"scenario\": \"train\"");
    t.check_keys(train_keys);
    assign(tc.learning_rate, t.number("learning_rate", 0, true));
    assign(tc.weight_decay, t.number("weight_decay", 0, false));
    if (auto p = t.number("dropout", 0, false)) {
      if (*p >= 1)
        t.add("dropout", fmt::format("must be < 1; got {}", *p));
      else
        tc.dropout = *p;
    }
    assign(tc.seed, t.unsigned_integer("seed"));
  }

  void read_baseline() {
    root_.require("baseline");
    auto name = root_.string("baseline");
    if (!name) return;
    cfg_.baseline = *name;
    if (const variant_config* v = find_variant(cfg_, *name)) {
      if (v->pending)
        root_.add("baseline", fmt::format("variant {} is pending and cannot be the baseline", quote(*name)));
      return;
    }
    if (cfg_.variants.empty()) return;  // already reported at variants
    names variant_names;
    for (const auto& v : cfg_.variants) variant_names.push_back(v.name);
    auto guess = closest(*name, variant_names);
    root_.add("baseline", fmt::format("no variant named {}; {}", quote(*name),
                                      guess ? fmt::format("did you mean {}?", quote(*guess))
                                            : "variants are: " + join(variant_names)));
  }

  void read_output() {
    output_config& oc = cfg_.output;
    oc.dir = std::string(defaults::output_dir_prefix) + cfg_.name;
    for (auto f : defaults::formats) oc.formats.emplace_back(f);
    object_reader o = root_.object("output");
    o.check_keys(output_keys);
    auto dir = o.string("dir");
    assign(oc.dir, dir);
    if (dir || (!o.has("dir") && !cfg_.name.empty())) {
      if (auto why = unwritable_reason(oc.dir)) o.add("dir", *why);
    }
    const ordered_json* formats = o.find("formats");
    if (!formats) return;
    if (!formats->is_array()) {
      log_.type_error(o.path("formats"), "an array", *formats);
      return;
    }
    if (formats->empty()) o.add("formats", "must list at least one format");
    names allowed;
    for (auto f : defaults::formats) allowed.emplace_back(f);
    allowed.emplace_back("html");  // report.html (report/html_writer.hpp): on request, not by default
    oc.formats.clear();
    for (size_t i = 0; i < formats->size(); ++i) {
      std::string path = fmt::format("{}[{}]", o.path("formats"), i);
      auto f = log_.choice((*formats)[i], path, allowed);
      if (!f) continue;
      if (std::count(oc.formats.begin(), oc.formats.end(), *f))
        log_.add(path, "duplicate format " + quote(*f));
      else
        oc.formats.push_back(*f);
    }
  }

  void read_sweep_block() {
    const ordered_json* block = root_.find("sweep");
    if (!block) return;
    std::vector<problem> problems;
    sweep_config sweep = read_sweep(*block, problems);
    for (size_t i = 0; i < sweep.variants.size(); ++i)
      if (!find_variant(cfg_, sweep.variants[i]))
        problems.push_back({fmt::format("sweep.variants[{}]", i),
                            fmt::format("no variant named {}", quote(sweep.variants[i]))});
    for (auto& p : problems) log_.add(std::move(p.path), std::move(p.message));
    cfg_.sweep = std::move(sweep);
  }

  void read_profile() {
    profile_config unused;  // stored by profile_config_of(); read here so errors come with the rest
    read_profile_block(root_, unused);
  }

  const ordered_json& doc_;
  const device_caps caps_;
  problem_log log_;
  object_reader root_;
  config cfg_;
  std::optional<bool> on_cpu_;  // where the device resolves ("auto" by caps); unset if invalid
};

// Where `text` first nests arrays and objects deeper than `max_depth` (the byte offset of the
// bracket that does), outside strings; nullopt when it never does. A scan of the bytes, before
// any parse: a document nested 100,000 deep crashed `validate` (the stack of whatever recursed
// over it ran out), and a scan bounds every later walk of the document at once.
std::optional<size_t> nested_too_deep(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

config parse_config_text(const std::string& text, const std::string& source_path, const device_caps& caps) {
  if (const auto at = nested_too_deep(text, max_config_depth)) {
    auto [line, column] = line_and_column(text, *at);
    throw input_error("", fmt::format("invalid JSON at line {}, column {}: arrays and objects nested deeper than {} "
                                      "levels (no config needs more than a few)",
                                      line, column, max_config_depth));
  }
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    // nlohmann's byte is the 1-based count of bytes read, the offending one included.
    auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    throw input_error("", fmt::format("invalid JSON at line {}, column {}: {}", line, column,
                                      parse_error_reason(e.what())));
  } catch (const ordered_json::out_of_range& e) {  // a number too large for a double (found by fuzzing)
    throw input_error("", fmt::format("invalid JSON: {}", parse_error_reason(e.what())));
  }
  return config_reader(doc, source_path, caps).read();
}

std::vector<config> sweep_point_configs(const config& base, const std::vector<sweep_point>& points,
                                       const device_caps& caps) {
  std::vector<config> configs;
  std::vector<problem> problems;
  for (const auto& point : points) {
    try {
      const ordered_json doc = apply_sweep_point(base.raw, *base.sweep, point, base.baseline);
      configs.push_back(config_reader(doc, base.source_path, caps).read());
    } catch (const input_error& e) {
      // The same bad value fails many points: say each problem once, with the first point it hit.
      for (const auto& p : e.problems()) {
        problem at{p.path, fmt::format("{} (at sweep point {})", p.message, point.label())};
        const bool repeat = std::any_of(problems.begin(), problems.end(), [&](const problem& q) {
          return q.path == p.path && q.message.rfind(p.message + " (at sweep point", 0) == 0;
        });
        if (!repeat) problems.push_back(std::move(at));
      }
    }
  }
  if (!problems.empty()) throw input_error(std::move(problems));
  return configs;
}

profile_config profile_config_of(const config& cfg) {
  problem_log log;
  const ordered_json& doc = cfg.raw;
  const object_reader root(doc.is_object() ? &doc : nullptr, "", log);
  profile_config pc;
  read_profile_block(root, pc);
  if (!log.empty()) throw input_error(log.take());
  return pc;
}

config load_config(const std::string& path, const device_caps& caps) {
  if (auto why = unreadable_reason(path)) throw input_error("cannot read config file: " + *why);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw input_error("cannot read config file " + quote(path));
  return parse_config_text(text.str(), path, caps);
}

}  // namespace attnbench
