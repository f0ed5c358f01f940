#include "check/output_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnbench {
namespace {

// Top-1 agreement, over all samples and over decisive ones (logits only). A sample's flip is a
// coin toss, and excused, only when both hold for that sample (README "Output check"):
//   - its baseline top-2 margin is at most 2·e, e = max_j |out_j − ref_j| its own measured logit
//     error (the exemption margin: the two logits must cross, each moving at most e);
//   - e itself is an error the precision may make: at most embedding_sample_error_factor ×
//     tolerance × the baseline's RMS logit. tolerance × RMS logit is the RMS per-logit error the
//     relative L2 tolerance allows (‖out − ref‖ / ‖ref‖ = RMS error / RMS logit), and 4× leaves a
//     single sample room above that aggregate, as embeddings' per-sample bound does.
// Every other sample is decisive, and a changed prediction on one FAILs: a flip caused by an error
// larger than rounding explains (a planted swap, a wrong kernel on one sample) is never excused.
void check_top1(check_result& r, const torch::Tensor& out, const torch::Tensor& ref,
                std::vector<std::string>& why) {
  const int64_t n = ref.size(0);
  const auto agree = out.argmax(1).eq(ref.argmax(1));  // (N)
  r.samples = n;
  r.predictions_kept = agree.sum().item<int64_t>();
  r.top1_agreement = agree.to(torch::kDouble).mean().item<double>();
  const auto err = std::get<0>((out - ref).abs().max(1));  // (N): each sample's measured logit error
  const double allowed =
      embedding_sample_error_factor * r.tolerance * ref.square().mean().sqrt().item<double>();
  const auto bound = torch::where(err.le(allowed), 2.0 * err, torch::zeros_like(err));  // (N); NaN → 0
  r.decisive_margin = n > 0 ? bound.max().item<double>() : 0.0;
  torch::Tensor decisive;
  if (ref.size(1) >= 2) {
    auto top2 = std::get<0>(ref.topk(2, 1));                               // (N, 2)
    decisive = (top2.select(1, 0) - top2.select(1, 1)).gt(bound);          // (N)
  } else {
    decisive = torch::ones({n}, torch::kBool);
  }
  r.decisive_samples = decisive.sum().item<int64_t>();
  r.exempt_flips = agree.logical_not().logical_and(decisive.logical_not()).sum().item<int64_t>();
  r.top1_agreement_decisive =
      r.decisive_samples > 0 ? agree.masked_select(decisive).to(torch::kDouble).mean().item<double>() : 1.0;
  if (r.top1_agreement_decisive < 1.0) {
    why.push_back(
        fmt::format("top-1 differs on {} of {} decisive samples",
                    std::llround((1.0 - r.top1_agreement_decisive) * static_cast<double>(r.decisive_samples)),
                    r.decisive_samples));
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

check_result compare_outputs(const torch::Tensor& out_in, const torch::Tensor& ref_in, double tolerance,
                             output_kind kind) {
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
  const double ref_norm = ref.norm().item<double>();
  r.rel_l2 = ref_norm > 0 ? diff.norm().item<double>() / ref_norm : diff.norm().item<double>();
  const double denom = out.norm().item<double>() * ref_norm;
  r.cosine = denom > 0 ? (out * ref).sum().item<double>() / denom : (out.equal(ref) ? 1.0 : 0.0);

  std::vector<std::string> why;
  if (r.nonfinite > 0) why.push_back(fmt::format("{} NaN/Inf values", r.nonfinite));
  if (!(r.rel_l2 <= tolerance)) why.push_back(fmt::format("relative L2 error {:.3g} > tolerance {:.3g}", r.rel_l2, tolerance));
  if (kind == output_kind::logits)
    check_top1(r, out, ref, why);
  else
    check_cosines(r, out, ref, why);
  r.status = why.empty() ? status_kind::pass : status_kind::fail;
  r.message = fmt::format("{}", fmt::join(why, "; "));
  return r;
}

}  // namespace attnbench
