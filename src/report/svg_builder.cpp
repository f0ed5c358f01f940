#include "report/svg_builder.hpp"

#include <algorithm>
#include <cmath>

namespace attnbench {

// Code points, not bytes: labels may hold UTF-8 (×, —).
size_t glyphs(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// At most `max_glyphs` code points, the last one an ellipsis when cut.
std::string fit(const std::string& s, size_t max_glyphs) {
  if (glyphs(s) <= max_glyphs || max_glyphs == 0) return s;
  std::string out;
  size_t count = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((s[i] & 0xC0) != 0x80 && ++count == max_glyphs) break;
    out += s[i];
  }
  return out + "…";
}

std::string tick_text(double v, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", v, decimals);
}

}  // namespace attnbench
