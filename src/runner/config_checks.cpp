#include "runner/config_checks.hpp"

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "kernels/kernel_check.hpp"
#include "model/weights_check.hpp"

namespace attnbench {
namespace {

std::vector<problem> owned_problems(config& cfg, const device_caps& caps) {
  std::vector<problem> problems = kernel_problems(cfg, caps);
  for (auto& p : read_weights_head(cfg)) problems.push_back(std::move(p));
  return problems;
}

}  // namespace

void check_owned(config& cfg, const device_caps& caps) {
  if (auto problems = owned_problems(cfg, caps); !problems.empty()) throw input_error(std::move(problems));
}

config load_checked_config(const std::string& path, const device_caps& caps) {
  config cfg = load_config(path, caps);
  check_owned(cfg, caps);
  return cfg;
}

std::vector<config> checked_sweep_points(const config& base, const std::vector<sweep_point>& points,
                                         const device_caps& caps) {
  std::vector<config> configs = sweep_point_configs(base, points, caps);
  std::vector<problem> problems;
  for (size_t i = 0; i < configs.size(); ++i)
    for (const auto& p : owned_problems(configs[i], caps)) add_sweep_point_problem(problems, p, points[i]);
  if (!problems.empty()) throw input_error(std::move(problems));
  return configs;
}

}  // namespace attnbench
