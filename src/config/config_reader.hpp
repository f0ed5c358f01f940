// The config reader, shared by the files that read one schema block each (src/config/*_block.cpp):
// the problem log, the object reader that takes types, ranges and choices from the block's
// declaration (config/config_schema.hpp), and the reader class whose block readers those files
// define. Internal to src/config/: the rest of the project goes through config/config_parser.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "config/config.hpp"
#include "config/config_schema.hpp"
#include "config/profile_config.hpp"

namespace attnbench::config_reading {

using ordered_json = nlohmann::ordered_json;
using names = std::vector<std::string>;

std::string join(const names& items);
std::string quote(const std::string& s);
// A byte size's key (config/byte_size.hpp): its JSON Schema keywords, and the message for a value
// that is not one.
ordered_json byte_size_keywords();
std::string byte_size_problem(const ordered_json& v);
std::string child_path(const std::string& parent, const std::string& key);
// The candidate nearest to `word`, when it is near enough to be a likely typo.
std::optional<std::string> closest(const std::string& word, const names& candidates);
// 0 for "cuda", N for "cuda:N", nullopt for anything else.
std::optional<int> cuda_index(const std::string& device);
// Why `file` cannot be read, or nullopt if it can.
std::optional<std::string> unreadable_reason(const std::filesystem::path& file);
// Why the directory `dir` could not be created or written, or nullopt if it can.
std::optional<std::string> unwritable_reason(const std::string& dir);

template <class E, size_t N>
names names_of(const std::array<E, N>& values) {
  names out;
  for (E v : values) out.push_back(to_string(v));
  return out;
}

inline constexpr std::array all_precisions{precision_kind::fp32, precision_kind::amp_bf16, precision_kind::amp_fp16};
inline constexpr std::array all_backends{sdpa_backend::auto_select, sdpa_backend::flash, sdpa_backend::efficient,
                                         sdpa_backend::math, sdpa_backend::cudnn};

// Collects problems while walking the document, so the user sees all of them at once.
class problem_log {
 public:
  void add(std::string path, std::string message) { problems_.push_back({std::move(path), std::move(message)}); }
  bool empty() const { return problems_.empty(); }
  std::vector<problem> take() { return std::move(problems_); }

  // Typed reads of one value: the value, or nullopt after logging why not.
  std::optional<int64_t> integer(const ordered_json& v, const std::string& path, int64_t min);
  std::optional<uint64_t> unsigned_integer(const ordered_json& v, const std::string& path);
  // A number >= min, or > min when `exclusive`.
  std::optional<double> number(const ordered_json& v, const std::string& path, double min, bool exclusive);
  std::optional<bool> boolean(const ordered_json& v, const std::string& path);
  std::optional<std::string> string(const ordered_json& v, const std::string& path);
  std::optional<std::string> choice(const ordered_json& v, const std::string& path, const names& options);

  template <class E, size_t N>
  std::optional<E> enumeration(const ordered_json& v, const std::string& path, const std::array<E, N>& values) {
    auto name = choice(v, path, names_of(values));
    if (!name) return std::nullopt;
    return *std::find_if(values.begin(), values.end(), [&](E e) { return to_string(e) == *name; });
  }

  std::nullopt_t type_error(const std::string& path, const char* expected, const ordered_json& v);

 private:
  std::vector<problem> problems_;
};

// One JSON object at a known path (or an absent one) and its block's declaration: finds fields and
// reads them typed, each with the minimum and choices declared for it, so every problem names the
// field's full path and no range is written twice.
class object_reader {
 public:
  object_reader(const ordered_json* obj, std::string path, problem_log& log, const block_schema* schema)
      : obj_(obj), path_(std::move(path)), log_(&log), schema_(schema) {}

  bool present() const { return obj_ != nullptr; }
  const std::string& path() const { return path_; }
  std::string path(const std::string& key) const { return child_path(path_, key); }
  const ordered_json* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  void add(const std::string& key, std::string message) const { log_->add(path(key), std::move(message)); }
  bool require(const std::string& key, const std::string& why = "required") const;
  // The declaration of `key` in this block (std::logic_error when it has none).
  const key_schema& spec(const std::string& key) const;

  // Reports keys outside the block's declared keys (or outside `allowed`, a subset that depends on
  // another key), suggesting the nearest allowed one.
  void check_keys() const;
  void check_keys(const names& allowed) const;

  // The sub-object at `key`, with its declared block: absent when missing or not an object (the
  // latter logged).
  object_reader object(const std::string& key, bool required = false) const;

