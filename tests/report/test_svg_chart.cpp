#include <catch2/catch.hpp>

#include <string>

#include "report/svg_chart.hpp"
#include "xml_check.hpp"

using namespace attnbench;
using testing::count_of;
using testing::xml_problem;

TEST_CASE("svg chart: well-formed, one rect per finite bar, whiskers and reference line", "[report]") {
  bar_panel p;
  p.title = "Speedup";
  p.axis_label = "× baseline";
  p.reference = 1;
  p.bars = {{"base", 1.0, not_a_number, not_a_number, false, "1.00×", ""},
            {"fast \"& <quick>\"", 2.5, 2.2, 2.9, false, "2.50×", ""},
            {"broken", 3.0, 2.0, 4.0, true, "3.00×", "(FAIL)"},
            {"later", not_a_number, not_a_number, not_a_number, false, "", "skipped: pending"}};
  const std::string svg = svg_bar_chart("title & more", {p, p});
  INFO(svg);
  CHECK(xml_problem(svg).empty());
  CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"",
                  0) == 0);
  CHECK(count_of(svg, "<rect class=\"bar\"") == 6);  // 3 finite bars × 2 panels
  CHECK(count_of(svg, "fill=\"#e15759\"") >= 2);     // the failed bar, red in both panels
  CHECK(count_of(svg, "stroke-dasharray") == 2);     // the 1× line per panel
  CHECK(count_of(svg, ">skipped: pending</text>") == 2);
  CHECK_THAT(svg, Catch::Contains(">fast &quot;&amp; &lt;quick&gt;&quot;</text>"));
  CHECK_THAT(svg, Catch::Contains(">title &amp; more</text>"));
  // The axis reaches past the highest whisker (4.0) on a round tick.
  CHECK_THAT(svg, Catch::Contains(">4</text>"));
}

TEST_CASE("svg chart: long labels are cut, empty panels still render", "[report]") {
  bar_panel p;
  p.bars = {{std::string(200, 'x'), 5.0, not_a_number, not_a_number, false, "5", ""}};
  const std::string svg = svg_bar_chart("t", {p, bar_panel{}});
  CHECK(xml_problem(svg).empty());
  CHECK(svg.find(std::string(200, 'x') + "</text>") == std::string::npos);  // the tooltip keeps it whole
  CHECK_THAT(svg, Catch::Contains("x…</text>"));
  CHECK_THAT(svg, Catch::Contains(">no variants</text>"));
  CHECK(count_of(svg, "<rect class=\"bar\"") == 1);
}

TEST_CASE("nice_tick_step: 1, 2 or 5 times a power of ten", "[report]") {
  CHECK(nice_tick_step(100, 5) == 20);
  CHECK(nice_tick_step(98.2, 6) == 20);
  CHECK(nice_tick_step(2.9, 6) == 0.5);
  CHECK(nice_tick_step(12, 6) == 2);
  CHECK(nice_tick_step(0.03, 6) == Approx(0.005));
  CHECK(nice_tick_step(7000, 6) == 2000);
  CHECK(nice_tick_step(0, 6) == 1);
  CHECK(nice_tick_step(not_a_number, 6) == 1);
}
