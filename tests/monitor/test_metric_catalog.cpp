#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "monitor/metric_catalog.hpp"

using namespace attnbench;

namespace {

// The metric names a PromQL expression selects: identifiers outside label matchers {…}, range
// selectors […] and strings, that are not functions (followed by '('), aggregation keywords,
// or the label lists after by/without/on/ignoring/group_left/group_right.
std::vector<std::string> promql_metric_names(const std::string& expr) {
  static const std::set<std::string> keywords{
      "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless",
      "sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group"};
  static const std::set<std::string> label_lists{"by", "without", "on", "ignoring", "group_left", "group_right"};
  std::vector<std::string> names;
  std::size_t i = 0;
  const auto skip_group = [&](char open, char close) {
    int depth = 0;
    for (; i < expr.size(); ++i) {
      if (expr[i] == open) ++depth;
      if (expr[i] == close && --depth == 0) {
        ++i;
        return;
      }
    }
  };
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '{') {
      skip_group('{', '}');
    } else if (c == '[') {
      skip_group('[', ']');
    } else if (c == '"' || c == '\'') {
      for (++i; i < expr.size() && expr[i] != c; ++i)
        if (expr[i] == '\\') ++i;
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '.')) ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      std::size_t end = i;
      while (end < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[end])) || expr[end] == '_' ||
                                   expr[end] == ':'))
        ++end;
      const std::string word = expr.substr(i, end - i);
      i = end;
      std::size_t next = i;
      while (next < expr.size() && expr[next] == ' ') ++next;
      if (label_lists.count(word)) {
        i = next;
        if (i < expr.size() && expr[i] == '(') skip_group('(', ')');
      } else if (!keywords.count(word) && (next >= expr.size() || expr[next] != '(')) {
        names.push_back(word);
      }
    } else {
      ++i;
    }
  }
  return names;
}

// A histogram's _bucket, _sum and _count series belong to its family.
bool is_exported(const std::string& series) {
  for (const metric_spec* m : metric_catalog()) {
    if (series == m->name) return true;
    if (m->type == metric_type::histogram)
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        if (series == std::string(m->name) + suffix) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("PromQL metric names are told from functions, labels and keywords", "[monitor]") {
  CHECK(promql_metric_names(
            "histogram_quantile(0.99, sum by (variant, le) (rate(a_bucket{run=~\"$run\",x=\"y\"}[1m])))") ==
        std::vector<std::string>{"a_bucket"});
  CHECK(promql_metric_names("b{run=~\"$run\"} / c_total == 1 and on (gpu) d") ==
        std::vector<std::string>{"b", "c_total", "d"});
  CHECK(promql_metric_names("e / 1e9") == std::vector<std::string>{"e"});
}

TEST_CASE("the catalog follows Prometheus' naming conventions", "[monitor]") {
  std::set<std::string> seen;
  for (const metric_spec* m : metric_catalog()) {
    const std::string name = m->name;
    INFO(name);
    CHECK(seen.insert(name).second);
    const bool is_total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    CHECK(is_total == (m->type == metric_type::counter));
    CHECK((name.rfind("attnbench_", 0) == 0 || name.rfind("process_", 0) == 0));
    CHECK(name.find("_ms") == std::string::npos);  // base units: seconds
  }
}

TEST_CASE("the Grafana dashboard is dashboard JSON whose every query names an exported metric", "[monitor]") {
  std::ifstream in(std::string(ATTNBENCH_SOURCE_DIR) + "/monitoring/grafana-dashboard.json");
  REQUIRE(in);
  const nlohmann::json dash = nlohmann::json::parse(in);
  CHECK(dash.at("title").is_string());
  CHECK(dash.at("uid").is_string());
  CHECK(dash.at("schemaVersion").is_number_integer());
  const auto& panels = dash.at("panels");
  REQUIRE(panels.is_array());
  REQUIRE(panels.size() >= 8);
  std::set<std::string> used;
  std::set<int> ids;
  for (const auto& p : panels) {
    INFO(p.value("title", "?"));
    CHECK(ids.insert(p.at("id").get<int>()).second);
    CHECK(p.at("type").is_string());
    for (const char* k : {"x", "y", "w", "h"}) CHECK(p.at("gridPos").at(k).is_number_integer());
    CHECK(p.at("datasource").at("type") == "prometheus");
    REQUIRE(!p.at("targets").empty());
    for (const auto& t : p.at("targets")) {
      const std::string expr = t.at("expr").get<std::string>();
      INFO(expr);
      const std::vector<std::string> names = promql_metric_names(expr);
      CHECK(!names.empty());
      for (const auto& n : names) {
        INFO(n);
        CHECK(is_exported(n));
        used.insert(n);
      }
    }
  }
  // The run variable's query too.
  for (const auto& v : dash.at("templating").at("list")) {
    const std::string q = v.at("definition").get<std::string>();
    CHECK(is_exported(q.substr(q.find('(') + 1, q.find(',') - q.find('(') - 1)));
  }
  // The dashboard shows what the issue asks for: throughput, latency, phase, utilisation, memory.
  for (const char* n : {"attnbench_throughput_samples_per_second", "attnbench_batch_latency_seconds_bucket",
                        "attnbench_request_latency_seconds_bucket", "attnbench_phase", "process_cpu_seconds_total",
                        "process_resident_memory_bytes", "attnbench_gpu_utilization_ratio"})
    CHECK(used.count(n) == 1);
}
