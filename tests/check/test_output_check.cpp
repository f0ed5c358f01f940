#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "check/output_check.hpp"

using namespace attnbench;

TEST_CASE("identical outputs pass with zero error", "[check]") {
  auto ref = torch::tensor({{1.0f, -2.0f}, {0.5f, 3.0f}});
  auto r = compare_outputs(ref.clone(), ref, 1e-5, output_kind::logits);
  CHECK(r.status == status_kind::pass);
  CHECK(r.max_abs == 0);
  CHECK(r.rel_l2 == 0);
  CHECK(r.cosine == Approx(1.0));
  CHECK(r.top1_agreement == 1.0);
}

TEST_CASE("metrics on known values", "[check]") {
  auto ref = torch::tensor({{3.0f, 0.0f}, {0.0f, 4.0f}});  // ||ref|| = 5
  auto out = torch::tensor({{3.0f, 0.0f}, {0.0f, 4.3f}});
  auto r = compare_outputs(out, ref, 0.1, output_kind::logits);
  CHECK(r.max_abs == Approx(0.3).epsilon(1e-6));
  CHECK(r.rel_l2 == Approx(0.3 / 5).epsilon(1e-6));
  CHECK(r.status == status_kind::pass);
  auto strict = compare_outputs(out, ref, 0.01, output_kind::logits);
  CHECK(strict.status == status_kind::fail);
  CHECK_THAT(strict.message, Catch::Contains("relative L2 error"));
}

TEST_CASE("without a float64 study every changed prediction fails", "[check]") {
  // Sample 1 is a near tie (margin 0.001): still a changed answer, and nothing independent of the
  // variant says it is within rounding.
  auto ref = torch::tensor({{4.0f, 0.0f}, {1.0f, 1.001f}});
  auto tie_flipped = torch::tensor({{4.0f, 0.0f}, {1.001f, 1.0f}});
  auto r = compare_outputs(tie_flipped, ref, 0.01, output_kind::logits);
  CHECK(r.top1_agreement == 0.5);
  CHECK(r.predictions_kept == 1);
  CHECK(r.exempt_flips == 0);
  CHECK(r.status == status_kind::fail);
  CHECK_THAT(r.message, Catch::Contains("none excused (no float64 study for this check)"));
  // A study that could not run says why, and excuses nothing either.
  auto none = std::make_shared<decision_evidence>();
  none->unavailable = "a TorchScript model has no float64 study";
  auto u = compare_outputs(tie_flipped, ref, 0.01, output_kind::logits, [&] { return none; });
  CHECK(u.status == status_kind::fail);
  CHECK(u.study_note == none->unavailable);
}

TEST_CASE("NaN or Inf always fails", "[check]") {
  auto ref = torch::tensor({{1.0f, 2.0f}});
  auto out = torch::tensor({{1.0f, std::nanf("")}});
  auto r = compare_outputs(out, ref, 1e9, output_kind::logits);
  CHECK(r.nonfinite == 1);
  CHECK(r.status == status_kind::fail);
  auto inf = compare_outputs(torch::tensor({{INFINITY, 2.0f}}), ref, 1e9, output_kind::logits);
  CHECK(inf.status == status_kind::fail);
}

TEST_CASE("a shape mismatch fails with a message", "[check]") {
  auto r = compare_outputs(torch::zeros({2, 3}), torch::zeros({2, 2}), 1e-5, output_kind::logits);
  CHECK(r.status == status_kind::fail);
  CHECK_THAT(r.message, Catch::Contains("2x3"));
}

TEST_CASE("logits: top-1 figures, no per-sample cosines", "[check]") {
  auto ref = torch::tensor({{3.0f, 0.0f}, {0.0f, 4.0f}});
  auto r = compare_outputs(ref.clone(), ref, 1e-5, output_kind::logits);
  CHECK(r.output == output_kind::logits);
  CHECK(r.top1_agreement == 1.0);
  CHECK(r.predictions_kept == 2);
  CHECK(r.topk == 2);  // two labels: the top-5 overlap counts both
  CHECK(std::isnan(r.cosine_min));
  CHECK(std::isnan(r.cosine_min_bound));
}

