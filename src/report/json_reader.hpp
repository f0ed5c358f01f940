// Reading the JSON files attnbench wrote (results.json, a sweep's, resume.json) back, with errors
// that name the file and the field: a file read whole and parsed, and a reader of one JSON object
// that names the full path of any field that is missing or mistyped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "stats/summary_types.hpp"

namespace attnbench {

// The file parsed as JSON. Throws input_error(path, …) when it cannot be read ("cannot read: …",
// a directory included) or is not JSON ("invalid JSON: " with nlohmann's line and column, a number
// past a double's range too).
nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

// One JSON object at `path` (e.g. "variants[2]"); every error is input_error(<path>.<key>, …).
class json_reader {
 public:
  using ojson = nlohmann::ordered_json;

  json_reader(const ojson& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw input_error(display_path(), "expected an object");
  }

  const ojson& at(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw input_error(path_of(key), "missing field");
    return *it;
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  json_reader object(const std::string& key) const { return {at(key), path_of(key)}; }
  const ojson& array(const std::string& key) const {
    const ojson& v = at(key);
    if (!v.is_array()) throw input_error(path_of(key), "expected an array");
    return v;
  }
  double number(const std::string& key) const { return as_number(at(key), path_of(key)); }
  // Fields added after a file's first version: absent in older files, read as `fallback`.
  double optional_number(const std::string& key, double fallback = not_a_number) const {
    return has(key) ? number(key) : fallback;
  }
  int64_t integer(const std::string& key) const {
    const ojson& v = at(key);
    if (!v.is_number_integer()) throw input_error(path_of(key), "expected an integer");
    return v.get<int64_t>();
  }
  std::string string(const std::string& key) const {
    const ojson& v = at(key);
    if (!v.is_string()) throw input_error(path_of(key), "expected a string");
    return v.get<std::string>();
  }
  bool boolean(const std::string& key) const {
    const ojson& v = at(key);
    if (!v.is_boolean()) throw input_error(path_of(key), "expected true or false");
    return v.get<bool>();
  }

  // A number, or null read as NaN (how NaN and ±Inf are written).
  static double as_number(const ojson& v, const std::string& path) {
    if (v.is_null()) return not_a_number;
    if (!v.is_number()) throw input_error(path, "expected a number or null");
    return v.get<double>();
  }
  std::string path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  std::string display_path() const { return path_.empty() ? "(top level)" : path_; }

 private:
  const ojson& j_;
  std::string path_;
};

}  // namespace attnbench
