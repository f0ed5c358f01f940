// libFuzzer target: a server trace's text (workload/arrivals.hpp, parse_trace) must come back as
// arrivals sorted by time, at finite non-negative times and naming existing samples, or be
// refused with an input_error; nothing else.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "workload/arrivals.hpp"

namespace {
constexpr int64_t samples = 8;  // the workload the trace indexes into
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto arrivals = attnbench::parse_trace(in, "fuzz.trace", samples);
    if (arrivals.empty()) __builtin_trap();
    for (size_t i = 0; i < arrivals.size(); ++i) {
      const auto& a = arrivals[i];
      if (!std::isfinite(a.t_s) || a.t_s < 0 || a.sample < 0 || a.sample >= samples) __builtin_trap();
      if (i > 0 && a.t_s < arrivals[i - 1].t_s) __builtin_trap();
    }
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
