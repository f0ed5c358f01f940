#include "common/precision_classes.hpp"

namespace attnbench {
namespace {

// Constant-initialized, so the techniques' static initializers may read it (techniques/*.cpp).
// Tolerances: 4 × the class's largest relative L2 error in the float64 study, rounded up to a
// 1-2-5 step (precision_classes.hpp says how; results/cpu-accuracy-study has the run).
constexpr std::array<precision_class, 4> table{{
    {"fp32", 23, 5.9604644775390625e-08, 1e-5},
    {"bf16", 7, 3.90625e-03, 5e-2},
    {"fp16", 10, 4.8828125e-04, 1e-2},
    {"int8", 0, 1.0 / 510.0, 5e-2},
}};

}  // namespace

const std::array<precision_class, 4>& precision_classes() { return table; }

const precision_class& precision_class_of(std::string_view value) {
  const auto has = [&](std::string_view part) { return value.find(part) != std::string_view::npos; };
  if (has("bf16")) return table[1];
  if (has("fp16")) return table[2];
  if (has("int8")) return table[3];
  return table[0];
}

}  // namespace attnbench
