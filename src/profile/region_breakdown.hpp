// The attention breakdown: where an encoder layer's time goes, by the model's labelled regions
// (RECORD_USER_SCOPE in src/model), with the peak memory allocated inside each region.
//
// A region's share is its time summed over every recorded layer ÷ the layers' time. The layer's
// time not inside any labelled region (residual dropout, glue) is its own row, "unlabelled", so
// the shares of one variant add up to 1.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profile/trace_event.hpp"

namespace attnbench {

// The labels the model records. A layer is one "encoder.layer" region.
inline constexpr std::string_view layer_region = "encoder.layer";
// Inside a layer, in forward order. Naive attention records scores … context; SDPA records sdpa;
// a kernel from kernels/ ("attention": "custom") records custom.
inline constexpr std::array<std::string_view, 11> layer_regions{
    "attention.qkv_proj", "attention.scores", "attention.mask",   "attention.softmax",  "attention.dropout",
    "attention.context",  "attention.sdpa",   "attention.custom", "attention.out_proj", "layernorm",
    "ffn"};
// Outside the layers.
inline constexpr std::array<std::string_view, 3> model_regions{"embeddings", "pooler", "classifier"};
inline constexpr std::string_view unlabelled_region = "unlabelled";

struct region_row {
  std::string name;
  int64_t instances = 0;  // times the region was recorded
  int64_t total_ns = 0;
  double share = 0;        // of the layers' time
  int64_t peak_bytes = 0;  // largest working memory inside one instance (allocations − frees, peak)
};

struct region_breakdown {
  std::string variant;
  int64_t seq = 0;       // the padded sequence length of its layers; 0: all of the variant's steps
  int64_t layers = 0;    // layer instances recorded (layers × steps)
  int64_t layer_ns = 0;  // their time
  int64_t layer_peak_bytes = 0;
  std::vector<region_row> rows;  // layer_regions that occurred, in that order, then unlabelled
  int64_t attention_ns = 0;      // the attention.* rows together
  double attention_share = 0;
  // Whether the profiler recorded memory events (profile_memory): without them every peak is
  // unknown, printed n/a (markdown) or left empty (csv), not 0.
  bool memory_recorded = true;
};

// `gpu_memory`: count the memory events of the GPU (a CUDA run) instead of the host's.
region_breakdown make_region_breakdown(const std::string& variant, const std::vector<trace_event>& events,
                                       bool gpu_memory);

// Variants side by side: one row per region, share, time per layer and peak memory per variant.
std::string region_breakdown_markdown(const std::vector<region_breakdown>& variants);
// Long form: variant,seq,region,instances,total_ms,ms_per_layer,share,peak_bytes (seq "all" for a
// breakdown over every step); the encoder.layer row carries the layers' total.
std::string region_breakdown_csv(const std::vector<region_breakdown>& breakdowns);
// Attention's share of a layer by sequence length, variants side by side: one row per length,
// attention share, layer time and the attention regions' peak memory per variant.
std::string attention_by_length_markdown(const std::vector<region_breakdown>& by_length);

}  // namespace attnbench
