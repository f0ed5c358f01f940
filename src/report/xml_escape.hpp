// Text for XML documents (the SVG chart, JUnit reports): the one escaping both need.
#pragma once

#include <string>

namespace attnbench {

// Escapes & < > " ' so the result is safe in element content and in attribute values of either
// quote style; tab, newline and carriage return become character references (an attribute keeps
// its line breaks); other control characters, which XML 1.0 forbids, become U+FFFD. Multi-byte
// UTF-8 passes through unchanged.
std::string xml_escape(const std::string& text);

}  // namespace attnbench
