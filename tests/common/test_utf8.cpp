#include <catch2/catch.hpp>

#include "common/utf8.hpp"

using namespace attnbench;

TEST_CASE("UTF-8 decodes every length and round-trips", "[common][utf8]") {
  const std::string text = "a\xC3\xA9\xE6\x9D\xB1\xF0\x9F\x98\x80";  // a é 東 😀
  const auto cps = decode_utf8(text);
  REQUIRE(cps);
  CHECK(*cps == std::u32string{U'a', U'\u00e9', U'\u6771', U'\U0001F600'});
  CHECK(encode_utf8(*cps) == text);
}

TEST_CASE("invalid UTF-8 is refused with the offset of the first bad byte", "[common][utf8]") {
  std::size_t at = 99;
  CHECK_FALSE(decode_utf8("ab\xFF", &at));
  CHECK(at == 2);
  CHECK_FALSE(is_valid_utf8("\xC0\x80"));          // overlong NUL
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE6\x9D"));          // truncated
  CHECK(is_valid_utf8(""));
}
