#include <catch2/catch.hpp>

#include <string>

#include "report/xml_escape.hpp"

using namespace attnbench;

TEST_CASE("xml_escape: markup characters, line breaks, control characters", "[report]") {
  CHECK(xml_escape("a < b && c > \"d\" 'e'") == "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &apos;e&apos;");
  CHECK(xml_escape("line 1\nline 2\r\tend") == "line 1&#10;line 2&#13;&#9;end");
  CHECK(xml_escape(std::string("bell\x07!")) == "bell\xEF\xBF\xBD!");  // XML 1.0 forbids U+0007
  CHECK(xml_escape("1.00× — ünïcode") == "1.00× — ünïcode");           // UTF-8 passes through
  CHECK(xml_escape("").empty());
}
