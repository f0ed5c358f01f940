// Every default of the config schema, each with its reason, and the model preset table.
// The parser reads defaults only from here; the README's "Config reference" quotes them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/precision_classes.hpp"
#include "config/config.hpp"

namespace attnbench::defaults {

// --- measure ---
inline constexpr int64_t warmup = 1;  // one untimed pass absorbs lazy init and kernel selection
inline constexpr int64_t min_repetitions =
    5;  // adaptive: a t-interval from 4 dof before the target is tested
inline constexpr double target_rel_half_width = 0.02;  // adaptive: ±2%, nvbench's order of magnitude
inline constexpr double max_time_s = 60;         // adaptive: a minute of timed rounds bounds a noisy run
inline constexpr double min_time_s = 0;          // off: the repetition rule alone decides unless asked
inline constexpr int64_t max_repetitions = 100;  // bounds either mode (raised to a fixed `repetitions`)

// --- machine ---
inline constexpr std::string_view device = "auto";  // the GPU when there is one, else the CPU
inline constexpr int64_t threads = 0;               // 0 keeps LibTorch's own choice (one per physical core)

// --- output ---
inline constexpr std::string_view output_dir_prefix = "results/";  // results/<name>, beside committed ones
inline constexpr std::array<std::string_view, 3> formats{"json", "csv", "md"};  // every writer: all cheap

// --- model (shared by all presets: the BERT family's values) ---
inline constexpr int64_t vocab_size = 30522;     // BERT's uncased WordPiece vocabulary
inline constexpr int64_t max_positions = 512;    // BERT's learned position table
inline constexpr int64_t type_vocab_size = 2;    // segments A and B of sentence-pair tasks
inline constexpr int64_t ffn_multiplier = 4;     // ffn = 4 × hidden unless given, as in BERT
inline constexpr double layer_norm_eps = 1e-12;  // BERT's value, so reference outputs match
inline constexpr int64_t num_labels = 2;         // a binary classification head, like GLUE SST-2
inline constexpr attention_kind attention = attention_kind::sdpa;   // what LibTorch users get by default
inline constexpr sdpa_backend backend = sdpa_backend::auto_select;  // PyTorch picks, as in production code
inline constexpr bool causal = false;                               // encoders attend in both directions
inline constexpr uint64_t model_seed = 0;  // fixed: every run initialises the same weights

// --- workload ---
inline constexpr uint64_t workload_seed = 0;     // fixed: every run draws the same samples
inline constexpr int64_t min_sample_length = 2;  // the shortest sample is [CLS] [SEP]
// workload.max_length, when absent, is the longest length the distribution can draw (fixed: length;
// uniform, lognormal: max), so padding to max_length pads no further than needed; with a token
// file it is model.max_positions, the longest sequence the model accepts.

// --- variants ---
inline constexpr precision_kind precision = precision_kind::fp32;  // the reference precision
inline constexpr std::string_view batching_kind = "static";        // the only kind in schema 1
inline constexpr int64_t batch_size = 8;  // small enough for CPU runs, big enough to batch
inline constexpr padding_kind padding = padding_kind::max_length;  // fixed shapes: the worst case
inline constexpr int64_t max_batch_size = 64;  // dynamic: caps short-sample batches; the token budget caps long ones
// dynamic: the cut that minimises modelled cost reaches higher padding efficiency than greedy
// filling at equal or better throughput (README, "Dynamic batching").
inline constexpr planner_kind planner = planner_kind::cost;
// dynamic, planner cost: the per-batch overhead, in token-equivalents (one token through the
// linear layers = 1), where no calibration ran (train scenario, profile, a TorchScript model).
// 64 is the order a CPU measured at bert-mini scale: a fraction of a millisecond of operator
// dispatch per batch against tens of microseconds per token.
inline constexpr double planner_batch_overhead_tokens = 64;
inline constexpr double max_queue_delay_ms = 5;  // server: Triton's typical order of magnitude for a batching window

// --- server scenario ---
inline constexpr int64_t server_requests = 500;   // per rate: enough for a p99 from hundreds of requests
inline constexpr double server_max_time_s = 20;   // per rate: a sweep of a few rates stays within minutes

// --- offload ---
inline constexpr int64_t offload_prefetch = 1;  // one layer ahead: its copy overlaps the current layer's compute
inline constexpr bool offload_pinned = true;    // pageable host memory makes CUDA copies synchronous

// --- parallel ---
inline constexpr double distributed_timeout_s = 300;  // c10d's own default for Gloo collectives is 30 min; a
                                                      // benchmark should give up on a lost rank sooner

// --- pipeline ---
// 0: each stage thread gets the caller's intra-op threads divided by the stage count (at least
// one), so the stages together use the cores one plain forward would.
inline constexpr int64_t pipeline_threads_per_stage = 0;

// --- train scenario ---
inline constexpr double learning_rate = 1e-4;  // within BERT's fine-tuning range (2e-5 to 1e-4)
inline constexpr double weight_decay = 0.01;   // BERT's AdamW weight decay
inline constexpr double dropout = 0;           // off: variants can then be compared exactly
inline constexpr uint64_t train_seed = 0;      // fixed: every run draws the same labels and masks

// --- profile (torch.profiler.schedule's shape; a step is one batch) ---
inline constexpr int64_t profile_skip_first = 0;  // the warm-up below absorbs first-call costs
inline constexpr int64_t profile_wait = 1;        // one unprofiled step: lazy init stays out of the trace
inline constexpr int64_t profile_warmup = 1;      // one prepared step: the profiler's own start-up stays out
inline constexpr int64_t profile_active = 3;      // a few recorded steps: averages, yet a small trace
inline constexpr int64_t profile_repeat = 1;      // one cycle, one trace
inline constexpr bool profile_record_shapes = true;   // shapes make the operator table readable
inline constexpr bool profile_memory = true;          // needed for the per-region peak memory
inline constexpr bool profile_with_flops = true;      // cheap; TensorBoard shows it
inline constexpr bool profile_with_stack = false;     // C++ stacks are costly and mostly LibTorch frames
inline constexpr int64_t profile_top = 20;            // operators in the table: the ones that matter

// --- check: relative L2 against the fp32 baseline, one tolerance per precision class ---
// (common/precision_classes.hpp: derived once from the float64 study; configs may only tighten them)
inline double tolerance(precision_kind p) {
  switch (p) {
    case precision_kind::amp_bf16:
      return precision_class_of("bf16").tolerance;
    case precision_kind::amp_fp16:
      return precision_class_of("fp16").tolerance;
    case precision_kind::fp32:
      break;
  }
  return precision_class_of("fp32").tolerance;
}

// A named model shape; the shared fields above complete it.
struct model_preset {
  std::string_view name;
  int64_t layers;
  int64_t hidden;
  int64_t heads;
};

// Sizes of google-research/bert's small models, sentence-transformers' all-MiniLM-L6-v2, and BERT
// base and large: a ladder from seconds on a laptop CPU to a real GPU workload.
inline constexpr std::array<model_preset, 5> model_presets{{
    {"bert-tiny", 2, 128, 2},
    {"bert-mini", 4, 256, 4},
    {"minilm-l6", 6, 384, 12},
    {"bert-base", 12, 768, 12},
    {"bert-large", 24, 1024, 16},
}};

}  // namespace attnbench::defaults
