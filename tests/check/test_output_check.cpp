#include <catch2/catch.hpp>

#include <cmath>

#include <torch/torch.h>

#include "check/output_check.hpp"

using namespace attnbench;

TEST_CASE("identical outputs pass with zero error", "[check]") {
  auto ref = torch::tensor({{1.0f, -2.0f}, {0.5f, 3.0f}});
  auto r = compare_outputs(ref.clone(), ref, 1e-5);
  CHECK(r.status == status_kind::pass);
  CHECK(r.max_abs == 0);
  CHECK(r.rel_l2 == 0);
  CHECK(r.cosine == Approx(1.0));
  CHECK(r.top1_agreement == 1.0);
}

TEST_CASE("metrics on known values", "[check]") {
  auto ref = torch::tensor({{3.0f, 0.0f}, {0.0f, 4.0f}});  // ||ref|| = 5
  auto out = torch::tensor({{3.0f, 0.0f}, {0.0f, 4.3f}});
  auto r = compare_outputs(out, ref, 0.1);
  CHECK(r.max_abs == Approx(0.3).epsilon(1e-6));
  CHECK(r.rel_l2 == Approx(0.3 / 5).epsilon(1e-6));
  CHECK(r.status == status_kind::pass);
  auto strict = compare_outputs(out, ref, 0.01);
  CHECK(strict.status == status_kind::fail);
  CHECK_THAT(strict.message, Catch::Contains("relative L2 error"));
}

TEST_CASE("a flipped decisive prediction fails; an undecided one does not", "[check]") {
  // Sample 0 is decisive (margin 4); sample 1 is a near tie (margin 0.001).
  auto ref = torch::tensor({{4.0f, 0.0f}, {1.0f, 1.001f}});
  auto tie_flipped = torch::tensor({{4.0f, 0.0f}, {1.001f, 1.0f}});
  auto r = compare_outputs(tie_flipped, ref, 0.01);
  CHECK(r.top1_agreement == 0.5);
  CHECK(r.decisive_samples == 1);
  CHECK(r.top1_agreement_decisive == 1.0);
  CHECK(r.status == status_kind::pass);

  // 99 confident samples, one of them flipped: small in L2 (0.14 relative) but a changed answer.
  auto many = torch::zeros({99, 2});
  many.select(1, 0).fill_(5.0f);
  auto flipped = many.clone();
  flipped[0][0] = 0.0f;
  flipped[0][1] = 5.0f;
  auto f = compare_outputs(flipped, many, 0.2);
  CHECK(f.rel_l2 < 0.2);
  CHECK(f.decisive_samples == 99);
  CHECK(f.top1_agreement_decisive == Approx(98.0 / 99.0));
  CHECK(f.status == status_kind::fail);
  CHECK_THAT(f.message, Catch::Contains("decisive"));
}

TEST_CASE("NaN or Inf always fails", "[check]") {
  auto ref = torch::tensor({{1.0f, 2.0f}});
  auto out = torch::tensor({{1.0f, std::nanf("")}});
  auto r = compare_outputs(out, ref, 1e9);
  CHECK(r.nonfinite == 1);
  CHECK(r.status == status_kind::fail);
  auto inf = compare_outputs(torch::tensor({{INFINITY, 2.0f}}), ref, 1e9);
  CHECK(inf.status == status_kind::fail);
}

TEST_CASE("a shape mismatch fails with a message", "[check]") {
  auto r = compare_outputs(torch::zeros({2, 3}), torch::zeros({2, 2}), 1e-5);
  CHECK(r.status == status_kind::fail);
  CHECK_THAT(r.message, Catch::Contains("2x3"));
}
