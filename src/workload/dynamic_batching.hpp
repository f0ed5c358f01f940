// Dynamic batching (the article's section 2.2): samples grouped by length — sorted, or bucketed
// at given boundaries — and each batch filled up to a budget of padded tokens and a batch size,
// so padding is minimal. The sorted rows are cut into batches greedily or by the cost planner
// (workload/cost_planner.hpp), as cfg.planner says. Outputs go back to sample order through
// batch.sample_index.
#pragma once

#include "workload/batching_base.hpp"

namespace attnbench {

class dynamic_batching : public batching_base {
 public:
  dynamic_batching(const batching_config& cfg, const batch_cost_model& cost) : cfg_(cfg), cost_(cost) {}
  std::string describe() const override;

 protected:
  std::vector<batch_plan> do_plan(const dataset& data, const std::vector<int64_t>& rows) const override;

 private:
  batching_config cfg_;
  batch_cost_model cost_;
};

}  // namespace attnbench
