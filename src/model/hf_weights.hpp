// Hugging Face BERT checkpoints (safetensors) → the built-in EncoderClassifier.
//
// Name mapping ("bert." prefixes are accepted and ignored):
//   embeddings.{word,position,token_type}_embeddings.weight → embeddings.{word,position,token_type}.weight
//   embeddings.LayerNorm.*                                   → embeddings.norm.*
//   encoder.layer.N.attention.self.{query,key,value}.*       → layers.N.attention.qkv.* (rows q, k, v)
//   encoder.layer.N.attention.output.dense.*                 → layers.N.attention.out_proj.*
//   encoder.layer.N.attention.output.LayerNorm.*             → layers.N.attention_norm.*
//   encoder.layer.N.intermediate.dense.*                     → layers.N.ffn_in.*
//   encoder.layer.N.output.dense.*                           → layers.N.ffn_out.*
//   encoder.layer.N.output.LayerNorm.*                       → layers.N.ffn_norm.*
//   pooler.dense.*, classifier.*                             → pooler.*, classifier.*
// LayerNorm gamma/beta (old TensorFlow-converted checkpoints) are read as weight/bias, and the
// embeddings.position_ids buffer is ignored. The fused QKV projection is the concatenation of
// query, key and value along the output dimension: SelfAttention splits its output that way.
#pragma once

#include <string>
#include <vector>

#include "model/encoder.hpp"
#include "model/safetensors.hpp"

namespace attnbench {

// Copies every parameter of `model` from `file` (converted to float32). Throws input_error
// (path "model.weights") naming the tensor when one is missing, unexpected, of the wrong shape
// or of a non-float dtype. Returns warnings, each naming a tensor, e.g. non-finite values.
std::vector<std::string> load_hf_weights(EncoderClassifierImpl& model, const safetensors_file& file);

// One tensor of `file` as float32 (F32, F16, BF16 or F64 in the file; any other dtype is an
// input_error at "model.weights" naming the tensor). Decoders load through it too (model/decoder.hpp).
torch::Tensor read_float(const safetensors_file& file, const safetensors_tensor& t);

}  // namespace attnbench
