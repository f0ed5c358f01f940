// libFuzzer target: a sweep axis's range text ("1-64*2", "8-32+8", "1-4,8"; config/sweep.hpp,
// parse_int_range) must give distinct values >= 1, at most a thousand of them, or be refused with
// an input_error; nothing else (no overflow in the steps, no other exception).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "common/error.hpp"
#include "config/sweep.hpp"

namespace {
constexpr size_t max_values = 1000;  // sweep.cpp's max_values_per_axis
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto values = attnbench::parse_int_range(text, "sweep.axes.batch_size");
    if (values.empty() || values.size() > max_values) __builtin_trap();
    const std::set<int64_t> distinct(values.begin(), values.end());
    if (distinct.size() != values.size() || *distinct.begin() < 1) __builtin_trap();
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
