// Dynamic batching (the article's section 2.2): samples grouped by length — sorted, or bucketed
// at given boundaries — and each batch filled up to a budget of padded tokens and a batch size,
// so padding is minimal. Outputs go back to sample order through batch.sample_index.
#pragma once

#include "workload/batching_base.hpp"

namespace attnbench {

class dynamic_batching : public batching_base {
 public:
  explicit dynamic_batching(const batching_config& cfg) : cfg_(cfg) {}
  std::string describe() const override;

 protected:
  std::vector<batch_plan> do_plan(const dataset& data, const std::vector<int64_t>& rows) const override;

 private:
  batching_config cfg_;
};

}  // namespace attnbench
