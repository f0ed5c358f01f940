// A config as the runner takes it: read and validated by the config layer, then checked by the
// layers that own what it names: its kernels (kernels/kernel_check.hpp) and its weights' header
// (model/weights_check.hpp). Every command that loads a config loads it through here, before
// anything runs, so `validate` refuses exactly what `run` would.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/sweep.hpp"

namespace attnbench {

// The owned checks on a parsed config; fills what they read (model.mean_pool, num_labels). Throws
// input_error with every problem.
void check_owned(config& cfg, const device_caps& caps);

// load_config (config/config_parser.hpp), then check_owned.
config load_checked_config(const std::string& path, const device_caps& caps);

// sweep_point_configs, then check_owned on each point; a problem names the first point it hit.
std::vector<config> checked_sweep_points(const config& base, const std::vector<sweep_point>& points,
                                         const device_caps& caps);

}  // namespace attnbench
