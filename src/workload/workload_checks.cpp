#include "workload/workload_checks.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "workload/arrivals.hpp"
#include "workload/batch_plan.hpp"

namespace attnbench {

void check_config_against_workload(const config& cfg, const dataset& data) {
  std::vector<problem> problems;
  for (std::size_t v = 0; v < cfg.variants.size(); ++v) {
    const variant_config& vc = cfg.variants[v];
    if (vc.pending || vc.batching.kind != "dynamic") continue;
    for (std::size_t i = 0; i < data.samples.size(); ++i) {
      const auto len = static_cast<int64_t>(data.samples[i].size());
      const int64_t padded = padded_length_of(len, vc.batching, cfg.workload.max_length);
      if (padded <= vc.batching.max_tokens) continue;
      problems.push_back({fmt::format("variants[{}].batching.max_tokens", v),
                          fmt::format("{} is smaller than sample {} (length {}{}); raise max_tokens to at least {}",
                                      vc.batching.max_tokens, i, len,
                                      padded != len ? fmt::format(", padded to its bucket {}", padded) : "", padded)});
      break;  // one sample is enough to name the problem
    }
  }
  if (cfg.scenario == "server" && !cfg.server.trace.empty()) {
    try {
      read_trace(cfg.server.trace, static_cast<int64_t>(data.samples.size()));
    } catch (const input_error& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
  }
  if (!problems.empty()) throw input_error(std::move(problems));
}

}  // namespace attnbench