namespace {

// 100 embeddings of 384 dimensions, as a mean-pooled MiniLM gives: seeded random directions.
torch::Tensor embeddings() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/11);
  return at::randn({100, 384}, gen, torch::kFloat);  // (N, H)
}

// `e` with sample `row` turned by `degrees` in the plane of its dimensions 1 and 2 (its norm kept).
torch::Tensor rotated(torch::Tensor e, int64_t row, double degrees) {
  const double a = degrees * M_PI / 180;
  auto x = e[row][1].item<double>(), y = e[row][2].item<double>();
  e[row][1] = static_cast<float>(x * std::cos(a) - y * std::sin(a));
  e[row][2] = static_cast<float>(x * std::sin(a) + y * std::cos(a));
  return e;
}

}  // namespace

TEST_CASE("embeddings: one sample turned away fails on cosine, where top-1 would pass", "[check]") {
  const auto ref = embeddings();
  // Sample 0 lies mostly in dimensions 1 and 5; turning its dimension-1 part by 30° (towards
  // dimension 2) turns the whole vector by 13.3° (cosine 0.973), beyond bf16's bound (11.5°).
  auto base = ref.clone();
  base[0] *= 0.01f;
  base[0][1] = 10.0f;
  base[0][2] = 0.0f;
  base[0][5] = 20.0f;  // the largest dimension, untouched by the turn: argmax stays 5
  const auto out = rotated(base.clone(), 0, 30);
  const double tol = 5e-2;  // amp-bf16's
  const auto r = compare_outputs(out, base, tol, output_kind::embedding);
  INFO(r.message);
  // One sample in 100: the aggregate relative L2 error stays within the tolerance…
  CHECK(r.rel_l2 < tol);
  // …and an argmax check would have agreed on every sample, this one included.
  CHECK(out.argmax(1).eq(base.argmax(1)).all().item<bool>());
  // The per-sample cosine catches it.
  CHECK(r.cosine_min < r.cosine_min_bound);
  CHECK(r.cosine_min == Approx(std::cos(std::atan2(10.0, 20.0)) * std::cos(std::atan2(10.0, 20.0)) +
                               std::sin(std::atan2(10.0, 20.0)) * std::sin(std::atan2(10.0, 20.0)) *
                                   std::cos(30 * M_PI / 180))
                            .epsilon(1e-3));
  CHECK(r.cosine_mean > r.cosine_min);
  CHECK(r.status == status_kind::fail);
  CHECK_THAT(r.message, Catch::Contains("1 of 100 samples have cosine similarity below 0.979796"));
  // An embedding's prediction is its nearest neighbour: 100 random directions, one turned by 13°,
  // keep every neighbour (their cosines are ~0.1 apart, the turn moves sample 0 by 0.03).
  CHECK(r.output == output_kind::embedding);
  CHECK(r.samples == 100);
  CHECK(r.topk == 5);

  // The same pair judged as logits passes: top-1 agrees everywhere and the L2 error is in bounds.
  const auto as_logits = compare_outputs(out, base, tol, output_kind::logits);
  CHECK(as_logits.status == status_kind::pass);
}

