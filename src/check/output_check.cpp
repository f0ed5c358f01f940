#include "check/output_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attnbench {
namespace {

double rel_l2_of(const torch::Tensor& out, const torch::Tensor& ref) {
  const double ref_norm = ref.norm().item<double>();
  const double diff = (out - ref).norm().item<double>();
  return ref_norm > 0 ? diff / ref_norm : diff;
}

// Predictions (top-1 and top-k overlap) and the float64 study's verdict on every change.
void check_predictions(check_result& r, const torch::Tensor& out, const torch::Tensor& ref, output_kind kind,
                       const evidence_source& evidence, std::vector<std::string>& why) {
  const int64_t n = ref.size(0);
  r.samples = n;
  if (n == 0) return;
  const auto s_ref = decision_scores(ref, kind), s_out = decision_scores(out, kind);  // (N, C)
  const int64_t candidates = kind == output_kind::embedding ? n - 1 : ref.size(1);
  if (candidates < 1) {  // one sample has no neighbour: nothing to predict
    r.predictions_kept = n;
    r.top1_agreement = 1.0;
    return;
  }
  const auto a = s_ref.argmax(1), b = s_out.argmax(1);  // (N): the baseline's and the variant's
  const auto agree = a.eq(b);
  r.predictions_kept = agree.sum().item<int64_t>();
  r.top1_agreement = agree.to(torch::kDouble).mean().item<double>();
  const int64_t k = std::min(overlap_k, candidates);
  const auto top_ref = std::get<1>(s_ref.topk(k, 1)), top_out = std::get<1>(s_out.topk(k, 1));  // (N, k)
  const auto shared = top_out.unsqueeze(2).eq(top_ref.unsqueeze(1)).any(2).sum(1);              // (N)
  r.topk = k;
  r.topk_overlap = shared.to(torch::kDouble).mean().item<double>() / static_cast<double>(k);

  const auto changed = agree.logical_not().nonzero().flatten();  // indices of changed predictions
  const int64_t flips = changed.numel();
  r.decisive_samples = n;
  r.top1_agreement_decisive = r.top1_agreement;
  if (flips == 0) return;
  std::shared_ptr<const decision_evidence> ev = evidence ? evidence() : nullptr;
  if (!ev || !ev->unavailable.empty() || ev->perturbed.empty()) {
    r.study_note = ev && !ev->unavailable.empty() ? ev->unavailable : "no float64 study for this check";
    why.push_back(fmt::format("prediction changed on {} of {} samples, none excused ({})", flips, n, r.study_note));
    return;
  }
  TORCH_CHECK(ev->reference.sizes() == ref.sizes(), "the float64 study's reference is ", ev->reference.sizes(),
              ", the outputs ", ref.sizes());
  r.study_class = ev->precision_class;
  r.study_runs = static_cast<int64_t>(ev->perturbed.size());
  const auto ia = a.index_select(0, changed).unsqueeze(1), ib = b.index_select(0, changed).unsqueeze(1);  // (F, 1)
  const auto margin_of = [&](const torch::Tensor& x) {
    const auto s = decision_scores(x, kind).index_select(0, changed);  // (F, C)
    return (s.gather(1, ia) - s.gather(1, ib)).squeeze(1);              // (F)
  };
  const auto m64 = margin_of(ev->reference);
  auto noise = torch::zeros_like(m64);
  for (const auto& p : ev->perturbed) noise = torch::maximum(noise, (margin_of(p) - m64).abs());
  const auto excused = m64.le(noise);
  r.exempt_flips = excused.sum().item<int64_t>();
  r.decisive_samples = n - r.exempt_flips;
  r.top1_agreement_decisive =
      r.decisive_samples > 0 ? static_cast<double>(r.predictions_kept) / static_cast<double>(r.decisive_samples) : 1.0;
  r.decisive_margin = r.exempt_flips > 0 ? m64.masked_select(excused).max().item<double>() : not_a_number;
  if (const int64_t bad = flips - r.exempt_flips; bad > 0) {
    const double least = m64.masked_select(excused.logical_not()).min().item<double>();
    why.push_back(fmt::format(
        "prediction changed on {} of {} samples beyond the float64 study's noise ({} runs at {}'s unit roundoff; "
        "least float64 margin among them {:.3g})",
        bad, n, r.study_runs, r.study_class, least));
  }
}

// Cosine similarity of each sample's embedding with the baseline's, min and mean (embeddings only).
void check_cosines(check_result& r, const torch::Tensor& out, const torch::Tensor& ref,
                   std::vector<std::string>& why) {
  const auto o = out.flatten(1), b = ref.flatten(1);  // (N, D)
  const auto norms = o.norm(2, 1) * b.norm(2, 1);     // (N)
  // A zero vector has no direction: alike when both are zero, unalike otherwise.
  const auto both_zero = o.norm(2, 1).eq(0).logical_and(b.norm(2, 1).eq(0));
  const auto cos =
      torch::where(norms.gt(0), (o * b).sum(1) / norms,
                   torch::where(both_zero, torch::ones_like(norms), torch::zeros_like(norms)));  // (N)
  r.cosine_min = cos.min().item<double>();
  r.cosine_mean = cos.mean().item<double>();
  r.cosine_min_bound = embedding_cosine_bound(r.tolerance);
  if (!(r.cosine_min >= r.cosine_min_bound)) {
    const int64_t below = cos.ge(r.cosine_min_bound).logical_not().sum().item<int64_t>();  // NaN counts
    why.push_back(fmt::format("{} of {} samples have cosine similarity below {:.6f} (least {:.6f})", below,
                              cos.size(0), r.cosine_min_bound, r.cosine_min));
  }
}

}  // namespace

