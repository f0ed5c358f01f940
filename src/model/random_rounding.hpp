// Random (stochastic) rounding at a precision's unit roundoff: the perturbations of the accuracy
// check's float64 study (runner/decision_study.hpp, issue 37 part 2).
//
// The study runs the model in float64 K times, each time with its weights and its activations
// rounded to the grid of the precision being checked with random rounding: a value between two
// grid points goes up with probability equal to its distance from the lower one, so the rounding
// is unbiased and each run draws its own rounding errors of the size the precision makes. The
// spread of a sample's decision margin over those runs is the evidence a changed prediction may be
// excused by; it comes from the reference and the precision alone, never from the variant's output.
//
// Activations are rounded where the model hands them to or takes them from a matrix product: the
// input and the output of every linear (model/packed_linear.hpp's linear_forward) and the naive
// attention core's operands and results (Q, K, scores, probabilities, V, context). Outside a rounding_scope every hook is a
// no-op (one thread-local read), so no timed pass is touched.
#pragma once

#include <optional>

#include <torch/torch.h>

namespace attnbench {

struct random_rounding {
  // The grid: a floating-point format's fraction bits (bf16 7, fp16 10, fp32 23), or int8 (0):
  // weights on a symmetric per-output-channel grid of 255 steps, activations on a per-tensor
  // asymmetric grid of 256 steps (u8 with a zero point), as the int8 technique quantizes them.
  int fraction_bits = 7;
  bool int8() const { return fraction_bits == 0; }
  // Round the outputs of matrix products too (a floating-point format whose products are stored
  // in it); int8 rounds only the inputs of its linears, whose outputs are dequantized to fp32.
  bool outputs = true;
  // The grid of the attention core's matrix products (scores, probabilities, context): the same
  // format for a floating-point class; fp32's for int8, whose attention runs in fp32.
  int attention_fraction_bits = 7;
};

// Rounds x to r's grid, at random, with gen. Floating-point grids act on float64 or float32 x
// (fraction bits beyond the type's are a no-op); the exponent range is not modelled.
torch::Tensor round_randomly(const torch::Tensor& x, const random_rounding& r, at::Generator& gen);

// A weight matrix (out, in) on the int8 grid (per output channel) or r's floating-point grid.
torch::Tensor round_weight_randomly(const torch::Tensor& w, const random_rounding& r, at::Generator& gen);

// While alive, the model's activation hooks on this thread round at random with r and gen.
class rounding_scope {
 public:
  rounding_scope(const random_rounding& r, at::Generator gen);
  ~rounding_scope();
  rounding_scope(const rounding_scope&) = delete;
  rounding_scope& operator=(const rounding_scope&) = delete;

 private:
  const void* previous_;
};

// The hooks the model calls: an activation about to enter a linear, one a linear just made, and
// an operand or result of the attention core's products. Identity outside a rounding_scope.
torch::Tensor rounded_input(const torch::Tensor& x);
torch::Tensor rounded_output(const torch::Tensor& x);
torch::Tensor rounded_attention(const torch::Tensor& x);
// An operand or result of a product the class computes in floating point even where its linears
// are int8 (a decoder's LM head, which int8 leaves in fp32): attention_fraction_bits' grid, as
// rounded_attention. Identity outside a rounding_scope.
torch::Tensor rounded_float(const torch::Tensor& x);

}  // namespace attnbench
