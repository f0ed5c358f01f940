// A small well-formedness check for the XML the report writers produce (SVG, JUnit): every tag
// closed in order, attributes quoted, '&' only in entity or character references. Not a full XML
// parser: no DTDs, CDATA or comments, which the writers never emit.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace attnbench::testing {

// Empty when well-formed, else what is wrong and where.
inline std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  bool root_seen = false;
  const auto entity_ok = [&](size_t at) {
    const size_t end = xml.find(';', at);
    if (end == std::string::npos || end - at > 10) return false;
    const std::string name = xml.substr(at + 1, end - at - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
    if (name.size() > 1 && name[0] == '#') {
      for (size_t k = 1; k < name.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(name[k]))) return false;
      return true;
    }
    return false;
  };
  while (i < xml.size()) {
    const char c = xml[i];
    if (c == '&') {
      if (!entity_ok(i)) return "bad '&' at offset " + std::to_string(i);
      ++i;
      continue;
    }
    if (c == '>') return "stray '>' at offset " + std::to_string(i);
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c)))
        return "text outside the root at offset " + std::to_string(i);
      ++i;
      continue;
    }
    if (xml.compare(i, 5, "<?xml") == 0) {
      if (i != 0) return "XML declaration not at the start";
      const size_t end = xml.find("?>", i);
      if (end == std::string::npos) return "unterminated XML declaration";
      i = end + 2;
      continue;
    }
    // A tag: scan to its '>', honouring quoted attribute values.
    size_t j = i + 1;
    char quote = 0;
    for (; j < xml.size(); ++j) {
      if (quote) {
        if (xml[j] == quote)
          quote = 0;
        else if (xml[j] == '<')
          return "'<' inside an attribute at offset " + std::to_string(j);
        else if (xml[j] == '&' && !entity_ok(j))
          return "bad '&' in an attribute at offset " + std::to_string(j);
      } else if (xml[j] == '"' || xml[j] == '\'') {
        quote = xml[j];
      } else if (xml[j] == '>') {
        break;
      }
    }
    if (j >= xml.size()) return "unterminated tag at offset " + std::to_string(i);
    std::string tag = xml.substr(i + 1, j - i - 1);
    const bool closing = !tag.empty() && tag[0] == '/';
    const bool self_closing = !tag.empty() && tag.back() == '/';
    const size_t name_start = closing ? 1 : 0;
    size_t name_end = name_start;
    while (name_end < tag.size() && !std::isspace(static_cast<unsigned char>(tag[name_end])) &&
           tag[name_end] != '/')
      ++name_end;
    const std::string name = tag.substr(name_start, name_end - name_start);
    if (name.empty()) return "empty tag name at offset " + std::to_string(i);
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close the open element";
      open.pop_back();
    } else {
      if (open.empty() && root_seen) return "a second root element <" + name + ">";
      // Attributes: name="value" pairs only.
      size_t k = name_end;
      const size_t attrs_end = self_closing ? tag.size() - 1 : tag.size();
      while (k < attrs_end) {
        if (std::isspace(static_cast<unsigned char>(tag[k]))) {
          ++k;
          continue;
        }
        const size_t eq = tag.find('=', k);
        if (eq == std::string::npos || eq + 1 >= attrs_end || (tag[eq + 1] != '"' && tag[eq + 1] != '\''))
          return "unquoted attribute in <" + name + ">";
        const size_t close = tag.find(tag[eq + 1], eq + 2);
        if (close == std::string::npos || close >= attrs_end + 1)
          return "unterminated attribute in <" + name + ">";
        k = close + 1;
      }
      root_seen = true;
      if (!self_closing) open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return "";
}

// Occurrences of `needle` in `haystack`.
inline size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

}  // namespace attnbench::testing
