#include "config/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_defaults.hpp"

namespace attnbench {
namespace {

using ordered_json = nlohmann::ordered_json;

// A sweep is a cartesian product: a typo such as "1-100000" must not become a week of runs.
constexpr size_t max_values_per_axis = 1000;
constexpr size_t max_points = 10000;

const std::vector<std::string> numeric_axes{"batch_size", "max_tokens", "max_length", "length",
                                            "samples",    "threads",    "heads",      "prune_heads"};
const std::vector<std::string> all_axes{"batch_size", "max_tokens", "max_length", "length",  "samples",    "preset",
                                        "attention",  "precision",  "threads",    "heads",   "prune_heads",
                                        "test"};
// Slowest-varying first: rebuilding the model costs most, re-measuring the matmul ceiling next.
const std::vector<std::string> setup_axes{"preset", "heads", "threads"};
// What a sweep's chart (sweep.svg) may plot against its first varying axis: throughput, or the
// output check's per-sample cosine to the baseline (report/sweep_writers.hpp).
const std::vector<std::string> chart_values{"throughput", "cosine_mean", "cosine_min"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

std::optional<int64_t> to_int(const std::string& s) {
  int64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || p != end || s.empty()) return std::nullopt;
  return v;
}

// Bytes that are not UTF-8 are shown as U+FFFD: a message must not throw (found by fuzzing:
// tests/fuzz/corpus/sweep_range/not-utf8).
std::string quote(const std::string& s) {
  return ordered_json(s).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string value_text(const ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// One piece of a range list: "N", "A-B", "A-B+S" or "A-B*M".
void expand_piece(const std::string& piece, const std::string& path, std::vector<int64_t>& out) {
  const auto bad = [&](const std::string& why) {
    throw input_error(path,
                      fmt::format("{} in {}; ranges look like \"128,256,512\", \"1-64*2\" or \"8-32+8\"", why,
                                  quote(piece)));
  };
  if (piece.empty()) bad("an empty item");
  const auto dash = piece.find('-', 1);  // a leading '-' is a sign, caught below as < 1
  if (dash == std::string::npos) {
    auto v = to_int(piece);
    if (!v) bad("not an integer");
    if (*v < 1) bad("values must be >= 1");
    out.push_back(*v);
    return;
  }
  const std::string first_text = trim(piece.substr(0, dash));
  std::string rest = trim(piece.substr(dash + 1));
  char op = '+';
  int64_t step = 1;
  if (const auto at = rest.find_first_of("*+"); at != std::string::npos) {
    op = rest[at];
    auto s = to_int(trim(rest.substr(at + 1)));
    if (!s) bad("the step is not an integer");
    step = *s;
    rest = trim(rest.substr(0, at));
  }
  auto first = to_int(first_text);
  auto last = to_int(rest);
  if (!first || !last) bad("a range's ends must be integers");
  if (*first < 1) bad("values must be >= 1");
  if (*last < *first) bad("a range must ascend");
  if (op == '*' && step < 2) bad("a '*' step must be >= 2");
  if (op == '+' && step < 1) bad("a '+' step must be >= 1");
  size_t count = 0;
  constexpr int64_t top = std::numeric_limits<int64_t>::max();
  for (int64_t v = *first; v <= *last; v = op == '*' ? v * step : v + step) {
    if (++count > max_values_per_axis) bad(fmt::format("more than {} values", max_values_per_axis));
    out.push_back(v);
    if (op == '*' ? v > top / step : v > top - step) break;  // the next value would overflow int64
  }
}

ordered_json& object_at(ordered_json& parent, const std::string& key) {
  if (!parent.contains(key) || !parent[key].is_object()) parent[key] = ordered_json::object();
  return parent[key];
}

void apply_param(ordered_json& doc, const std::string& axis, const ordered_json& value) {
  const std::string path = "sweep.axes." + axis;
  auto& variants = doc["variants"];
  auto& workload = object_at(doc, "workload");
  const bool from_file = workload.contains("file");
  if (axis == "threads") {
    doc["threads"] = value;
  } else if (axis == "preset") {
    object_at(doc, "model")["preset"] = value;
  } else if (axis == "samples") {
    if (from_file) throw input_error(path, "cannot sweep samples of a workload.file workload");
    workload["samples"] = value;
  } else if (axis == "max_length") {
    workload["max_length"] = value;
    // A distribution drawing up to 512 still fits max_length 128 once clipped there: clip it.
    if (workload.contains("lengths") && workload["lengths"].is_object()) {
      auto& lengths = workload["lengths"];
      if (lengths.contains("max") && lengths["max"].is_number_integer() &&
          lengths["max"].get<int64_t>() > value.get<int64_t>())
        lengths["max"] = value;
    }
  } else if (axis == "length") {
    if (from_file) throw input_error(path, "cannot sweep the lengths of a workload.file workload");
    auto& lengths = object_at(workload, "lengths");
    const std::string kind = lengths.value("kind", "");
    if (kind == "fixed")
      lengths["length"] = value;
    else if (kind == "lognormal")
      lengths["median"] = value;
    else
      throw input_error(path, fmt::format("needs workload.lengths of kind \"fixed\" (sweeps the length) or "
                                          "\"lognormal\" (sweeps the median); this workload's is {}",
                                          quote(kind)));
  } else if (axis == "batch_size" || axis == "max_tokens") {
    bool used = false;
    for (auto& v : variants) {
      if (!v.is_object()) continue;
      auto& batching = object_at(v, "batching");
      const bool dynamic = batching.value("kind", "static") == "dynamic";
      if (axis == "batch_size") {
        batching[dynamic ? "max_batch_size" : "batch_size"] = value;
        used = true;
      } else if (dynamic) {
        batching["max_tokens"] = value;
        used = true;
      }
    }
    if (!used) throw input_error(path, "no variant uses dynamic batching, so max_tokens changes nothing");
  } else if (axis == "heads") {
    // At the model's hidden size: head_dim = hidden / heads (the parser checks that it divides).
    auto& model = object_at(doc, "model");
    if (model.contains("config") || model.contains("torchscript"))
      throw input_error(path, "cannot change the heads of a real model (model.config, model.torchscript): its "
                              "weights fix them");
    model["heads"] = value;
  } else if (axis == "prune_heads") {
    bool used = false;
    for (auto& v : variants)
      if (v.is_object() && v.contains("pruning") && v["pruning"].is_object()) {
        v["pruning"]["heads"] = value;
        used = true;
      }
    if (!used) throw input_error(path, "no variant has a \"pruning\" block whose heads it could set");
  } else if (axis == "test") {
    // Values were checked by read_sweep; a point built by hand is checked again here.
    const auto test = value.is_string() ? parse_generate_test(value.get<std::string>()) : std::nullopt;
    if (!test) throw input_error(path, "expected a llama-bench test such as \"pp512\" or \"tg128\"; got " + value.dump());
    if (doc.value("scenario", "") != "generate")
      throw input_error(path, "needs \"scenario\": \"generate\" (a test is a prompt length and a number of "
                              "tokens to generate)");
    if (from_file) throw input_error(path, "cannot set the prompt length of a workload.file workload");
    const int64_t prompt = test->prefill ? test->tokens : defaults::min_sample_length;
    workload["lengths"] = ordered_json{{"kind", "fixed"}, {"length", prompt}};
    workload["max_length"] = prompt;
    object_at(doc, "generate")["max_new_tokens"] = test->prefill ? 1 : test->tokens + 1;
  } else if (axis == "attention" || axis == "precision") {
    for (auto& v : variants) {
      if (!v.is_object()) continue;
      v[axis] = value;
      if (axis == "attention" && value == "naive") v.erase("sdpa_backend");
    }
  }
}

}  // namespace

std::string sweep_point::label() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : params) parts.push_back(name + "=" + value_text(value));
  return fmt::format("{}", fmt::join(parts, " "));
}

const std::vector<std::string>& sweep_axis_names() { return all_axes; }

std::string generate_test::name() const { return fmt::format("{}{}", prefill ? "pp" : "tg", tokens); }

std::optional<generate_test> parse_generate_test(const std::string& text) {
  if (text.size() < 3 || (text.compare(0, 2, "pp") != 0 && text.compare(0, 2, "tg") != 0)) return std::nullopt;
  const std::string digits = text.substr(2);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  const auto n = to_int(digits);
  if (!n) return std::nullopt;
  generate_test t{text[0] == 'p', *n};
  if (t.tokens < (t.prefill ? defaults::min_sample_length : 1)) return std::nullopt;
  return t;
}

bool is_numeric_axis(const std::string& name) {
  return std::count(numeric_axes.begin(), numeric_axes.end(), name) > 0;
}

std::vector<int64_t> parse_int_range(const std::string& text, const std::string& path) {
  std::vector<int64_t> values;
  for (const auto& piece : split(text, ',')) expand_piece(piece, path, values);
  std::set<int64_t> seen;
  for (auto v : values)
    if (!seen.insert(v).second)
      throw input_error(path, fmt::format("value {} appears twice in {}", v, quote(text)));
  if (values.size() > max_values_per_axis)
    throw input_error(path, fmt::format("more than {} values in {}", max_values_per_axis, quote(text)));
  return values;
}

sweep_config read_sweep(const ordered_json& block, std::vector<problem>& problems) {
  sweep_config sweep;
  const auto add = [&](std::string path, std::string message) {
    problems.push_back({std::move(path), std::move(message)});
  };
  if (!block.is_object()) {
    add("sweep", "expected an object with \"axes\" (and optionally \"variants\")");
    return sweep;
  }
  for (const auto& [key, value] : block.items())
    if (key != "axes" && key != "variants" && key != "chart")
      add("sweep." + key, "unknown key; allowed keys: axes, variants, chart");
  // Read by the sweep's writers from the document (sweep_chart_of); checked here with the rest.
  if (const auto chart = block.find("chart"); chart != block.end())
    if (!chart->is_string() || !std::count(chart_values.begin(), chart_values.end(), chart->get<std::string>()))
      add("sweep.chart", fmt::format("expected one of {}; got {}", fmt::join(chart_values, ", "), chart->dump()));
  const auto axes = block.find("axes");
  if (axes == block.end()) {
    add("sweep.axes", "required: an object of axis name → values");
  } else if (!axes->is_object() || axes->empty()) {
    add("sweep.axes", "expected a non-empty object of axis name → values, e.g. {\"batch_size\": \"1-64*2\"}");
  } else {
    size_t points = 1;
    for (const auto& [name, spec] : axes->items()) {
      const std::string path = "sweep.axes." + name;
      if (!std::count(all_axes.begin(), all_axes.end(), name)) {
        add(path, fmt::format("unknown axis; axes are {}", fmt::join(all_axes, ", ")));
        continue;
      }
      sweep_axis axis{name, {}};
      const bool numeric = is_numeric_axis(name);
      try {
        if (spec.is_string()) {
          if (numeric) {
            for (auto v : parse_int_range(spec.get<std::string>(), path)) axis.values.emplace_back(v);
          } else {
            for (const auto& s : split(spec.get<std::string>(), ',')) {
              if (s.empty()) throw input_error(path, "an empty item in " + quote(spec.get<std::string>()));
              axis.values.emplace_back(s);
            }
          }
        } else if (spec.is_array() && !spec.empty()) {
          for (size_t i = 0; i < spec.size(); ++i) {
            const auto& v = spec[i];
            const std::string item = fmt::format("{}[{}]", path, i);
            if (numeric && !(v.is_number_integer() && v.get<int64_t>() >= 1))
              throw input_error(item, "expected an integer >= 1; got " + v.dump());
            if (!numeric && !(v.is_string() && !v.get<std::string>().empty()))
              throw input_error(item, "expected a non-empty string; got " + v.dump());
            axis.values.push_back(v);
          }
        } else {
          throw input_error(
              path, numeric ? "expected a non-empty array of integers or a range string such as \"1-64*2\""
                            : "expected a non-empty array of strings or a comma list such as \"naive,sdpa\"");
        }
        if (name == "test")
          for (size_t i = 0; i < axis.values.size(); ++i)
            if (!parse_generate_test(axis.values[i].get<std::string>()))
              throw input_error(spec.is_array() ? fmt::format("{}[{}]", path, i) : path,
                                fmt::format("expected llama-bench tests such as \"pp512\" (prefill a 512-token "
                                            "prompt) or \"tg128\" (decode 128 tokens); got {}",
                                            axis.values[i].dump()));
        for (size_t i = 0; i < axis.values.size(); ++i)
          for (size_t j = 0; j < i; ++j)
            if (axis.values[i] == axis.values[j])
              throw input_error(path, fmt::format("value {} appears twice", axis.values[i].dump()));
      } catch (const input_error& e) {
        problems.insert(problems.end(), e.problems().begin(), e.problems().end());
        continue;
      }
      points *= axis.values.size();
      if (points > max_points) {
        add("sweep.axes", fmt::format("more than {} points in the grid; sweep fewer values", max_points));
        return sweep;
      }
      sweep.axes.push_back(std::move(axis));
    }
  }
  const auto has_axis = [&](const char* n) {
    return std::any_of(sweep.axes.begin(), sweep.axes.end(), [&](const sweep_axis& a) { return a.name == n; });
  };
  if (has_axis("test"))
    for (const char* n : {"length", "max_length"})
      if (has_axis(n))
        add(std::string("sweep.axes.") + n, "the test axis sets the prompt length: sweep one or the other");
  if (const auto variants = block.find("variants"); variants != block.end()) {
    if (!variants->is_array() || variants->empty()) {
      add("sweep.variants", "expected a non-empty array of variant names");
    } else {
      for (size_t i = 0; i < variants->size(); ++i) {
        const auto& v = (*variants)[i];
        const std::string path = fmt::format("sweep.variants[{}]", i);
        if (!v.is_string() || v.get<std::string>().empty())
          add(path, "expected a variant name; got " + v.dump());
        else if (std::count(sweep.variants.begin(), sweep.variants.end(), v.get<std::string>()))
          add(path, "duplicate variant name " + v.dump());
        else
          sweep.variants.push_back(v.get<std::string>());
      }
    }
  }
  return sweep;
}

std::vector<sweep_point> expand_sweep(const sweep_config& sweep) {
  // Loop order: set-up axes first (slowest), then the rest as given; the point's params keep the
  // config's order so labels read as the user wrote the axes.
  std::vector<size_t> order;
  for (const auto& name : setup_axes)
    for (size_t i = 0; i < sweep.axes.size(); ++i)
      if (sweep.axes[i].name == name) order.push_back(i);
  for (size_t i = 0; i < sweep.axes.size(); ++i)
    if (!std::count(order.begin(), order.end(), i)) order.push_back(i);

  std::vector<sweep_point> points;
  if (sweep.axes.empty()) return points;
  std::vector<size_t> index(sweep.axes.size(), 0);  // odometer over `order`, last digit fastest
  while (true) {
    sweep_point p;
    for (size_t i = 0; i < sweep.axes.size(); ++i)
      p.params.emplace_back(sweep.axes[i].name, sweep.axes[i].values[index[i]]);
    points.push_back(std::move(p));
    size_t d = order.size();
    while (d > 0) {
      const size_t axis = order[d - 1];
      if (++index[axis] < sweep.axes[axis].values.size()) break;
      index[axis] = 0;
      --d;
    }
    if (d == 0) break;
  }
  return points;
}

ordered_json apply_sweep_point(const ordered_json& doc, const sweep_config& sweep, const sweep_point& point,
                               const std::string& baseline) {
  ordered_json out = doc;
  out.erase("sweep");
  if (!sweep.variants.empty() && out.contains("variants") && out["variants"].is_array()) {
    ordered_json kept = ordered_json::array();
    for (const auto& v : out["variants"]) {
      const std::string name = v.is_object() ? v.value("name", "") : "";
      if (name == baseline || std::count(sweep.variants.begin(), sweep.variants.end(), name))
        kept.push_back(v);
    }
    out["variants"] = kept;
  }
  for (const auto& [axis, value] : point.params) apply_param(out, axis, value);
  return out;
}

}  // namespace attnbench
