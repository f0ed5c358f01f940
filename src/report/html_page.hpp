// One self-contained HTML page (report.html, history.html): styles and the chart script inline,
// nothing fetched from the network. Every figure is in a table, so the page reads without
// JavaScript; with it, the inline script draws SVG charts from the JSON data block the page
// carries (<script type="application/json" id="attnbench-data">).
//
// Chart data, as the script reads it: {"charts": [chart…]}, each chart
//   {"id": element id of the <figure> to draw into, "kind": "bars" | "lines", "title", "unit",
//    bars:  "items": [{"label", "value", "low", "high", "fail": bool}], "reference": 1 or null
//    lines: "series": [{"label", "points": [{"x": label, "value", "low", "high", "flag": bool}]}]}
// null low/high: no interval drawn.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attnbench {

// Text for HTML content and attribute values.
std::string html_escape(const std::string& text);

// The whole page: title, body HTML, and the chart data (embedded safely: "</" cannot end the script).
std::string html_page(const std::string& title, const std::string& body, const nlohmann::ordered_json& chart_data);

// A number for a table cell: 4 significant digits, "n/a" when not finite; and the cell with the
// full value in data-value (what the browser test compares with results.json).
std::string html_number(double v);
std::string html_number_cell(double v, const std::string& css_class);

}  // namespace attnbench
