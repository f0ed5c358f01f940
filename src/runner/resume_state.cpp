#include "runner/resume_state.hpp"

#include <cmath>
#include <system_error>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "report/json_reader.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

// A count or a time: a reader's integer or number, and never negative (nor NaN: null reads as NaN).
int64_t count_at(const json_reader& r, const std::string& key) {
  const int64_t v = r.integer(key);
  if (v < 0) throw input_error(r.path_of(key), "expected an integer >= 0");
  return v;
}

double seconds_in(const json_reader::ojson& v, const std::string& path) {
  const double s = json_reader::as_number(v, path);
  if (!std::isfinite(s) || s < 0) throw input_error(path, "expected a number >= 0");
  return s;
}

std::vector<double> times_at(const json_reader& r, const std::string& key) {
  const ojson& a = r.array(key);
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(seconds_in(a[i], fmt::format("{}[{}]", r.path_of(key), i)));
  return out;
}

resume_file resume_fields(const ojson& j) {
  const json_reader top(j, "");
  resume_file r;
  const ojson& version = top.at("attnbench_resume");
  if (!version.is_number_integer() || version.get<int64_t>() != resume_format_version)
    throw input_error("attnbench_resume", fmt::format("version {} is not this attnbench's ({})", version.dump(),
                                                      resume_format_version));
  r.kind = top.string("kind");
  if (r.kind != "run" && r.kind != "sweep")
    throw input_error("kind", "expected \"run\" or \"sweep\"; got \"" + r.kind + "\"");
  r.config_hash = top.string("config_hash");
  r.cpu_id = top.string("cpu_id");
  r.point = count_at(top, "point");
  r.has_state = top.boolean("has_state");
  if (!r.has_state) return r;
  const json_reader state = top.object("state");
  r.state.rounds = count_at(state, "rounds");
  r.state.timed_s = seconds_in(state.at("timed_s"), state.path_of("timed_s"));
  const ojson& vs = state.array("variants");
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const json_reader v(vs[i], fmt::format("state.variants[{}]", i));
    variant_rounds out;
    out.name = v.string("name");
    out.left_by_error = v.boolean("left_by_error");
    out.pass_s = times_at(v, "pass_s");
    out.unit_ms = times_at(v, "unit_ms");
    // A variant still in the run took part in every complete round; one that left may have fewer.
    if (!out.left_by_error && !out.pass_s.empty() && static_cast<int64_t>(out.pass_s.size()) != r.state.rounds)
      throw input_error(v.path_of("pass_s"),
                        fmt::format("{} passes for {} complete rounds", out.pass_s.size(), r.state.rounds));
    if (r.state.find(out.name)) throw input_error(v.path_of("name"), "\"" + out.name + "\" appears twice");
    r.state.variants.push_back(std::move(out));
  }
  return r;
}

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
  try {
    return resume_fields(j);
  } catch (const input_error& e) {  // every error names the option and the file, then the field
    throw input_error("--resume", fmt::format("{}: {}", file, e.problems().front().to_string()));
  }
}

resume_file read_resume_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw input_error("--resume", fmt::format("{}: not found: only an interrupted run leaves one (a finished run "
                                              "has nothing to resume)",
                                              path.string()));
  try {
    return resume_from_json(read_json_file(path), path.string());
  } catch (const input_error& e) {
    if (e.problems().front().path == "--resume") throw;
    throw input_error("--resume", e.problems().front().to_string());  // unreadable, or not JSON
  }
}

}  // namespace attnbench
