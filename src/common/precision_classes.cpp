#include "common/precision_classes.hpp"

namespace attnbench {
namespace {

// Constant-initialized, so the techniques' static initializers may read it (techniques/*.cpp).
// Tolerances: 4 × the class's largest relative L2 error in the float64 study (for fp32 the larger
// of that and the fp32 kernels' own error), rounded up to a 1-2-5 step (precision_classes.hpp says
// how; results/cpu-accuracy-study-zen3/ has the run). Its figures, beside each class: fp32 9.17e-8
// randomly rounded, 6.34e-7 the fp32 kernels; bf16 1.35e-2; fp16 1.60e-3; int8 1.63e-1.
constexpr std::array<precision_class, 4> table{{
    {"fp32", 23, 5.9604644775390625e-08, 5e-6},
    {"bf16", 7, 3.90625e-03, 1e-1},
    {"fp16", 10, 4.8828125e-04, 1e-2},
    {"int8", 0, 1.0 / 510.0, 1.0},
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
