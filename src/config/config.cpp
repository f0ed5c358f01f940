#include "config/config.hpp"
#include "config/fp16_training.hpp"

namespace attnbench {

// The strings below are the config schema's spellings: the parser matches against them.

std::string to_string(precision_kind p) {
  switch (p) {
    case precision_kind::amp_bf16:
      return "amp-bf16";
    case precision_kind::amp_fp16:
      return "amp-fp16";
    case precision_kind::fp32:
      break;
  }
  return "fp32";
}

std::string to_string(attention_kind a) {
  switch (a) {
    case attention_kind::naive:
      return "naive";
    case attention_kind::custom:
      return "custom";
    case attention_kind::sdpa:
      break;
  }
  return "sdpa";
}

std::string to_string(sdpa_backend b) {
  switch (b) {
    case sdpa_backend::flash:
      return "flash";
    case sdpa_backend::efficient:
      return "efficient";
    case sdpa_backend::math:
      return "math";
    case sdpa_backend::cudnn:
      return "cudnn";
    case sdpa_backend::auto_select:
      break;
  }
  return "auto";
}

std::string to_string(padding_kind p) { return p == padding_kind::longest ? "longest" : "max_length"; }

std::string to_string(length_kind l) {
  switch (l) {
    case length_kind::uniform:
      return "uniform";
    case length_kind::lognormal:
      return "lognormal";
    case length_kind::file:
      return "file";
    case length_kind::fixed:
      break;
  }
  return "fixed";
}

std::string to_string(grouping_kind g) { return g == grouping_kind::bucketed ? "bucketed" : "sorted"; }

std::string to_string(planner_kind p) { return p == planner_kind::greedy ? "greedy" : "cost"; }

std::string to_string(checkpoint_policy c) {
  switch (c) {
    case checkpoint_policy::every:
      return "every";
    case checkpoint_policy::sqrt:
      return "sqrt";
    case checkpoint_policy::none:
      break;
  }
  return "none";
}

std::string to_string(model_family f) {
  switch (f) {
    case model_family::gpt2:
      return "gpt2";
    case model_family::llama:
      return "llama";
    case model_family::bert:
      break;
  }
  return "bert";
}

std::string to_string(parallel_mode m) { return m == parallel_mode::processes ? "processes" : "threads"; }

const variant_config* find_variant(const config& c, const std::string& name) {
  for (const auto& v : c.variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string fp16_training_refusal() {
  return "fp16 training needs loss scaling, which attnbench's training step does not do: without it fp16's range "
         "(smallest normal 6.1e-5) flushes small gradients to zero and overflows large ones, so the gradients "
         "would be wrong; train in amp-bf16 (bf16 has fp32's range) or fp32";
}

}  // namespace attnbench