  // The declared minimum applies; the overload with `min` is for a key whose reader lets a value
  // below the declared minimum through so that its message can say why it is wrong.
  std::optional<int64_t> integer(const std::string& key) const;
  std::optional<int64_t> integer(const std::string& key, int64_t min) const;
  std::optional<uint64_t> unsigned_integer(const std::string& key) const;
  std::optional<double> number(const std::string& key) const;
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;
  std::optional<std::string> choice(const std::string& key) const;
  template <class E, size_t N>
  std::optional<E> enumeration(const std::string& key, const std::array<E, N>& values) const {
    spec(key);  // declared, with names_of(values) as its choices
    const ordered_json* v = find(key);
    if (!v) return std::nullopt;
    return log_->enumeration(*v, path(key), values);
  }

 private:
  const ordered_json* obj_;
  std::string path_;
  problem_log* log_;
  const block_schema* schema_;  // null: an object whose keys are not declared (a technique's block)
};

template <class T, class U>
void assign(T& target, const std::optional<U>& value) {
  if (value) target = *value;
}

// The keys of check.tolerances: the core precisions, then those registered techniques add
// (config/technique_catalog.hpp) (check_block.cpp).
names tolerance_keys();

// Keys a variant shares with the model block (model_block.cpp), each with its own help text.
key_schema attention_key(std::string help);
key_schema sdpa_backend_key(std::string help);

// The declared blocks (each beside its reader).
std::shared_ptr<const block_schema> model_schema();
std::shared_ptr<const block_schema> workload_schema();
std::shared_ptr<const block_schema> measure_schema();
std::shared_ptr<const block_schema> check_schema();
std::shared_ptr<const block_schema> variant_schema();
std::shared_ptr<const block_schema> batching_schema();
std::shared_ptr<const block_schema> checkpointing_schema();
std::shared_ptr<const block_schema> offload_schema();
std::shared_ptr<const block_schema> parallel_schema();
std::shared_ptr<const block_schema> pipeline_schema();
std::shared_ptr<const block_schema> server_schema();
std::shared_ptr<const block_schema> train_schema();
std::shared_ptr<const block_schema> generate_schema();
std::shared_ptr<const block_schema> distributed_schema();
std::shared_ptr<const block_schema> output_schema();
std::shared_ptr<const block_schema> profile_schema();
std::shared_ptr<const block_schema> sweep_schema();

// The `profile` block into `pc` (profile_config_of reads it again, alone).
void read_profile_block(const object_reader& root, profile_config& pc);

// Walks one document into a config. Sections are read in dependency order: the device before
// what it constrains, the model before the workload, variants before the baseline. Each read_*
// is defined in the file of its block.
class config_reader {
 public:
  config_reader(const ordered_json& doc, std::string source_path, const device_caps& caps);
  config read();

 private:
  // root keys (config_reader.cpp)
  void read_header();
  void read_memory_limit();
  void read_device();
  void read_baseline();
  void read_sweep_block();
  void read_profile();
  // model_block.cpp
  void read_model();
  void read_family(const object_reader& m, model_config& mc, bool from_preset);
  bool read_real_model(const object_reader& m, model_config& mc);
  void read_attention(const object_reader& obj, attention_kind& kind, std::string& kernel);
  void check_backend(const object_reader& obj, attention_kind attention, sdpa_backend backend);
  std::optional<std::string> readable_file(const object_reader& obj, const std::string& key);
  // workload_block.cpp
  void read_workload();
  void read_text_workload(const object_reader& w, workload_config& wc);
  void read_text_file_beside_model(const object_reader& w, const std::string& key,
                                   const std::string& file_name, std::string& out, const std::string& what);
  std::optional<int64_t> read_lengths(const object_reader& l);
  // measure_block.cpp, check_block.cpp
  void read_measure();
  void read_check();
  // variant_block.cpp
  void read_variants();
  variant_config read_variant(const object_reader& v);
  void read_precision(const object_reader& v, variant_config& vc);
  void read_technique_keys(const object_reader& v, variant_config& vc);
  void check_technique_options(const object_reader& v, const variant_config& vc);
  // batching_block.cpp, checkpointing_block.cpp, offload_block.cpp, parallel_block.cpp, pipeline_block.cpp
  void read_batching(const object_reader& b, batching_config& bc);
  void read_checkpointing(const object_reader& c, checkpointing_config& cc);
  void read_offload(const object_reader& o, variant_config& vc);
  void read_parallel(const object_reader& o, variant_config& vc);
  void read_pipeline(const object_reader& p, variant_config& vc);
  // scenario_blocks.cpp (scenario, server, train), distributed_block.cpp, output_block.cpp
  void read_scenario();
  void read_train();
  void read_generate();
  void read_distributed();
  void read_output();

  const ordered_json& doc_;
  const device_caps caps_;
  std::shared_ptr<const block_schema> schema_;  // the document's, built once per read
  problem_log log_;
  object_reader root_;
  config cfg_;
  std::optional<bool> on_cpu_;  // where the device resolves ("auto" by caps); unset if invalid
};

}  // namespace attnbench::config_reading
