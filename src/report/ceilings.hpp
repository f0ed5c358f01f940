// Reading a run's measured matmul ceilings (environment_info::ceilings) by dtype, the one lookup
// that the variant's ceiling share, precision "amp"'s reason, the ceiling warning and
// `compare --normalize ceiling` all use.
#pragma once

#include <string>

#include "report/result.hpp"

namespace attnbench {

// GFLOP/s of the first ceiling measured for `dtype` ("fp32", "bf16", "fp16"); NaN when none was
// measured or its figure is not a positive number.
double measured_ceiling(const environment_info& env, const std::string& dtype);

// Whether a share of the ceiling is beyond what the ceiling's own spread explains: above
// 1 + spread (spread: the ceiling's, matmul_ceiling::spread; NaN counts as 0). Such a share means
// the ceiling was not the best the device does, a bug of the measurement (issue 37 part 4).
inline bool ceiling_share_is_bug(double share, double spread) {
  return share > 1.0 + (spread == spread ? spread : 0.0);
}

}  // namespace attnbench
