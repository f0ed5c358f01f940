#include "runner/resume_state.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/hash.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

// Reads the fields of one resume.json, naming the file and the field in every error.
class reader {
 public:
  explicit reader(std::string file) : file_(std::move(file)) {}

  const ojson& field(const ojson& j, const std::string& key, const std::string& path) const {
    if (!j.is_object()) bad(path, "expected an object");
    const auto it = j.find(key);
    if (it == j.end()) bad(join(path, key), "missing field");
    return *it;
  }
  std::string text(const ojson& j, const std::string& key, const std::string& path) const {
    const ojson& v = field(j, key, path);
    if (!v.is_string()) bad(join(path, key), "expected a string");
    return v.get<std::string>();
  }
  int64_t count(const ojson& j, const std::string& key, const std::string& path) const {
    const ojson& v = field(j, key, path);
    if (!v.is_number_integer() || v.get<int64_t>() < 0) bad(join(path, key), "expected an integer >= 0");
    return v.get<int64_t>();
  }
  bool flag(const ojson& j, const std::string& key, const std::string& path) const {
    const ojson& v = field(j, key, path);
    if (!v.is_boolean()) bad(join(path, key), "expected true or false");
    return v.get<bool>();
  }
  double seconds(const ojson& j, const std::string& key, const std::string& path) const {
    const ojson& v = field(j, key, path);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      bad(join(path, key), "expected a number >= 0");
    return v.get<double>();
  }
  std::vector<double> times(const ojson& j, const std::string& key, const std::string& path) const {
    const ojson& v = field(j, key, path);
    if (!v.is_array()) bad(join(path, key), "expected an array of numbers");
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number() || !std::isfinite(v[i].get<double>()) || v[i].get<double>() < 0)
        bad(fmt::format("{}[{}]", join(path, key), i), "expected a number >= 0");
      out.push_back(v[i].get<double>());
    }
    return out;
  }
  [[noreturn]] void bad(const std::string& path, const std::string& message) const {
    throw input_error("--resume", fmt::format("{}: {}: {}", file_, path.empty() ? "(top level)" : path, message));
  }

 private:
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  std::string file_;
};

}  // namespace

const variant_rounds* rounds_state::find(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::string config_hash_of(const nlohmann::ordered_json& raw_config) {
  fnv1a64 h;
  h.update(nlohmann::json(raw_config).dump());  // nlohmann::json sorts keys: key order does not change the hash
  return "fnv1a64:" + h.hex();
}

nlohmann::ordered_json resume_to_json(const resume_file& r) {
  ojson variants = ojson::array();
  for (const auto& v : r.state.variants)
    variants.push_back({{"name", v.name},
                        {"left_by_error", v.left_by_error},
                        {"pass_s", v.pass_s},
                        {"unit_ms", v.unit_ms}});
  ojson j = {{"attnbench_resume", resume_format_version},
             {"kind", r.kind},
             {"config_hash", r.config_hash},
             {"cpu_id", r.cpu_id},
             {"point", r.point},
             {"has_state", r.has_state}};
  if (r.has_state) j["state"] = {{"rounds", r.state.rounds}, {"timed_s", r.state.timed_s}, {"variants", variants}};
  return j;
}

resume_file resume_from_json(const nlohmann::ordered_json& j, const std::string& file) {
  const reader rd(file);
  resume_file r;
  const ojson& version = rd.field(j, "attnbench_resume", "");
  if (!version.is_number_integer() || version.get<int64_t>() != resume_format_version)
    rd.bad("attnbench_resume", fmt::format("version {} is not this attnbench's ({})", version.dump(),
                                           resume_format_version));
  r.kind = rd.text(j, "kind", "");
  if (r.kind != "run" && r.kind != "sweep") rd.bad("kind", "expected \"run\" or \"sweep\"; got \"" + r.kind + "\"");
  r.config_hash = rd.text(j, "config_hash", "");
  r.cpu_id = rd.text(j, "cpu_id", "");
  r.point = rd.count(j, "point", "");
  r.has_state = rd.flag(j, "has_state", "");
  if (!r.has_state) return r;
  const ojson& s = rd.field(j, "state", "");
  r.state.rounds = rd.count(s, "rounds", "state");
  r.state.timed_s = rd.seconds(s, "timed_s", "state");
  const ojson& vs = rd.field(s, "variants", "state");
  if (!vs.is_array()) rd.bad("state.variants", "expected an array");
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const std::string at = fmt::format("state.variants[{}]", i);
    variant_rounds v;
    v.name = rd.text(vs[i], "name", at);
    v.left_by_error = rd.flag(vs[i], "left_by_error", at);
    v.pass_s = rd.times(vs[i], "pass_s", at);
    v.unit_ms = rd.times(vs[i], "unit_ms", at);
    // A variant still in the run took part in every complete round; one that left may have fewer.
    if (!v.left_by_error && !v.pass_s.empty() && static_cast<int64_t>(v.pass_s.size()) != r.state.rounds)
      rd.bad(at + ".pass_s", fmt::format("{} passes for {} complete rounds", v.pass_s.size(), r.state.rounds));
    if (r.state.find(v.name)) rd.bad(at + ".name", "\"" + v.name + "\" appears twice");
    r.state.variants.push_back(std::move(v));
  }
  return r;
}

resume_file read_resume_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw input_error("--resume", fmt::format("{}: not found: only an interrupted run leaves one (a finished run "
                                              "has nothing to resume)",
                                              path.string()));
  std::stringstream text;
  text << in.rdbuf();
  ojson j;
  try {
    j = ojson::parse(text.str());
  } catch (const std::exception& e) {
    throw input_error("--resume", fmt::format("{}: invalid JSON: {}", path.string(), e.what()));
  }
  return resume_from_json(j, path.string());
}

}  // namespace attnbench
