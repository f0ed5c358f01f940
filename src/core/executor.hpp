// The executor interface: how one variant turns a batch (or a whole pass) into outputs. The
// runner drives it; techniques (src/techniques/) and the parallel paths (src/parallel/) implement
// it. It lives below both so that neither has to include the runner.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "report/result.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

// One whole pass of a technique that splits the workload among workers (data parallel threads,
// ranks): its wall time, as the runner would have timed it, and what the workers computed.
struct whole_pass {
  // From the start of the pass to the moment every output is gathered where the check reads it
  // (the dispatching thread; rank 0), so threads and ranks are timed alike. Workers' own compute
  // times are kept by the executor and reported beside it.
  double seconds = 0;
  std::vector<double> batch_ms;       // every batch of every worker (rank)
  int64_t allocations = 0;            // input buffers the pass allocated (assemble_inputs)
  torch::Tensor outputs;              // keep_outputs: (rows, C) float32 on the CPU …
  std::vector<int64_t> sample_index;  // … and the dataset index of each row
};

// The kind of pass the runner is about to run. Executors keep their own per-pass figures (worker
// and rank times, stage busy times) from timed passes only: a check or warm-up pass carries
// first-run costs that the timed figures beside them exclude.
enum class pass_phase { check, warmup, timed, other };

class executor_base {
 public:
  virtual ~executor_base() = default;
  // Set by the runner before each pass (and `other` for work outside the rounds, e.g. the server).
  void begin_phase(pass_phase p) { phase_ = p; }
  pass_phase phase() const { return phase_; }
  // Techniques that split the workload among workers own their shards' batches and run whole
  // passes: the runner then calls run_pass() instead of forward() per batch.
  virtual bool runs_whole_passes() const { return false; }
  whole_pass run_pass(bool keep_outputs) { return do_run_pass(keep_outputs); }
  // Logits (B, C) float32 for one batch, in the batch's row order. Runs under inference mode.
  torch::Tensor forward(const batch& b) { return do_forward(b); }
  // Adds what the technique measured over every forward so far to the variant's record (the
  // runner calls it once, after the last pass, with the device synchronised; r.batches is set:
  // per-pass figures are per-batch averages times the batches of a pass).
  void annotate(variant_result& r) { do_annotate(r); }

 protected:
  virtual torch::Tensor do_forward(const batch& b) = 0;
  virtual void do_annotate(variant_result& /*r*/) {}
  virtual whole_pass do_run_pass(bool /*keep_outputs*/) {
    throw std::logic_error("this executor runs batch by batch, not whole passes");
  }
  bool timed_phase() const { return phase_ == pass_phase::timed; }

 private:
  pass_phase phase_ = pass_phase::other;
};

}  // namespace attnbench
