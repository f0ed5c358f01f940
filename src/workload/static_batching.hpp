// Static batching: consecutive samples in dataset order, a fixed batch size, padded either to
// the model's max_length (as a naive pipeline does) or to the longest sample of the batch.
#pragma once

#include "workload/batching_base.hpp"

namespace attnbench {

class static_batching : public batching_base {
 public:
  static_batching(int64_t batch_size, padding_kind padding, int64_t max_length)
      : batch_size_(batch_size), padding_(padding), max_length_(max_length) {}
  std::string describe() const override;

 protected:
  std::vector<batch_plan> do_plan(const dataset& data, const std::vector<int64_t>& rows) const override;

 private:
  int64_t batch_size_;
  padding_kind padding_;
  int64_t max_length_;
};

}  // namespace attnbench
