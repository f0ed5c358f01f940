// UTF-8 decoding and encoding with strict validation (no overlongs, no surrogates, <= U+10FFFF).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attnbench {

// The code points of `text`, or nullopt when it is not valid UTF-8. `bad_offset`, when given,
// receives the byte offset of the first invalid sequence.
std::optional<std::u32string> decode_utf8(std::string_view text, std::size_t* bad_offset = nullptr);

bool is_valid_utf8(std::string_view text);

void append_utf8(std::string& out, char32_t cp);
std::string encode_utf8(std::u32string_view cps);

}  // namespace attnbench
