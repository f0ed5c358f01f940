// Weight-only int8 linears (kernels/cpu/int8_gemv.hpp): the shared loop of every code path, over
// a vector traits type V (vec, W lanes, zero, load, fma, reduce_add, and load_i8: W int8 weights
// widened to fp32). Torch-free: each code path's file is compiled with its own -m flags.
//
// y[m, n] = scale[n] · Σ_k x[m, k] · w[n, k] + bias[n], accumulated in fp32.
//
// Decode multiplies one to a few rows by a weight matrix read once: the loop is bound by the bytes
// of w, one per weight (a quarter of fp32's). Each weight vector is loaded and widened once and
// used for R rows; C outputs run side by side so that C·R FMA chains hide the FMA's latency at
// R = 1 (4 chains: one chain alone is latency-bound at a quarter of the FMA rate). C weight rows
// (C·K bytes) stay in L1 while every block of R rows streams past them.
#pragma once

#include <cstdint>

#include "int8_gemv_problem.hpp"

namespace attnbench::kernels {
namespace {

template <class V, int R, int C>
void int8_gemv_group(const int8_gemv_problem& p, int64_t m0, int64_t n) {
  using vec = typename V::vec;
  const int64_t k_end = p.k - p.k % V::W;
  vec acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = V::zero();
  const int8_t* w[C];
  for (int c = 0; c < C; ++c) w[c] = p.w + (n + c) * p.k;
  const float* x[R];
  for (int r = 0; r < R; ++r) x[r] = p.x + (m0 + r) * p.x_stride;
  for (int64_t k = 0; k < k_end; k += V::W) {
    vec wv[C];
    for (int c = 0; c < C; ++c) wv[c] = V::load_i8(w[c] + k);
    for (int r = 0; r < R; ++r) {
      const vec xv = V::load(x[r] + k);
      for (int c = 0; c < C; ++c) acc[r][c] = V::fma(xv, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = V::reduce_add(acc[r][c]);
      for (int64_t k = k_end; k < p.k; ++k) s += x[r][k] * static_cast<float>(w[c][k]);
      const int64_t o = n + c;
      p.y[(m0 + r) * p.y_stride + o] = s * p.scale[o] + (p.bias ? p.bias[o] : 0.0f);
    }
}

template <class V, int C>
void int8_gemv_rows(const int8_gemv_problem& p, int64_t n) {
  int64_t m = 0;
  for (; m + 4 <= p.rows; m += 4) int8_gemv_group<V, 4, C>(p, m, n);
  switch (p.rows - m) {
    case 3: int8_gemv_group<V, 3, C>(p, m, n); break;
    case 2: int8_gemv_group<V, 2, C>(p, m, n); break;
    case 1: int8_gemv_group<V, 1, C>(p, m, n); break;
    default: break;
  }
}

// Outputs [n0, n1) of every row: groups of 4, then one at a time.
template <class V>
void int8_gemv_range(const int8_gemv_problem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) int8_gemv_rows<V, 4>(p, n);
  for (; n < n1; ++n) int8_gemv_rows<V, 1>(p, n);
}

}  // namespace
}  // namespace attnbench::kernels
