// Data parallelism in one process, the article's section 2.5: one model replica per worker (a
// GPU, or a share of the CPU's cores), one worker thread each, the pass's batches dealt out by
// FLOPs so that the workers finish together (parallel/shard.hpp), outputs gathered back in sample
// order.
//
// Intra-op threads per worker: each worker thread sets its own count when it starts
// (core/worker_thread.hpp says how, on this OpenMP LibTorch): two CPU workers × 1 thread use
// one core each, and the thread that started them keeps its own count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "common/thread_sync.hpp"
#include "config/config.hpp"
#include "core/executor.hpp"
#include "core/worker_thread.hpp"
#include "model/encoder.hpp"
#include "parallel/shard_runner.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/batching_base.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

class data_parallel_executor : public executor_base {
 public:
  // `rows`: the dataset rows a pass computes; `batching` plans the pass's batches, then shared out. CPU
  // workers get `parallel.threads_per_worker` threads, or the caller's thread count ÷ workers.
  data_parallel_executor(const EncoderClassifier& model, const variant_config& variant,
                         const variant_plan& plan, bool causal, const dataset& data,
                         const std::vector<int64_t>& rows, const batching_base& batching,
                         bool assemble_inputs);
  ~data_parallel_executor() override;
  data_parallel_executor(const data_parallel_executor&) = delete;
  data_parallel_executor& operator=(const data_parallel_executor&) = delete;

  bool runs_whole_passes() const override { return true; }
  // Every shard's batches, worker by worker: the pass's work, for the runner's accounting.
  std::vector<batch_plan> plans() const;
  // What each worker thread reported from at::get_num_threads() when it started (for tests).
  std::vector<int64_t> worker_threads() const;
  // Each worker's own compute seconds, one per timed pass (check and warm-up passes excluded).
  std::vector<std::vector<double>> worker_pass_seconds() const;
  // Worker results that carried outputs, over all passes so far (for tests: a timed pass, which
  // discards its outputs, must not gather them, as the plain executor's does not).
  int64_t worker_outputs_gathered() const { return worker_outputs_gathered_; }

 protected:
  torch::Tensor do_forward(const batch& b) override;
  whole_pass do_run_pass(bool keep_outputs) override;
  void do_annotate(variant_result& r) override;

 private:
  struct worker;
  void work(worker& w);

  std::vector<std::unique_ptr<worker>> workers_;
  // One round per pass: every worker runs its shard with the dispatching thread's context
  // (common/thread_sync.hpp: tested under ThreadSanitizer).
  round_dispatch<dispatch_context> rounds_;
  // Whether the current pass keeps its outputs: set before a round starts, read by the workers in it.
  std::atomic<bool> keep_outputs_{false};
  int64_t worker_outputs_gathered_ = 0;
};

}  // namespace attnbench