TEST_CASE("embeddings: rounding-sized differences pass, the bound follows the tolerance", "[check]") {
  const auto ref = embeddings();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/12);
  const auto noisy = ref + at::randn(ref.sizes(), gen, torch::kFloat) * 1e-3;  // relative error ~1e-3
  const auto r = compare_outputs(noisy, ref, 1e-2, output_kind::embedding);
  INFO(r.message);
  CHECK(r.status == status_kind::pass);
  CHECK(r.cosine_min > 0.9999);
  CHECK(r.cosine_mean >= r.cosine_min);
  CHECK(r.cosine_min_bound == Approx(std::sqrt(1 - 0.04 * 0.04)));
  CHECK(compare_outputs(ref.clone(), ref, 1e-5, output_kind::embedding).cosine_min == Approx(1.0));
  CHECK(embedding_cosine_bound(1e-5) == Approx(1 - 8e-10).epsilon(1e-15));
  CHECK(embedding_cosine_bound(0.3) == 0.0);  // an error ≥ the vector itself: any direction
  // Non-finite values fail, whatever the kind.
  auto bad = ref.clone();
  bad[3][7] = std::nanf("");
  CHECK(compare_outputs(bad, ref, 1e9, output_kind::embedding).status == status_kind::fail);
  // A zero embedding has no direction: unlike a nonzero baseline.
  auto zero = ref.clone();
  zero[4].zero_();
  CHECK(compare_outputs(zero, ref, 1e9, output_kind::embedding).cosine_min == 0.0);
}

TEST_CASE("output kind follows the model's head", "[check]") {
  model_config m;
  m.num_labels = 2;
  m.hidden = 384;
  CHECK(output_kind_of(m, 2) == output_kind::logits);
  m.mean_pool = true;  // a checkpoint without a classifier head
  CHECK(output_kind_of(m, 384) == output_kind::embedding);
  // TorchScript: whatever the module returns; a width other than the labels' is an embedding.
  model_config scripted;
  scripted.torchscript = "model.pt";
  scripted.num_labels = 2;
  CHECK(output_kind_of(scripted, 2) == output_kind::logits);
  CHECK(output_kind_of(scripted, 32) == output_kind::embedding);
  CHECK(to_string(output_kind::embedding) == "embedding");
  CHECK(to_string(output_kind::logits) == "logits");
}

namespace {

// 128 samples of 2-label logits: near ties (margins 0.001–0.008), small margins (0.05–0.4) and
// decisive ones (1–8), the logits centred on 0 as a zero-sum head gives them.
torch::Tensor graded_logits() {
  auto ref = torch::zeros({128, 2}, torch::kFloat);
  for (int64_t i = 0; i < 128; ++i) {
    const float m = i < 8    ? 0.001f * static_cast<float>(i + 1)
                    : i < 16 ? 0.05f * static_cast<float>(i - 7)
                             : 0.0625f * static_cast<float>(i);
    const float sign = i % 2 == 0 ? 1.0f : -1.0f;  // both labels predicted
    ref[i][0] = sign * m / 2;
    ref[i][1] = -sign * m / 2;
  }
  return ref;
}

// `ref` with the two logits of each listed sample swapped: its prediction flips, its error is its margin.
torch::Tensor swapped(const torch::Tensor& ref, const std::vector<int64_t>& rows) {
  auto out = ref.clone();
  for (int64_t i : rows) {
    out[i][0] = ref[i][1];
    out[i][1] = ref[i][0];
  }
  return out;
}

// A float64 study of `ref` whose K = 8 perturbed runs move each logit by N(0, sigma): the
// decision noise a precision makes, known here by construction and independent of any variant.
evidence_source study_of(const torch::Tensor& ref, double sigma) {
  auto ev = std::make_shared<decision_evidence>();
  ev->precision_class = "bf16";
  ev->reference = ref.to(torch::kDouble);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/5);
  for (int k = 0; k < 8; ++k)
    ev->perturbed.push_back(ev->reference + at::randn(ref.sizes(), gen, torch::kDouble) * sigma);
  return [ev] { return ev; };
}

}  // namespace

