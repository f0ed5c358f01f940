// JSON text → config: the parse (with line and column for invalid JSON), then the reader
// (config/config_reader.hpp), whose blocks are each read and declared in their own file.
#include "config/config_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/error.hpp"
#include "config/config_reader.hpp"
#include "config/sweep.hpp"

namespace attnbench {
namespace {

using ordered_json = nlohmann::ordered_json;
using config_reading::config_reader;
using config_reading::quote;
using config_reading::unreadable_reason;

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

void add_sweep_point_problem(std::vector<problem>& problems, const problem& p, const sweep_point& point) {
  const bool repeat = std::any_of(problems.begin(), problems.end(), [&](const problem& q) {
    return q.path == p.path && q.message.rfind(p.message + " (at sweep point", 0) == 0;
  });
  if (!repeat) problems.push_back({p.path, fmt::format("{} (at sweep point {})", p.message, point.label())});
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
      for (const auto& p : e.problems()) add_sweep_point_problem(problems, p, point);
    }
  }
  if (!problems.empty()) throw input_error(std::move(problems));
  return configs;
}

profile_config profile_config_of(const config& cfg) {
  config_reading::problem_log log;
  const ordered_json& doc = cfg.raw;
  const auto schema = config_document_schema();
  const config_reading::object_reader root(doc.is_object() ? &doc : nullptr, "", log, schema.get());
  profile_config pc;
  config_reading::read_profile_block(root, pc);
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
