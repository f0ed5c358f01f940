// Attention heads removed from an encoder (techniques/head_pruning.cpp: "pruning"), physically:
// a removed head's rows of the fused QKV projection (weight and bias) and its columns of the
// output projection are sliced away, the parameters replaced in place by the smaller tensors, so
// Q·Kᵀ, softmax, P·V and both projections compute only the heads kept. SelfAttention reads its
// head count from the QKV weight, so every attention core runs the narrower layer (attention's
// width heads × head_dim then less than hidden). The output equals the unpruned model's with
// the removed heads' context zeroed (their columns of the output projection set to 0).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "model/encoder.hpp"

namespace attnbench {

// Layer `layer`'s heads' weight norms, (heads) float64: the Frobenius norm of a head's rows of
// W_q, W_k and W_v and its columns of W_o together. What "by": "weight-norm" ranks.
torch::Tensor head_weight_norms(const EncoderClassifier& model, int64_t layer);

// The heads layer `layer` holds now (model->config().heads until it is pruned).
int64_t layer_heads(const EncoderClassifier& model, int64_t layer);

// The `k` heads of smallest norm, ascending by index; ties go to the lower index.
std::vector<int64_t> heads_by_weight_norm(const torch::Tensor& norms, int64_t k);

// Removes from layer `layer` the heads `removed` lists (distinct, in range, at least one head
// stays). For a copy of the run's model: the weights change shape.
void remove_heads(EncoderClassifier& model, int64_t layer, const std::vector<int64_t>& removed);

// Zeroes the removed heads' columns of the output projection instead, leaving every shape as it
// is: the same function as remove_heads computes, at the full cost (the tests' reference).
void mask_heads(EncoderClassifier& model, int64_t layer, const std::vector<int64_t>& removed);

// Prunes `model` in place, `k` heads per layer by weight norm; returns the removed heads per layer.
std::vector<std::vector<int64_t>> prune_heads_by_weight_norm(EncoderClassifier& model, int64_t k);

}  // namespace attnbench
