// Checks that need the workload itself, run (by `run` and `validate`) before anything runs:
// a dynamic variant's token budget must fit every sample, and a server trace must be valid.
#pragma once

#include "config/config.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

// Throws input_error with every problem, each at its JSON path.
void check_config_against_workload(const config& cfg, const dataset& data);

}  // namespace attnbench
