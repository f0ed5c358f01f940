// The reader's machinery (problem log, object reader), the root keys' declaration and readers, and
// the document's schema, assembled from each block's declaration.
#include "config/config_reader.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "config/byte_size.hpp"
#include "config/config_defaults.hpp"
#include "config/sweep.hpp"

namespace attnbench::config_reading {
namespace {

namespace fs = std::filesystem;

// A key or name this close to a known one is taken for a typo of it.
constexpr size_t typo_distance = 2;
constexpr size_t typo_fraction = 3;  // ... or within a third of its length, for long keys
// Long string values are cut in messages so one bad value cannot flood the report.
constexpr size_t shown_chars = 60;

const names device_forms{"auto", "cpu", "cuda", "cuda:N"};
const names scenarios{"offline", "server", "train", "generate"};

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

// How a value is shown in "got ...": strings quoted, containers by kind.
std::string describe(const ordered_json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string text = v.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  if (v.is_string() && text.size() > shown_chars) text = text.substr(0, shown_chars) + "...\"";
  return text;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

}  // namespace

// A byte size (config/byte_size.hpp) as JSON Schema: bytes, or a string with a binary unit.
ordered_json byte_size_keywords() {
  return {{"anyOf",
           ordered_json::array({{{"type", "integer"}, {"minimum", 0}},
                                {{"type", "string"}, {"pattern", "[0-9][GMK]iB$"}}})}};
}

std::string byte_size_problem(const ordered_json& v) {
  return fmt::format("expected a size in bytes or a string such as \"4GiB\", \"512MiB\"; got {}", v.dump());
}

std::string join(const names& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string quote(const std::string& s) { return ordered_json(s).dump(); }

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::optional<std::string> closest(const std::string& word, const names& candidates) {
  std::optional<std::string> best;
  size_t best_distance = std::max(typo_distance, word.size() / typo_fraction) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::optional<int> cuda_index(const std::string& device) {
  if (device == "cuda") return 0;
  const std::string prefix = "cuda:";
  if (device.rfind(prefix, 0) != 0) return std::nullopt;
  std::string digits = device.substr(prefix.size());
  bool numeric = !digits.empty() && digits.size() <= size_t(std::numeric_limits<int>::digits10) &&
                 std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? std::optional<int>(std::stoi(digits)) : std::nullopt;
}

std::optional<std::string> unwritable_reason(const std::string& dir) {
  fs::path existing = dir;
  std::error_code ec;
  while (!fs::exists(existing, ec)) {
    fs::path parent = existing.parent_path();
    existing = (parent.empty() || parent == existing) ? fs::path(".") : parent;
  }
  bool self = existing == fs::path(dir);
  std::string prefix = self ? "" : fmt::format("cannot create {}: ", quote(dir));
  if (!fs::is_directory(existing, ec)) return prefix + fmt::format("{} is not a directory", quote(existing.string()));
  if (::access(existing.c_str(), W_OK) != 0)
    return prefix + fmt::format("{} is not writable", quote(existing.string()));
  return std::nullopt;
}

std::optional<std::string> unreadable_reason(const fs::path& file) {
  std::error_code ec;
  std::string shown = quote(file.string());
  if (!fs::exists(file, ec)) return shown + " does not exist";
  if (!fs::is_regular_file(file, ec)) return shown + " is not a regular file";
  if (::access(file.c_str(), R_OK) != 0) return shown + " is not readable";
  return std::nullopt;
}

// --- problem_log ---------------------------------------------------------------------------------

std::optional<int64_t> problem_log::integer(const ordered_json& v, const std::string& path, int64_t min) {
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

std::optional<uint64_t> problem_log::unsigned_integer(const ordered_json& v, const std::string& path) {
  if (!v.is_number_integer()) return type_error(path, "an integer", v);
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  add(path, fmt::format("must be >= 0; got {}", v.dump()));
  return std::nullopt;
}

std::optional<double> problem_log::number(const ordered_json& v, const std::string& path, double min,
                                          bool exclusive) {
  if (!v.is_number()) return type_error(path, "a number", v);
  auto x = v.get<double>();
  if (exclusive ? x > min : x >= min) return x;
  add(path, fmt::format("must be {} {}; got {}", exclusive ? ">" : ">=", min, v.dump()));
  return std::nullopt;
}

std::optional<bool> problem_log::boolean(const ordered_json& v, const std::string& path) {
  if (!v.is_boolean()) return type_error(path, "a boolean", v);
  return v.get<bool>();
}

std::optional<std::string> problem_log::string(const ordered_json& v, const std::string& path) {
  if (!v.is_string()) return type_error(path, "a string", v);
  auto s = v.get<std::string>();
  if (!s.empty()) return s;
  add(path, "must not be empty");
  return std::nullopt;
}

std::optional<std::string> problem_log::choice(const ordered_json& v, const std::string& path,
                                               const names& options) {
  if (v.is_string() && std::count(options.begin(), options.end(), v.get<std::string>()))
    return v.get<std::string>();
  add(path, fmt::format("expected one of {}; got {}", join(options), describe(v)));
  return std::nullopt;
}

std::nullopt_t problem_log::type_error(const std::string& path, const char* expected, const ordered_json& v) {
  add(path, fmt::format("expected {}; got {}", expected, describe(v)));
  return std::nullopt;
}

// --- object_reader -------------------------------------------------------------------------------

const ordered_json* object_reader::find(const std::string& key) const {
  if (!obj_) return nullptr;
  auto it = obj_->find(key);
  return it == obj_->end() ? nullptr : &*it;
}

bool object_reader::require(const std::string& key, const std::string& why) const {
  if (!present() || has(key)) return true;
  add(key, why);
  return false;
}

const key_schema& object_reader::spec(const std::string& key) const {
  if (!schema_) throw std::logic_error("config block " + path_ + " has no declared schema (reading \"" + key + "\")");
  return schema_->key(key);
}

void object_reader::check_keys() const {
  if (!schema_) throw std::logic_error("config block " + path_ + " has no declared schema");
  check_keys(schema_->key_names());
}

void object_reader::check_keys(const names& allowed) const {
  if (!obj_) return;
  for (const auto& [key, value] : obj_->items()) {
    if (std::count(allowed.begin(), allowed.end(), key)) continue;
    auto guess = closest(key, allowed);
    add(key, guess ? fmt::format("unknown key; did you mean {}?", quote(*guess))
                   : "unknown key; allowed keys: " + join(allowed));
  }
}

object_reader object_reader::object(const std::string& key, bool required) const {
  const block_schema* block = spec(key).block.get();
  const ordered_json* v = find(key);
  if (!v && required) require(key);
  if (v && !v->is_object()) {
    log_->type_error(path(key), "an object", *v);
    v = nullptr;
  }
  return object_reader(v, path(key), *log_, block);
}

std::optional<int64_t> object_reader::integer(const std::string& key) const {
  const key_schema& k = spec(key);
  return integer(key, k.minimum ? static_cast<int64_t>(*k.minimum) : std::numeric_limits<int64_t>::min());
}

std::optional<int64_t> object_reader::integer(const std::string& key, int64_t min) const {
  spec(key);
  const ordered_json* v = find(key);
  return v ? log_->integer(*v, path(key), min) : std::nullopt;
}

std::optional<uint64_t> object_reader::unsigned_integer(const std::string& key) const {
  spec(key);
  const ordered_json* v = find(key);
  return v ? log_->unsigned_integer(*v, path(key)) : std::nullopt;
}

std::optional<double> object_reader::number(const std::string& key) const {
  const key_schema& k = spec(key);
  const ordered_json* v = find(key);
  return v ? log_->number(*v, path(key), k.minimum.value_or(-std::numeric_limits<double>::infinity()),
                          k.exclusive_minimum)
           : std::nullopt;
}

std::optional<bool> object_reader::boolean(const std::string& key) const {
  spec(key);
  const ordered_json* v = find(key);
  return v ? log_->boolean(*v, path(key)) : std::nullopt;
}

std::optional<std::string> object_reader::string(const std::string& key) const {
  spec(key);
  const ordered_json* v = find(key);
  return v ? log_->string(*v, path(key)) : std::nullopt;
}

std::optional<std::string> object_reader::choice(const std::string& key) const {
  const key_schema& k = spec(key);
  const ordered_json* v = find(key);
  return v ? log_->choice(*v, path(key), k.choices) : std::nullopt;
}

}  // namespace attnbench::config_reading

namespace attnbench {
using namespace config_reading;

// --- the document --------------------------------------------------------------------------------

std::shared_ptr<const block_schema> config_reading::sweep_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Parameter sweep: every combination of the axes' values runs the variants (config/sweep.hpp)";
  auto axes = std::make_shared<block_schema>();
  axes->help = "Axis name → values: a list, or a string such as \"128,256\", \"1-64*2\", \"8-32+8\"";
  for (const auto& name : sweep_axis_names())
    axes->keys.push_back(any_key(name, "The values of the " + name + " axis").with(
        {{"anyOf", ordered_json::array({{{"type", "string"}, {"minLength", 1}},
                                        {{"type", "array"}, {"minItems", 1}}})}}));
  b->keys = {
      object_key("axes", axes, "Axis name → values").is_required().with({{"minProperties", 1}}),
      array_key("variants", string_key("", "A variant's name"),
                "Run only these variants (the baseline always runs); default all"),
      string_key("chart", "What sweep.svg plots against the first varying axis (throughput, cosine_mean, "
                          "cosine_min)"),
  };
  return b;
}

std::shared_ptr<const block_schema> config_document_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "An attnbench experiment: a model, a workload and the variants measured against a baseline";
  b->keys = {
      integer_key("schema_version", "The config schema's version").with({{"const", config_schema_version}}),
      string_key("name", "Names the experiment and its default output directory results/<name>")
          .is_required()
          .with({{"pattern", "^[A-Za-z0-9._-]+$"}}),
      object_key("model", model_schema(), "The model: a preset, explicit dimensions or a real model")
          .is_required(),
      object_key("workload", workload_schema(), "The samples: how many, their lengths, or a file of them")
          .is_required(),
      object_key("measure", measure_schema(), "How often each variant is timed"),
      object_key("check", check_schema(), "The output check against the baseline"),
      any_key("device", "Where the model runs: auto (the GPU when there is one), cpu, cuda or cuda:N")
          .by_default(std::string(defaults::device))
          .with({{"type", "string"}, {"anyOf", ordered_json::array({{{"enum", {"auto", "cpu", "cuda"}}},
                                                                     {{"pattern", "^cuda:[0-9]+$"}}})}}),
      integer_key("threads", "Intra-op threads; 0 keeps LibTorch's default").at_least(0).by_default(defaults::threads),
      array_key("variants", object_key("", variant_schema(), "One variant: what differs from the model's defaults"),
                "The variants measured, the baseline among them")
          .is_required()
          .with({{"minItems", 1}}),
      string_key("baseline", "The variant the others are compared against (not a pending one)").is_required(),
      object_key("output", output_schema(), "Where the reports go and in which formats"),
      choice_key("scenario", scenarios,
                 "offline (batches), server (requests at offered rates), train (steps) or generate (a decoder's "
                 "prefill and greedy decoding)")
          .by_default("offline"),
      object_key("generate", generate_schema(), "A decoder's generation; with \"scenario\": \"generate\", or \"server\" with a decoder model"),
      object_key("server", server_schema(), "The server scenario's load; required with \"scenario\": \"server\""),
      object_key("train", train_schema(), "The train scenario's optimiser; only with \"scenario\": \"train\""),
      object_key("sweep", sweep_schema(), "A parameter sweep over the variants"),
      object_key("profile", profile_schema(), "The profiler's schedule, for `attnbench profile` and `run --profile`"),
      object_key("distributed", distributed_schema(), "Multi-process runs (attnbench launch)"),
      any_key("device_memory_limit",
              "Bytes the CUDA caching allocator may hold: bytes, or a string such as \"4GiB\"; no effect on a CPU run")
          .with(byte_size_keywords()),
      string_key("description", "Free text: what the config measures and why"),
  };
  return b;
}

}  // namespace attnbench

namespace attnbench::config_reading {

// --- the reader: root keys -----------------------------------------------------------------------

config_reader::config_reader(const ordered_json& doc, std::string source_path, const device_caps& caps)
    : doc_(doc), caps_(caps), schema_(config_document_schema()), root_(&doc, "", log_, schema_.get()) {
  cfg_.source_path = std::move(source_path);
  cfg_.raw = doc;
}

config config_reader::read() {
  if (!doc_.is_object()) {
    log_.type_error("", "an object", doc_);
    throw input_error(log_.take());
  }
  root_.check_keys();
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

void config_reader::read_header() {
  if (auto v = root_.integer("schema_version"); v && *v != config_schema_version)
    root_.add("schema_version", fmt::format("must be {}; got {}", config_schema_version, *v));
  root_.require("name");
  if (auto name = root_.string("name")) {
    cfg_.name = *name;
    if (!std::all_of(name->begin(), name->end(), is_name_char))
      root_.add("name", "must use only the characters A-Z a-z 0-9 . _ -; got " + quote(*name));
  }
  if (auto d = root_.string("description")) cfg_.description = *d;  // free text: what the config is for
  cfg_.threads = defaults::threads;
  assign(cfg_.threads, root_.integer("threads"));
}

// "device_memory_limit" (config/byte_size.hpp): validated here, read from the document by the runner.
void config_reader::read_memory_limit() {
  const ordered_json* v = root_.find("device_memory_limit");
  if (!v || parse_byte_size(*v)) return;
  log_.add(root_.path("device_memory_limit"), byte_size_problem(*v));
}

void config_reader::read_device() {
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
    root_.add("device", fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*device),
                                    caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
}

void config_reader::read_baseline() {
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

// The block's reader is config/sweep.cpp's (its grid is its own type); the variants it names are
// checked here, against the variants read.
void config_reader::read_sweep_block() {
  const ordered_json* block = root_.find("sweep");
  if (!block) return;
  std::vector<problem> problems;
  sweep_config sweep = read_sweep(*block, problems);
  for (size_t i = 0; i < sweep.variants.size(); ++i)
    if (!find_variant(cfg_, sweep.variants[i]))
      problems.push_back(
          {fmt::format("sweep.variants[{}]", i), fmt::format("no variant named {}", quote(sweep.variants[i]))});
  for (auto& p : problems) log_.add(std::move(p.path), std::move(p.message));
  cfg_.sweep = std::move(sweep);
}

void config_reader::read_profile() {
  profile_config unused;  // stored by profile_config_of(); read here so errors come with the rest
  read_profile_block(root_, unused);
}

}  // namespace attnbench::config_reading
