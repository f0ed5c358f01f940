#include "report/result.hpp"

#include <algorithm>

namespace attnbench {

std::string to_string(status_kind s) {
  switch (s) {
    case status_kind::pass:
      return "PASS";
    case status_kind::fail:
      return "FAIL";
    case status_kind::skipped:
      return "SKIPPED";
  }
  return "UNKNOWN";  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

std::string to_string(output_kind k) {
  switch (k) {
    case output_kind::logits:
      return "logits";
    case output_kind::embedding:
      return "embedding";
  }
  return "unknown";  // unreachable for valid enum values
}

bool run_result::all_passed() const {
  return std::none_of(variants.begin(), variants.end(),
                      [](const variant_result& v) { return v.status == status_kind::fail; });
}

}  // namespace attnbench