TEST_CASE("predictions kept: a change is excused only within the float64 study's noise", "[check][top1]") {
  const auto ref = graded_logits();  // RMS logit ≈ 2.3
  const double tol = 1e-1;           // looser than any class's: the rule, not the L2 bound, decides
  const auto study = study_of(ref, 1e-2);  // margin noise ≈ 1.4e-2 per run

  SECTION("the 15 lowest-margin samples swapped FAIL") {
    // Margins 0.001–0.35, up to 15% of the RMS logit: the old rule (margin ≤ 2 × the sample's own
    // error, error ≤ 4 × tolerance × RMS logit) excused every one, the variant's error excusing itself.
    std::vector<int64_t> lowest;
    for (int64_t i = 0; i < 15; ++i) lowest.push_back(i);
    const auto r = compare_outputs(swapped(ref, lowest), ref, tol, output_kind::logits, study);
    INFO(r.message);
    CHECK(r.rel_l2 < tol);
    CHECK(r.predictions_kept == 113);
    CHECK(r.exempt_flips == 8);  // the near ties, within the noise
    CHECK(r.status == status_kind::fail);
    CHECK_THAT(r.message, Catch::Contains("prediction changed on 7 of 128 samples beyond the float64 study's noise"));
  }
  SECTION("a +0.3 bias on one logit FAILs") {
    // The old rule excused it: its error 0.3 is within 4 × 0.1 × 2.3, and every flipped margin is below 0.6.
    auto out = ref.clone();
    out.select(1, 0) += 0.3f;
    const auto r = compare_outputs(out, ref, tol, output_kind::logits, study);
    INFO(r.message);
    CHECK(r.rel_l2 < tol);
    CHECK(r.predictions_kept < 128);
    CHECK(r.exempt_flips < r.samples - r.predictions_kept);
    CHECK(r.status == status_kind::fail);
  }
  SECTION("near ties flipped within the noise pass and are counted") {
    const auto r = compare_outputs(swapped(ref, {0, 1, 2, 3}), ref, tol, output_kind::logits, study);
    INFO(r.message);
    CHECK(r.predictions_kept == 124);
    CHECK(r.exempt_flips == 4);
    CHECK(r.status == status_kind::pass);
    CHECK(predictions_kept_text(r) == "124 of 128 (4 excused by the float64 study)");
    CHECK(r.decisive_margin == Approx(0.004).epsilon(1e-3));  // the widest excused float64 margin
    CHECK(r.study_runs == 8);
    CHECK(r.study_class == "bf16");
  }
  SECTION("a near tie moved far by a wrong result is excused only by the study, not by its own error") {
    // Sample 0 (margin 0.001) moved by 2: the change of decision is within the noise, so it is
    // excused, but the L2 bound and the study are separate: the aggregate still counts the error.
    auto out = ref.clone();
    out[0][0] = -2.0f;
    out[0][1] = 2.0f;
    const auto r = compare_outputs(out, ref, 1e-2, output_kind::logits, study);
    CHECK(r.rel_l2 > 1e-2);
    CHECK(r.status == status_kind::fail);
  }
}

TEST_CASE("embeddings: predictions are nearest neighbours, judged by the same rule", "[check][top1]") {
  // Ten pairs of near-duplicate directions: each sample's neighbour is its twin.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/21);
  auto base = at::randn({10, 64}, gen, torch::kDouble);
  auto ref = torch::cat({base, base + at::randn({10, 64}, gen, torch::kDouble) * 0.1}).to(torch::kFloat);  // (20, 64)
  const auto s = decision_scores(ref, output_kind::embedding);
  CHECK(std::isinf(s[0][0].item<double>()));
  CHECK(s.argmax(1)[0].item<int64_t>() == 10);
  const auto same = compare_outputs(ref.clone(), ref, 1e-5, output_kind::embedding);
  CHECK(same.predictions_kept == 20);
  CHECK(same.topk_overlap == 1.0);
  // Sample 0 moved onto sample 1's twin: its neighbour changes, far beyond any rounding.
  auto out = ref.clone();
  out[0] = ref[11] * 1.01f;
  const auto r = compare_outputs(out, ref, 1.0, output_kind::embedding, study_of(ref, 1e-4));
  INFO(r.message);
  CHECK(r.predictions_kept < 20);
  CHECK(r.exempt_flips == 0);
  CHECK(r.status == status_kind::fail);
  CHECK(r.topk_overlap < 1.0);
}
