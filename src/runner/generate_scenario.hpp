// The generate scenario: a decoder (model/decoder.hpp) prefills each prompt and decodes
// generate.max_new_tokens tokens greedily against a KV cache preallocated in the variant's
// activation dtype. Prompts are batched consecutively, batching.batch_size at a time (1 when not
// given, as llama-bench's tg), left-padded to the batch's longest (or, with "padding":
// "max_length", to workload.max_length) with the pad positions masked out of attention, in the
// same order for every variant; the padding is reported as padding efficiency.
//
// A pass generates every prompt's tokens once; the loop times passes and interleaves variants as
// in every scenario, so a variant's samples/s are sequences completed per second. The scenario adds
// per variant (report/metric.hpp; centre: the geometric mean over timed passes, its 95% interval in
// the note): prefill tokens/s (prompt tokens over prefill time, the first argmax included), decode
// tokens/s (tokens after the first over the decode steps' time), time to first token (per batch),
// inter-token latency p50 and p99 (every decode step of every timed pass), the KV cache's bytes,
// and the bytes one decode step reads (weights + cache) over its time, in GB/s, beside a measured
// STREAM-style triad (the memory-bandwidth ceiling) and the share of it decoding reaches; and the
// prefill's GFLOP/s (decoder_prefill_flops over the prefill time) as a share of the run's measured
// matmul ceiling in the variant's dtype, as an encoder's passes are reported.
//
// Check: the variant's generated tokens against the baseline's, sequence by sequence (k of N
// identical over max_new_tokens, and the first step at which each other one diverges), and its
// logits teacher-forced on the baseline's tokens (one forward over prompt + baseline tokens),
// relative L2 against the variant's tolerance. Every changed decision (a teacher-forced step whose
// top token differs, and each diverging sequence's first step) must be excused by the float64
// study (runner/generation_study.hpp, the encoders' rule on a decoder's steps): PASS needs the
// logits within tolerance and every change excused; a FAIL names the steps that were not. A study over
// its memory budget (the host's available memory, or check.study_max_memory) excuses nothing. The server scenario's served tokens are
// compared without excuses.
//
// Batching: static padded batches, or "dynamic": continuous batching
// (runner/generate_engine.hpp), every prompt waiting at the start, up to max_batch_size sequences
// per decode step under max_tokens KV-cache positions. With "scenario": "server" each variant then
// serves requests arriving at the server block's rates (runner/generate_server.hpp), and its served
// tokens are checked against the baseline's.
//
// What runs: fp32, "amp" (autocast), the bf16/fp16 casts, int8 (the block linears quantized as
// the int8 technique quantizes an encoder's; the LM head stays fp32) and int8-weight-only (the
// block linears on int8 weights and fp32 activations, kernels/cpu/int8_gemv.hpp), with naive,
// sdpa or cpu-flash attention; offload (target "cpu": techniques/decoder_offload.hpp); and data
// parallel ("parallel", threads mode, CPU workers, static batches): the batches dealt out among
// worker threads (runner/generate_workers.hpp) by FLOPs, each worker with its own copy of the
// model and its own KV caches, all released at one common start, the pass's wall time the
// figure. Its prefill and decode rates are n/a (the workers' phases overlap); it reports
// generated_tokens_per_s over the wall time and each sequence's first token after the start.
// Pipelines, checkpointing and the other techniques are SKIPPED with the reason: they are built
// for the encoder's executors.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/run_observer.hpp"
#include "model/decoder.hpp"
#include "report/result.hpp"
#include "runner/measurement_loop.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

class generation_evidence;

class decoder_offload;
struct generate_variant;  // a variant's model, batches, check-pass tokens and per-pass timings

// How generated sequences compare: identical ones, and each other's first differing step.
struct token_comparison {
  int64_t sequences = 0;
  int64_t identical = 0;
  std::vector<std::pair<int64_t, int64_t>> divergences;  // (sequence, first differing step), in order
  double token_agreement = 0;                            // share of equal tokens over every position
};
// variant, baseline: (N, new) int64 on the CPU.
token_comparison compare_tokens(const torch::Tensor& variant, const torch::Tensor& baseline);

// Why the generate scenario (and a decoder's `attnbench profile`) cannot run a variant, or none.
std::optional<std::string> decoder_skip_reason(const variant_config& vc, const variant_plan& p, torch::Device device);

// A variant's decoder, as the generate scenario runs it: the base model itself (fp32, "amp" with
// autocast), a bf16/fp16 copy, or a copy whose block linears are int8 (int8, int8-weight-only).
struct decoder_variant_model {
  DecoderLM model{nullptr};
  std::optional<torch::ScalarType> autocast;  // autocast's dtype for "amp"; none otherwise
  torch::ScalarType cache_dtype = torch::kFloat;
  attention_settings how;
  std::vector<std::string> notes;  // what the report says of the variant's kernels
  int int8_weight_bits = 0;        // int8: the block linears' weight bits (7 where oneDNN saturates)
  std::shared_ptr<decoder_offload> offload;  // offload: the streamer feeding the model's blocks
};
decoder_variant_model prepare_decoder_model(const DecoderLM& base, const variant_config& vc, const variant_plan& p);

class generate_scenario : public scenario_base {
 public:
  // cfg, data and env are borrowed; model: the fp32 decoder every variant starts from (on
  // `device`); env: the run's, its matmul ceilings measured.
  // observer (may be null): told of the server scenario's rates, points and requests.
  generate_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data, DecoderLM model,
                    torch::Device device, const environment_info& env, run_observer* observer = nullptr);
  ~generate_scenario() override;
  // Test-only (the test-hooks binary's --test-perturb-outputs): variant `name`'s first sequence
  // leaves the baseline's tokens at step 3 (the last step if fewer) for the token the baseline's
  // model ranks last there, a divergence no float64 study can excuse; its check must FAIL.
  void plant_divergence(std::string name) { planted_ = std::move(name); }

  std::optional<skip_verdict> skip_reason(std::size_t i, variant_result& r) override;
  void prepare(std::size_t i, variant_result& r) override;
  void check_pass(std::size_t i, variant_result& r) override;
  pass_timing pass(std::size_t i, pass_phase phase) override;
  check_result check(std::size_t i, std::size_t base, double tolerance, variant_result& r) override;
  void finalize(std::size_t i, std::optional<std::size_t> base, variant_result& r) override;
  // Each checked variant's generated tokens (N, max_new_tokens), as float32 (ids below 2^24 are
  // exact): what `run --save-outputs` writes as outputs/<variant>.npy.
  std::map<std::string, torch::Tensor> take_outputs();

 private:
  // One pass over every batch; keeps the tokens when `keep`.
  pass_timing run(generate_variant& v, bool keep, bool timed);
  // "scenario": "server": the variant's rate sweep (runner/generate_server.hpp), checked against
  // the baseline's tokens.
  void serve(std::size_t i, std::size_t base, variant_result& r);
  const config& cfg_;
  std::vector<variant_plan> plans_;
  const dataset& data_;
  DecoderLM model_;
  torch::Device device_;
  const environment_info& env_;
  std::vector<std::unique_ptr<generate_variant>> variants_;
  double triad_gb_per_s_ = 0;  // measured once, at the first finalize
  // The float64 study's evidence, made at the first changed decision and kept for later variants.
  std::unique_ptr<generation_evidence> evidence_;
  std::optional<std::string> planted_;
  run_observer* observer_ = nullptr;
};

}  // namespace attnbench
