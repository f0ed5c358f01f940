#include "report/xml_escape.hpp"

namespace attnbench {
namespace {
constexpr const char* replacement_character = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
constexpr unsigned char first_printable = 0x20;
}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (static_cast<unsigned char>(c) < first_printable)
          out += replacement_character;
        else
          out += c;
    }
  }
  return out;
}

}  // namespace attnbench
