// Pipeline model parallel (GPipe-style inference): the encoder layers are split into contiguous
// stages, each with its own device and its own persistent worker thread; stage 0 also runs the
// embeddings, the last stage the pooler and classifier. forward() cuts the batch into
// micro-batches of `micro_batch` rows and feeds them to stage 0; thread-safe queues connect the
// stages, so stage 0 works on micro-batch k + 1 while stage 1 works on k. The outputs come back in
// the batch's row order. A batch is a flush: forward() returns when every stage has finished it.
//
// Each stage thread sets its own thread-local state: inference mode, the variant's autocast
// (opened per batch, as the plain executor does, so weights are cast once per batch per stage),
// the CUDA device and stream of its stage, and its intra-op thread count. With LibTorch's OpenMP
// backend, at::set_num_threads inside a thread sets that thread's OpenMP team size only (the
// nthreads-var ICV is per thread), so every stage gets its own threads; the caller's count is left
// as it was.
//
// Stages on the model's device run the model's own weights (no copies); a stage on another device
// holds deep copies of its layers (and of the embeddings or head when it runs them). Between CUDA
// devices, activations move with non-blocking copies on a pool stream of the source device,
// ordered after the producing stage by a CUDA event and before the consuming stage by a stream
// wait.
//
// An error in a stage is passed down the pipeline in place of that micro-batch, every other
// micro-batch still drains, and forward() throws a c10::Error naming the stage: never a hang. The
// destructor stops and joins the threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/attention.hpp"
#include "model/encoder.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

// Layers per stage for `stages` contiguous ranges of layers whose parameter counts are
// `layer_parameters`: the smallest possible largest stage; among those the most even split (least
// sum of squared stage sizes); among those, earlier stages take the extra layers. Equal layers
// split as evenly as they can ([3, 2, 2] for 7 over 3). Needs 1 ≤ stages ≤ layers.
std::vector<int64_t> balanced_split(const std::vector<int64_t>& layer_parameters, int64_t stages);

struct handoff_event;  // a CUDA event between stages (pipeline_executor.cpp)

class pipeline_executor : public executor_base {
 public:
  pipeline_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                    const variant_plan& plan, bool causal);
  ~pipeline_executor() override;
  pipeline_executor(const pipeline_executor&) = delete;
  pipeline_executor& operator=(const pipeline_executor&) = delete;

  int64_t stage_count() const { return static_cast<int64_t>(stages_.size()); }
  // Each stage's encoder layers [begin, end).
  std::vector<std::pair<int64_t, int64_t>> stage_layers() const;
  int64_t threads_per_stage() const { return threads_per_stage_; }
  // at::get_num_threads() as each stage thread saw it, after setting its own count.
  std::vector<int> stage_threads() const;
  // Test hook: stage `stage` throws when it reaches micro-batch `micro_batch` (of any batch).
  void inject_fault_for_test(int64_t stage, int64_t micro_batch);

 protected:
  torch::Tensor do_forward(const batch& b) override;
  void do_annotate(variant_result& r) override;

 private:
  struct message;
  struct channel;
  struct stage;
  struct flush_counter;
  void run_stage(stage& s);
#ifdef ATTNBENCH_WITH_CUDA
  static void grow_event_pools(stage& s, std::size_t n);  // at least n timing pairs and hand-off events
#endif
  void compute(stage& s, message& m);
  std::string stage_name(const stage& s) const;

  EncoderClassifier model_;
  torch::Device device_;
  std::optional<c10::ScalarType> autocast_;
  attention_settings how_;
  pipeline_config cfg_;
  int64_t threads_per_stage_ = 0;
  std::vector<std::unique_ptr<stage>> stages_;
  std::unique_ptr<channel> output_;       // after the last stage: what forward() collects
  std::unique_ptr<flush_counter> flushed_;  // stages done with the current batch
  std::shared_ptr<handoff_event> inputs_ready_;  // CUDA: the batch's inputs are on the device
  int64_t forwards_ = 0;
  int64_t micro_batches_ = 0;  // over every forward
  double forward_ms_ = 0;      // forward() wall time, summed: the span the stages' busy time is set against
};

}  // namespace attnbench
