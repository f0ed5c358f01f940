// The cost planner's per-batch overhead (workload/cost_planner.hpp), fitted once per run for each
// compute setting (precision, attention) that a cost-planned variant uses: the variant's plain
// executor (autocast as it says) runs a forward on one row and on a full batch of rows of the
// workload's median length, each the best of a few timed calls. With t = overhead + rows ·
// row_time, the two shapes give row_time, and the overhead is what one batch costs beyond its
// rows; dividing by the time of a token-equivalent (row_time ÷ the row's modelled cost) puts it
// in the planner's units. What a technique adds on top of the plain path (a cast model, offload,
// worker threads) is not in the fit: such variants are planned with their precision's overhead.
#pragma once

#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "report/result.hpp"
#include "workload/cost_planner.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct planner_calibration {
  batch_cost_model model;  // coefficients from the FLOP count, per_batch fitted or default
  double overhead_ms = 0;  // the fitted per-batch time; NaN when the default was used
  double token_ms = 0;     // one token-equivalent's time; NaN when the default was used
  std::string method;      // how per_batch was obtained, one line for the report
};

// The fit itself, from the best time of one row and of `rows` rows (seconds) and one row's
// modelled cost without the per-batch term (token-equivalents). `rejected` says why the fit is
// not usable (empty when it is): the full batch no slower than one row, no positive overhead,
// or an overhead above the full batch's own modelled work, which only a disturbed timing gives.
struct overhead_fit {
  double per_batch = 0;   // token-equivalents
  double overhead_s = 0;  // per batch
  double token_s = 0;     // per token-equivalent
  std::string rejected;
};
overhead_fit fit_overhead(double one_row_s, double full_s, int64_t rows, double row_units);

// The documented default (config_defaults.hpp), for runs that do not calibrate.
planner_calibration default_planner_calibration(const model_config& m);

// Fits per_batch by timing `exec` (on `device`, under the caller's inference mode) for a
// dynamic batching block `bc`; `setting` names what exec computes ("fp32 sdpa") for the report.
// Falls back to the default, saying why, when the fit is not usable.
planner_calibration calibrate_planner(executor_base& exec, const std::string& setting, torch::Device device,
                                      const model_config& m, const dataset& data, const batching_config& bc);

// Adds the planner's assumptions to a cost-planned variant's record: metrics and a note.
void annotate_planner(const planner_calibration& c, variant_result& r);

}  // namespace attnbench
