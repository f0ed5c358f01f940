#include "runner/generation_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>
#include <map>
#include <set>

#include "common/host_memory.hpp"
#include "common/precision_classes.hpp"
#include "model/random_rounding.hpp"
#include "runner/decision_study.hpp"

namespace attnbench {
namespace {

// How the study rounds for a precision label: the weights of the block linears, the other
// parameters, and the activations (the scope's grid).
struct study_grids {
  std::string name;
  random_rounding block_weights, other_weights, activations;
};

study_grids grids_for(const std::string& label) {
  const precision_class& pc = precision_class_of(label);
  const int fp32_bits = precision_class_of("fp32").fraction_bits;
  const random_rounding fp32{fp32_bits, true, fp32_bits};
  if (label == "int8-weight-only") return {"int8-weight-only", random_rounding{0, false, fp32_bits}, fp32, fp32};
  if (pc.fraction_bits == 0)
    return {std::string(pc.name), random_rounding{0, false, fp32_bits}, fp32, random_rounding{0, false, fp32_bits}};
  const random_rounding r{pc.fraction_bits, true, pc.fraction_bits};
  return {std::string(pc.name), r, r, r};
}

// Sequence s teacher-forced on the baseline's tokens, alone: (new, vocab) float64 logits, a copy:
// teacher_forced_logits is a view of the logits at every position, which keeping would keep whole.
torch::Tensor forced(DecoderLM& model, const std::vector<int64_t>& prompt, const torch::Tensor& tokens) {
  const auto ids = torch::tensor(prompt, torch::kLong).unsqueeze(0);
  return teacher_forced_logits(model, ids, tokens.unsqueeze(0), torch::kDouble).squeeze(0).clone();
}

}  // namespace

int64_t generation_study_bytes(const DecoderLM& model, const std::string& label, int64_t longest_sequence,
                               int64_t new_tokens, int64_t sequences, int64_t runs) {
  double parameters = 0, largest = 0;
  for (const auto& p : model->parameters()) {
    parameters += static_cast<double>(p.numel());
    largest = std::max(largest, static_cast<double>(p.numel()));
  }
  const decoder_dims& d = model->dims();
  const double l = static_cast<double>(longest_sequence), vocab = static_cast<double>(d.vocab);
  // The copy; a parameter's rounding (model/random_rounding.cpp) and its float original: onto an
  // int8 grid, the noise and every intermediate of the expression live until it returns (seven
  // floats and the result); at a float format's fraction bits, the integer noise, their sum and the
  // rounded value.
  const study_grids grids = grids_for(label);
  const bool int8 = grids.block_weights.int8() || grids.other_weights.int8();
  double bytes = 8 * parameters + (int8 ? 36 : 16) * largest;
  // One forward: the logits at every position with their rounding's noise, sum and result, the
  // cache, naive attention's scores, softmax and their rounding, the widest activations of a block.
  bytes += 8 * (4 * l * vocab + 2 * static_cast<double>(d.layers * d.kv_heads * d.head_dim) * l +
                5 * static_cast<double>(d.heads) * l * l + 4 * l * static_cast<double>(std::max(d.ffn, d.hidden)));
  // The logits kept: the reference and the K runs of every studied sequence.
  bytes += 8 * static_cast<double>(runs + 1) * static_cast<double>(new_tokens) * vocab * static_cast<double>(sequences);
  return static_cast<int64_t>(std::min(bytes, 9e18));
}

study_budget study_budget_of(int64_t setting, std::optional<int64_t> available) {
  const auto gib = [](int64_t b) { return static_cast<double>(b) / (int64_t{1} << 30); };
  if (setting >= 0) return {setting, "set by check.study_max_memory"};
  if (!available)
    return {study_memory_fallback,
            fmt::format("the {:.3g} GiB used where the host's available memory is unknown (no MemAvailable in "
                        "/proc/meminfo); check.study_max_memory sets another",
                        gib(study_memory_fallback))};
  return {std::max<int64_t>(*available - study_memory_reserve, 0),
          fmt::format("the {:.3g} GiB available now (MemAvailable) less a {:.3g} GiB reserve; "
                      "check.study_max_memory sets another",
                      gib(*available), gib(study_memory_reserve))};
}

double margin_noise(double reference_margin, const std::vector<double>& perturbed_margins) {
  double noise = 0;
  for (double m : perturbed_margins) noise = std::max(noise, std::abs(m - reference_margin));
  return noise;
}

generation_evidence::generation_evidence(const DecoderLM& model, std::vector<std::vector<int64_t>> prompts,
                                         torch::Tensor baseline_tokens, int64_t runs, int64_t max_memory,
                                         int64_t cache_bytes)
    : model_(model),
      prompts_(std::move(prompts)),
      tokens_(baseline_tokens.to(torch::kCPU).to(torch::kLong)),
      runs_(runs),
      max_memory_(max_memory),
      cache_bytes_(cache_bytes) {}

generation_study generation_evidence::study(const std::string& label, const std::vector<generation_decision>& decisions) {
  const auto t0 = std::chrono::steady_clock::now();
  const study_grids grids = grids_for(label);
  generation_study st;
  st.precision_class = grids.name;
  st.runs = runs_;
  const torch::NoGradGuard no_grad;
  const c10::InferenceMode inference;
  auto& cached = cache_[grids.name];
  std::map<int64_t, std::vector<torch::Tensor>> fresh;  // sequence → reference, then the K runs
  for (const auto& d : decisions)
    if (!cached.count(d.sequence)) fresh[d.sequence];
  if (!fresh.empty()) {
    int64_t longest = 0;
    for (const auto& [seq, unused] : fresh)
      longest = std::max(longest, static_cast<int64_t>(prompts_.at(static_cast<std::size_t>(seq)).size()) + tokens_.size(1));
    const int64_t need =
        generation_study_bytes(model_, label, longest, tokens_.size(1), static_cast<int64_t>(fresh.size()), runs_);
    const study_budget budget = study_budget_of(max_memory_, max_memory_ < 0 ? host_memory_available() : std::nullopt);
    if (need > budget.bytes) {
      int64_t parameters = 0;
      for (const auto& p : model_->parameters()) parameters += p.numel();
      const auto gib = [](double b) { return b / (int64_t{1} << 30); };
      const std::string what = fmt::format(
          "it would take about {:.3g} GiB (a float64 copy of the {} parameters, {:.3g} GiB, and {} sequence(s) of up "
          "to {} tokens teacher-forced in float64)",
          gib(static_cast<double>(need)), parameters, gib(8.0 * static_cast<double>(parameters)), fresh.size(),
          longest);
      st.unavailable =
          max_memory_ == 0
              ? fmt::format("no float64 study: check.study_max_memory is 0, which turns it off ({})", what)
              : fmt::format("no float64 study: {}, over its budget of {:.3g} GiB, {} (runner/generation_study.hpp)",
                            what, gib(static_cast<double>(budget.bytes)), budget.source);
      fresh.clear();  // the decisions in sequences already cached are still judged, below
    }
  }
  if (!fresh.empty()) {
    // One float64 copy on the CPU with the naive core (every kernel is a reordering of it); each
    // run overwrites its weights with rounded values of the model's own.
    DecoderLM ref = copy_decoder(model_, torch::kDouble);
    attention_settings naive = model_->attention();
    naive.kind = attention_kind::naive;
    ref->set_attention(naive);
    for (auto& [s, logits] : fresh) logits.push_back(forced(ref, prompts_.at(static_cast<std::size_t>(s)), tokens_[s]));
    std::set<const void*> block_weights;
    for (const auto& l : ref->block_linears()) block_weights.insert(l->weight.unsafeGetTensorImpl());
    auto originals = model_->named_parameters(/*recurse=*/true);
    for (int64_t k = 0; k < runs_; ++k) {
      auto gen = at::make_generator<at::CPUGeneratorImpl>(study_seed + static_cast<uint64_t>(k));
      for (auto& p : ref->named_parameters(/*recurse=*/true)) {
        const auto original = originals[p.key()].to(torch::kCPU).to(torch::kFloat);
        const bool block = block_weights.count(p.value().unsafeGetTensorImpl()) > 0;
        p.value().copy_(block ? round_weight_randomly(original, grids.block_weights, gen)
                              : round_randomly(original, grids.other_weights, gen));
      }
      for (auto& [s, logits] : fresh) {
        const uint64_t seed = study_seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(s + 1) + static_cast<uint64_t>(k);
        const rounding_scope scope(grids.activations, at::make_generator<at::CPUGeneratorImpl>(seed));
        logits.push_back(forced(ref, prompts_.at(static_cast<std::size_t>(s)), tokens_[s]));
      }
    }
    for (auto& [s, logits] : fresh) {
      int64_t bytes = 0;
      for (const auto& t : logits) bytes += static_cast<int64_t>(t.nbytes());
      if (cached_ + bytes > cache_bytes_) continue;
      cached_ += bytes;
      cached[s] = logits;
    }
  }
  for (const auto& d : decisions) {
    const auto it = cached.find(d.sequence);
    const auto fit = fresh.find(d.sequence);
    if (it == cached.end() && fit == fresh.end()) {  // over the budget, not cached
      st.studied.push_back(false);
      st.margin.push_back(std::numeric_limits<double>::quiet_NaN());
      st.noise.push_back(std::numeric_limits<double>::quiet_NaN());
      st.excused.push_back(false);
      continue;
    }
    const std::vector<torch::Tensor>& logits = it != cached.end() ? it->second : fit->second;
    const auto margin_in = [&](const torch::Tensor& l) {
      const auto row = l[d.step];
      return row[d.baseline_token].item<double>() - row[d.variant_token].item<double>();
    };
    std::vector<double> perturbed;
    for (std::size_t k = 1; k < logits.size(); ++k) perturbed.push_back(margin_in(logits[k]));
    st.studied.push_back(true);
    st.margin.push_back(margin_in(logits[0]));
    st.noise.push_back(margin_noise(st.margin.back(), perturbed));
    st.excused.push_back(st.margin.back() <= st.noise.back());
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

generation_study run_generation_study(const DecoderLM& model, const std::vector<std::vector<int64_t>>& prompts,
                                      const torch::Tensor& baseline_tokens, const std::string& label,
                                      const std::vector<generation_decision>& decisions, int64_t runs,
                                      int64_t max_memory) {
  return generation_evidence(model, prompts, baseline_tokens, runs, max_memory, /*cache_bytes=*/0)
      .study(label, decisions);
}

}  // namespace attnbench
