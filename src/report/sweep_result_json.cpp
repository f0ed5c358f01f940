#include "report/sweep_result_json.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "report/result_json.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

const ojson& field(const ojson& obj, const std::string& key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key)) throw input_error(path, fmt::format("missing key \"{}\"", key));
  return obj.at(key);
}

std::string text(const ojson& v, const std::string& path) {
  if (!v.is_string()) throw input_error(path, "expected a string; got " + v.dump());
  return v.get<std::string>();
}

const ojson& array(const ojson& v, const std::string& path) {
  if (!v.is_array()) throw input_error(path, "expected an array");
  return v;
}

}  // namespace

bool is_sweep_json(const ojson& j) {
  // Compared as JSON: a "kind" that is not a string is no sweep's, and no type_error.
  if (!j.is_object()) return false;
  const auto kind = j.find("kind");
  return kind != j.end() && *kind == "sweep";
}

ojson sweep_result_to_json(const sweep_result& sweep) {
  ojson axes = ojson::array();
  for (const auto& a : sweep.axes)
    axes.push_back({{"name", a.name}, {"values", a.values}, {"numeric", a.numeric}});
  ojson points = ojson::array();
  for (const auto& p : sweep.points) {
    ojson params = ojson::object();
    for (const auto& [name, value] : p.params) params[name] = value;
    points.push_back({{"label", p.label()}, {"params", params}, {"result", run_result_to_json(p.result)}});
  }
  return {{"schema_version", sweep.schema_version},
          {"kind", "sweep"},
          {"name", sweep.name},
          {"complete", sweep.complete},
          {"incomplete_reason", sweep.incomplete_reason},
          {"points_planned", sweep.points_planned},
          {"axes", axes},
          {"chart", sweep.chart},
          {"points", points}};
}

sweep_result sweep_result_from_json(const ojson& j) {
  sweep_result s;
  const ojson& version = field(j, "schema_version", "");
  if (!version.is_number_integer() || version.get<int64_t>() < oldest_results_schema_version ||
      version.get<int64_t>() > results_schema_version)
    throw input_error("schema_version",
                      fmt::format("results schema version {} is not supported (expected {} to {})",
                                  version.dump(), oldest_results_schema_version, results_schema_version));
  s.name = text(field(j, "name", ""), "name");
  if (j.contains("complete")) {  // absent in files written before interruption was reported
    const ojson& c = j.at("complete");
    if (!c.is_boolean()) throw input_error("complete", "expected true or false");
    s.complete = c.get<bool>();
    s.incomplete_reason = text(field(j, "incomplete_reason", ""), "incomplete_reason");
    const ojson& planned = field(j, "points_planned", "");
    if (!planned.is_number_integer() || planned.get<int64_t>() < 0)
      throw input_error("points_planned", "expected a non-negative integer");
    s.points_planned = planned.get<int64_t>();
  }
  if (const auto chart = j.find("chart"); chart != j.end())  // absent before charts could plot the check
    s.chart = text(*chart, "chart");
  const ojson& axes = array(field(j, "axes", ""), "axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string path = fmt::format("axes[{}]", i);
    sweep_axis_result a;
    a.name = text(field(axes[i], "name", path), path + ".name");
    const ojson& values = array(field(axes[i], "values", path), path + ".values");
    for (size_t k = 0; k < values.size(); ++k)
      a.values.push_back(text(values[k], fmt::format("{}.values[{}]", path, k)));
    if (const auto numeric = axes[i].find("numeric"); numeric != axes[i].end()) {
      if (!numeric->is_boolean()) throw input_error(path + ".numeric", "expected true or false");
      a.numeric = numeric->get<bool>();
    }
    s.axes.push_back(std::move(a));
  }
  const ojson& points = array(field(j, "points", ""), "points");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string path = fmt::format("points[{}]", i);
    sweep_point_result p;
    const ojson& params = field(points[i], "params", path);
    if (!params.is_object()) throw input_error(path + ".params", "expected an object");
    for (const auto& [name, value] : params.items())
      p.params.emplace_back(name, text(value, path + ".params." + name));
    try {
      p.result = run_result_from_json(field(points[i], "result", path));
    } catch (const input_error& e) {
      std::vector<problem> problems;
      for (const auto& q : e.problems())
        problems.push_back({path + ".result" + (q.path.empty() ? "" : "." + q.path), q.message});
      throw input_error(std::move(problems));
    }
    s.points.push_back(std::move(p));
  }
  return s;
}

}  // namespace attnbench
