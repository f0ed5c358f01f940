// A minimal SVG 1.1 document builder shared by attnbench's charts (svg_chart.hpp, svg_line_chart.hpp):
// elements appended in drawing order, every text XML-escaped, presentation attributes only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/xml_escape.hpp"

namespace attnbench {

// Minimal SVG document: elements appended in drawing order; every text escaped.
class svg_builder {
 public:
  svg_builder(double width, double height, std::string font, double font_size)
      : width_(width), height_(height), font_(std::move(font)), font_size_(font_size) {}

  void rect(double x, double y, double w, double h, const std::string& attributes) {
    body_ += fmt::format("  <rect {} x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>\n",
                         attributes, x, y, w, h);
  }
  void line(double x1, double y1, double x2, double y2, const std::string& attributes) {
    body_ += fmt::format("  <line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", x1, y1, x2,
                         y2, attributes);
  }
  void text(double x, double y, const std::string& content, const std::string& attributes) {
    body_ += fmt::format("  <text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y, attributes,
                         xml_escape(content));
  }
  // A tooltip for the element drawn next (SVG's <title>), shown on hover in browsers.
  void group_with_title(const std::string& title) {
    body_ += fmt::format("  <g>\n  <title>{}</title>\n", xml_escape(title));
  }
  // A polyline through (x, y) pairs.
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& attributes) {
    std::string list;
    for (const auto& [x, y] : points) list += fmt::format("{}{:.1f},{:.1f}", list.empty() ? "" : " ", x, y);
    body_ += fmt::format("  <polyline points=\"{}\" {}/>\n", list, attributes);
  }
  void circle(double cx, double cy, double r, const std::string& attributes) {
    body_ += fmt::format("  <circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" {}/>\n", cx, cy, r, attributes);
  }
  // A group with attributes (e.g. a class), closed by end_group().
  void group(const std::string& attributes) { body_ += fmt::format("  <g {}>\n", attributes); }
  void end_group() { body_ += "  </g>\n"; }

  std::string str() const {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 "
        "{0:.0f} {1:.0f}\" "
        "font-family=\"{2}\" font-size=\"{3:.0f}\">\n"
        "  <rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\"/>\n"
        "{4}</svg>\n",
        width_, height_, font_, font_size_, body_);
  }

 private:
  double width_, height_;
  std::string font_;
  double font_size_;
  std::string body_;
};

// Code points, not bytes: labels may hold UTF-8 (×, —).
size_t glyphs(const std::string& s);

// At most `max_glyphs` code points, the last one an ellipsis when cut.
std::string fit(const std::string& s, size_t max_glyphs);

// A tick value with as many decimals as the tick step needs.
std::string tick_text(double v, double step);

}  // namespace attnbench
