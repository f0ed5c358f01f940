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

}  // namespace attnbench
