// 2^f on f ∈ [−½, ½] by its Taylor series to degree 6 (ln2^k / k!): the truncation error is
// (½·ln2)^7 / 7! ≈ 1.2e-7 relative, below fp32's 6e-8 half-ulp only by a small factor, and far
// below the 1e-5 the attention benchmark asks of fp32. Each code path evaluates it with its own
// vector type (Horner's rule), then multiplies by 2^round(x).
#pragma once

namespace attnbench::kernels {
inline constexpr float exp2_c1 = 0.6931471805599453f;
inline constexpr float exp2_c2 = 0.2402265069591007f;
inline constexpr float exp2_c3 = 0.05550410866482158f;
inline constexpr float exp2_c4 = 0.009618129107628477f;
inline constexpr float exp2_c5 = 0.0013333558146428443f;
inline constexpr float exp2_c6 = 0.00015403530393381606f;
}  // namespace attnbench::kernels
