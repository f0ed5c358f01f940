// Activation checkpointing: the encoder's layers are split into segments; each segment runs its
// forward without keeping activations (grad mode off) and keeps only its input. In backward the
// segment is run again from that input with grad mode on, and the gradients of the input and of
// the segment's parameters come from that recomputed graph. Memory for activations drops from
// all L layers to the segment inputs plus one segment's activations (√L segments: O(√L)), for
// one extra forward of the checkpointed layers.
//
// LibTorch has no torch.utils.checkpoint (pytorch#52744), so this is a custom autograd Function.
// The recompute is exact, not approximate:
//   - autocast: the forward's autocast state (enabled, dtype) is captured and re-entered for the
//     recompute, which runs wherever backward runs (the autograd engine may use another thread,
//     and backward is usually called after the autocast scope has closed);
//   - dropout: the default CPU generator's state (and the CUDA one's, on CUDA) is saved before
//     the forward and restored for the recompute, which therefore draws the same masks; the
//     generator is put back afterwards, so later draws are as without checkpointing;
//   - parameters are passed to the Function as tensor arguments, so autograd knows the segment's
//     output depends on them and accumulates the gradients the backward returns for them.
// In inference (grad mode off) nothing is kept anyway and the layers run plainly.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"

namespace attnbench {

// Layers [begin, end) of the encoder.
struct layer_segment {
  int64_t begin = 0;
  int64_t end = 0;
};

// The segments of a policy over `layers` layers: none → none; every n → runs of n layers (the
// last may be shorter); sqrt → ⌈√L⌉ segments of ⌈L / ⌈√L⌉⌉ layers.
std::vector<layer_segment> checkpoint_segments(const checkpointing_config& c, int64_t layers);

// "none", "every 2 layers: 2 segments", "sqrt: 2 segments of 2 layers".
std::string describe_checkpointing(const checkpointing_config& c, int64_t layers);

// Runs layers [begin, end) of `model` on x (B, S, H) as one checkpointed segment.
torch::Tensor checkpointed_layers(EncoderClassifierImpl& model, const torch::Tensor& x,
                                  const attention_mask& mask, int64_t begin, int64_t end);

// Makes model->forward() checkpoint its layers by the policy while grad mode is on (policy none
// restores the plain stack).
void apply_checkpointing(EncoderClassifier& model, const checkpointing_config& c);

}  // namespace attnbench
