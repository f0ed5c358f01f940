// The accuracy check's float64 study for generation (issue 41 part 4): the rule that may excuse a
// changed token, the encoders' rule (check/output_check.hpp, runner/decision_study.hpp) applied to
// a decoder's decisions.
//
// A decision is one greedy step of one sequence: the token the baseline chose (a) against the one
// the variant chose (b), both after the same prefix (the prompt and the baseline's earlier tokens).
// The generate check collects them from two places:
//   - teacher-forced: every step at which the variant's logits, teacher-forced on the baseline's
//     tokens, rank another token first than the baseline's do;
//   - free-running: each sequence's first divergence, whose prefix is the baseline's up to there.
// The evidence comes from the baseline's model alone, never from the variant's output: the model in
// float64 (naive attention, each sequence alone, teacher-forced on the baseline's tokens) is the
// reference, and K runs of it with weights and activations rounded at random at the variant's
// precision (model/random_rounding.hpp) show how far that precision moves each decision. A decision
// is excused only when the reference's margin m = s(a) − s(b) is at most the largest shift of that
// margin over the K runs (s: the logit): the choice between a and b is within the noise the
// precision makes. Anything else is a FAIL, as is every change where no study could run.
//
// Grids per precision label: bf16/amp-bf16 and fp16 round everything at their format (the LM head
// too); int8 rounds the block linears' weights per output channel and their inputs per tensor (its
// linears quantize activations), the LM head and attention at fp32's; int8-weight-only rounds the
// block linears' weights per output channel and every activation at fp32's (its activations stay
// fp32); anything else is fp32's reorderings, at fp32's unit roundoff.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model/decoder.hpp"

namespace attnbench {

// The memory the study may take. study_memory_auto: what the host has available when it runs
// (MemAvailable, common/host_memory.hpp) less study_memory_reserve; a config's
// check.study_max_memory gives a fixed budget instead (0: no study). A study whose estimate
// (generation_study_bytes) is over the budget does not run: the changes it would have judged FAIL,
// with the reason. Where MemAvailable cannot be read, the budget is study_memory_fallback.
inline constexpr int64_t study_memory_auto = -1;
inline constexpr int64_t study_memory_reserve = int64_t{1} << 30;
inline constexpr int64_t study_memory_fallback = int64_t{4} << 30;

// The study's peak memory for a precision label, estimated from above: the float64 copy of the
// weights (8 bytes a parameter), the temporaries of rounding the largest parameter on the label's
// grid, and one float64 teacher-forced forward of the longest studied sequence (its logits at
// every position, its cache, naive attention's scores), plus the K + 1 logits (new, vocab) kept
// per studied sequence.
int64_t generation_study_bytes(const DecoderLM& model, const std::string& label, int64_t longest_sequence,
                               int64_t new_tokens, int64_t sequences, int64_t runs);

// The budget a setting gives (study_memory_auto or bytes), and how to name it in a reason;
// `available` is the host's MemAvailable (nullopt: unknown).
struct study_budget {
  int64_t bytes = 0;
  std::string source;  // "the 18.2 GiB available now (MemAvailable) less a 1 GiB reserve; …", "set by check.study_max_memory"
};
study_budget study_budget_of(int64_t setting, std::optional<int64_t> available);

struct generation_decision {
  int64_t sequence = 0;  // the sample's index
  int64_t step = 0;      // 0: the first new token
  int64_t baseline_token = 0, variant_token = 0;
  bool teacher_forced = false;  // found teacher-forced (else: a free-running first divergence)
};

struct generation_study {
  std::string precision_class;  // "fp32", "bf16", "fp16", "int8", "int8-weight-only"
  int64_t runs = 0;             // K
  std::string unavailable;      // why some or all decisions were not studied (those are not excused)
  // Per decision, in the order given: whether its sequence's evidence exists (a sequence already
  // cached is judged even when the fresh ones are over the budget), and if so its margins.
  std::vector<bool> studied;
  std::vector<double> margin;   // the float64 reference's s(a) − s(b); NaN where not studied
  std::vector<double> noise;    // the largest shift of that margin over the K runs; NaN where not studied
  std::vector<bool> excused;    // studied and margin ≤ noise
  double seconds = 0;           // what the study took
};

// The rule itself, on one decision's margins: the reference's, and each perturbed run's.
double margin_noise(double reference_margin, const std::vector<double>& perturbed_margins);

// The evidence of one run, kept between variants: the float64 logits of each sequence a study
// needed, per grid (the reference and the K runs, each (new, vocab)), up to `cache_bytes` of them;
// a later variant of the same grid whose decisions fall in those sequences costs no forward.
// Each run k rounds the weights from its own seed and each sequence's activations from a seed of
// (k, sequence), so a sequence's evidence is the same whichever others are studied with it.
// `prompts[s]` is sequence s's prompt (its ids, unpadded), `baseline_tokens` (N, new) the
// baseline's generated tokens. `max_memory` is the budget's setting (study_memory_auto, or bytes).
class generation_evidence {
 public:
  generation_evidence(const DecoderLM& model, std::vector<std::vector<int64_t>> prompts, torch::Tensor baseline_tokens,
                      int64_t runs, int64_t max_memory = study_memory_auto,
                      int64_t cache_bytes = int64_t{1} << 30);
  // The study of `decisions` for a variant of precision `label` (resolved_precision::label).
  generation_study study(const std::string& label, const std::vector<generation_decision>& decisions);

 private:
  DecoderLM model_;
  std::vector<std::vector<int64_t>> prompts_;
  torch::Tensor tokens_;
  int64_t runs_, max_memory_, cache_bytes_, cached_ = 0;
  std::map<std::string, std::map<int64_t, std::vector<torch::Tensor>>> cache_;  // grid → sequence → K + 1
};

// One study without keeping its evidence (generation_evidence's, for a single variant).
generation_study run_generation_study(const DecoderLM& model, const std::vector<std::vector<int64_t>>& prompts,
                                      const torch::Tensor& baseline_tokens, const std::string& label,
                                      const std::vector<generation_decision>& decisions, int64_t runs,
                                      int64_t max_memory = study_memory_auto);

}  // namespace attnbench
