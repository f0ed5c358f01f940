// The kernel-name checks of a config, owned by the kernels' layer: a variant's "attention" may name
// one of kernel_catalog's kernels, which must exist, run on the config's device, and is forward-only.
// The config reader takes any name (config/config_parser.hpp); the runner calls this before anything
// runs (runner/config_checks.hpp), so `validate` and `run` refuse the same configs with the same
// messages. Torch-free.
#pragma once

#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

namespace attnbench {

// Every problem of the config's attention choices, each at the path it was written at
// (model.attention, variants[i].attention); empty when there is none. `caps` resolves "auto".
std::vector<problem> kernel_problems(const config& cfg, const device_caps& caps);

}  // namespace attnbench
