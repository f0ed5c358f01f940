// Continuous batching for decoders (vLLM's and TGI's scheduling, without paging): sequences that
// each own a KV cache decode together, one token per step, and a waiting request joins at any step
// boundary instead of waiting for the running batch to finish. The engine serves both the generate
// scenario's `"batching": {"kind": "dynamic"}` (every prompt waiting at the start) and generation
// in the server scenario (requests arriving by a Poisson process, runner/generate_server.hpp).
//
// - A request is admitted by its prefill: its prompt (1, P) alone, into its own cache of
//   P + max_new_tokens positions in the cache dtype; the argmax of its last position is its first
//   token. Its time to first token is that moment minus its arrival.
// - A step runs every active sequence's last token at its own position
//   (DecoderLMImpl::step_rows): the linears and the LM head over the B rows at once, attention row
//   by row over each row's own cache, so no row is padded.
// - A sequence that has max_new_tokens tokens retires; its cache is freed.
// - Admission: `continuous` admits whenever fewer than `slots` sequences run and the new cache
//   fits `max_cache_tokens` (the positions every running sequence's cache holds together; 0: no
//   bound); otherwise (static batching, the comparison) only until the batch first steps, up to
//   `slots` at once, and the batch runs to its end.
// Times come from the caller's clock (seconds), so the server's arrivals and the engine share one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "model/decoder.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct generation_request {
  int64_t id = 0;       // the request's index (arrival order)
  int64_t sample = 0;   // its prompt: data.samples[sample]
  double arrival_s = 0;
};

struct generated_sequence {
  int64_t id = 0, sample = 0;
  double arrival_s = 0;
  double prefill_ms = 0;           // its own prefill (prompt forward and first argmax)
  std::vector<double> token_s;     // when each token existed, the first included
  torch::Tensor tokens;            // (max_new_tokens) int64 on the CPU
};

struct engine_totals {
  double prefill_ms = 0, decode_ms = 0;  // time in prefills, in decode steps
  int64_t prefill_tokens = 0;            // prompt tokens prefilled
  int64_t decode_tokens = 0;             // tokens from decode steps (rows over every step)
  int64_t steps = 0;
  int64_t context_sum = 0;               // Σ over steps and rows of the positions each row attends over
  std::vector<double> step_ms;           // each decode step
  int64_t peak_active = 0;               // the most sequences decoding together
  int64_t peak_cache_bytes = 0;          // the most KV-cache bytes allocated at once
  double fill_sum = 0;                   // Σ over steps of filled / allocated cache positions
};

class generation_engine {
 public:
  struct settings {
    int64_t slots = 1;
    bool continuous = true;
    int64_t max_cache_tokens = 0;
    int64_t new_tokens = 1;
    torch::ScalarType cache_dtype = torch::kFloat;
  };
  // model, data and clock are borrowed; the caller holds any autocast scope and NoGradGuard.
  generation_engine(DecoderLM& model, const dataset& data, torch::Device device, settings s,
                    std::function<double()> clock);
  ~generation_engine();

  // Whether a waiting request for `sample` may be admitted now. A request whose cache alone is more
  // than max_cache_tokens is refused by admit() with an error.
  bool can_admit(int64_t sample) const;
  // Prefills r's prompt now; a sequence of max_new_tokens 1 retires at once.
  void admit(const generation_request& r);
  bool idle() const { return active_.empty(); }
  int64_t active() const { return static_cast<int64_t>(active_.size()); }
  // One decode step of every active sequence; the ones that reach max_new_tokens retire.
  void step();

  std::vector<generated_sequence> finished;  // in retirement order
  engine_totals totals;

 private:
  struct running;
  void retire_done();
  int64_t capacity_of(int64_t sample) const;
  DecoderLM& model_;
  const dataset& data_;
  torch::Device device_;
  settings s_;
  std::function<double()> clock_;
  std::vector<std::unique_ptr<running>> active_;
  bool batch_open_ = true;  // static batching: admitting until the batch first steps
  int64_t cache_tokens_ = 0;  // positions the running sequences' caches hold
};

// Serves `requests` (all waiting at clock 0) to the end through an engine: what the generate
// scenario's dynamic-batching variant times per pass. Returned in retirement order.
std::vector<generated_sequence> generate_all(generation_engine& engine, const std::vector<generation_request>& requests);

}  // namespace attnbench