double embedding_cosine_bound(double tolerance) {
  const double e = std::min(1.0, embedding_sample_error_factor * tolerance);
  return std::sqrt(1.0 - e * e);
}

output_kind output_kind_of(const model_config& m, int64_t output_width) {
  if (m.mean_pool) return output_kind::embedding;
  if (!m.torchscript.empty() && output_width != m.num_labels) return output_kind::embedding;
  return output_kind::logits;
}

torch::Tensor decision_scores(const torch::Tensor& out, output_kind kind) {
  const auto x = out.detach().to(torch::kCPU, torch::kDouble).flatten(1);  // (N, D)
  if (kind == output_kind::logits) return x;
  const auto norms = x.norm(2, 1, /*keepdim=*/true);
  const auto e = x / torch::where(norms.gt(0), norms, torch::ones_like(norms));
  auto s = e.matmul(e.t());  // (N, N)
  s.fill_diagonal_(-std::numeric_limits<double>::infinity());
  return s;
}

check_result compare_outputs(const torch::Tensor& out_in, const torch::Tensor& ref_in, double tolerance,
                             output_kind kind, const evidence_source& evidence) {
  check_result r;
  r.output = kind;
  r.tolerance = tolerance;
  if (out_in.sizes() != ref_in.sizes()) {
    r.status = status_kind::fail;
    r.message = fmt::format("output shape {} differs from the baseline's {}", fmt::join(out_in.sizes(), "x"),
                            fmt::join(ref_in.sizes(), "x"));
    return r;
  }
  // Compare in float64 on the CPU: the check must not add rounding of its own.
  const auto out = out_in.detach().to(torch::kCPU, torch::kDouble);
  const auto ref = ref_in.detach().to(torch::kCPU, torch::kDouble);
  r.nonfinite = out.numel() - torch::isfinite(out).sum().item<int64_t>();
  const auto diff = out - ref;
  r.max_abs = diff.abs().max().item<double>();
  r.rel_l2 = rel_l2_of(out, ref);
  const double denom = out.norm().item<double>() * ref.norm().item<double>();
  r.cosine = denom > 0 ? (out * ref).sum().item<double>() / denom : (out.equal(ref) ? 1.0 : 0.0);

  std::vector<std::string> why;
  if (r.nonfinite > 0) why.push_back(fmt::format("{} NaN/Inf values", r.nonfinite));
  if (!(r.rel_l2 <= tolerance)) why.push_back(fmt::format("relative L2 error {:.3g} > tolerance {:.3g}", r.rel_l2, tolerance));
  if (kind == output_kind::embedding) check_cosines(r, out, ref, why);
  if (r.nonfinite == 0) check_predictions(r, out, ref, kind, evidence, why);
  r.status = why.empty() ? status_kind::pass : status_kind::fail;
  r.message = fmt::format("{}", fmt::join(why, "; "));
  return r;
}

}  // namespace attnbench
