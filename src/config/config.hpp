// The typed experiment config: what `attnbench run config.json` reads.
//
// The JSON schema (version 1) is documented in the README ("Config reference"); parse_config()
// in config_parser.hpp turns a JSON document into this struct, reporting every problem with
// its JSON path. Defaults live in config_defaults.hpp, each with its reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/sweep.hpp"

namespace attnbench {

inline constexpr int config_schema_version = 1;

enum class precision_kind { fp32, amp_bf16, amp_fp16 };
// custom: one of kernels/'s kernels (kernels/kernel_catalog.hpp), named by the variant's `kernel`.
enum class attention_kind { naive, sdpa, custom };
// The classifier head of a seeded model: random (BERT's N(0, 0.02), margins near zero) or
// decisive (fitted to spread its predictions, model/encoder.hpp).
enum class head_kind { random, decisive };
enum class sdpa_backend { auto_select, flash, efficient, math, cudnn };
enum class padding_kind { max_length, longest };
enum class length_kind { fixed, uniform, lognormal, file };
enum class grouping_kind { sorted, bucketed };
enum class planner_kind { greedy, cost };
enum class checkpoint_policy { none, every, sqrt };
// What the model block builds: the BERT-style encoder classifier (model/encoder.hpp), or a
// decoder-only language model (model/decoder.hpp): GPT-2's layout or Llama's.
enum class model_family { bert, gpt2, llama };

std::string to_string(precision_kind p);   // "fp32", "amp-bf16", "amp-fp16"
std::string to_string(attention_kind a);   // "naive", "sdpa", "custom"
std::string to_string(sdpa_backend b);     // "auto", "flash", "efficient", "math", "cudnn"
std::string to_string(padding_kind p);     // "max_length", "longest"
std::string to_string(length_kind l);      // "fixed", "uniform", "lognormal", "file"
std::string to_string(grouping_kind g);    // "sorted", "bucketed"
std::string to_string(planner_kind p);     // "greedy", "cost"
std::string to_string(checkpoint_policy c);  // "none", "every", "sqrt"
std::string to_string(model_family f);       // "bert", "gpt2", "llama"

// Model shape. A preset fills every field; explicit fields override it.
struct model_config {
  std::string preset;          // "bert-tiny", "bert-mini", "minilm-l6", "bert-base", "bert-large", or "" (custom)
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;             // feed-forward width; 4 × hidden unless given
  int64_t vocab_size = 0;
  int64_t max_positions = 0;
  int64_t type_vocab_size = 0;
  int64_t num_labels = 0;
  double layer_norm_eps = 0;
  attention_kind attention = attention_kind::sdpa;  // default for variants that don't say
  std::string kernel;  // custom attention: the kernel's name; "" = the device's (kernels/kernel_catalog.hpp)
  sdpa_backend backend = sdpa_backend::auto_select;
  bool causal = false;
  uint64_t seed = 0;           // weight initialisation seed
  head_kind head = head_kind::random;  // seeded weights only
  // Real models (resolved paths; "" when absent). weights + config: a Hugging Face BERT, its
  // dimensions from config.json; torchscript: a TorchScript module (config optional, for shape).
  std::string weights;         // model.safetensors
  std::string hf_config;       // config.json
  std::string torchscript;     // model.pt
  // Output the mean of the last hidden state over real tokens, (B, hidden), instead of logits:
  // what a checkpoint without a classifier head is checked by.
  bool mean_pool = false;
  // Decoders (family gpt2 or llama): grouped-query attention's key/value heads (= heads when 0 is
  // resolved away by the parser; llama only) and the rotary embedding's base (llama only).
  model_family family = model_family::bert;
  int64_t kv_heads = 0;
  double rope_theta = 0;
};

// Sample lengths (real tokens per sample, [CLS] and [SEP] included).
struct length_config {
  length_kind kind = length_kind::fixed;
  int64_t length = 0;          // fixed
  int64_t min = 0;             // uniform, lognormal (clip)
  int64_t max = 0;             // uniform, lognormal (clip); <= workload.max_length
  double median = 0;           // lognormal
  double sigma = 0;            // lognormal
};

struct workload_config {
  int64_t samples = 0;
  length_config lengths;
  int64_t max_length = 0;      // longest sequence the model is fed; padding target for padding=max_length
  uint64_t seed = 0;           // token and length seed
  std::string file;            // JSONL of token-id lists; when set, samples/lengths come from it (resolved path)
  std::string text;   // text file, one sample per line, tokenized with `vocab` or `tokenizer` (resolved path)
  std::string vocab;  // WordPiece vocab.txt for `text` with an encoder (resolved path)
  std::string tokenizer;       // byte-level BPE tokenizer.json for `text` with a decoder (resolved path)
  bool lowercase = true;       // lower-case and strip accents before WordPiece (uncased vocabularies)
  double duplicate_fraction = 0;  // share of samples replaced by copies of earlier ones (result-cache work)
};

struct measure_config {
  int64_t warmup = 0;  // untimed passes per variant before the timed ones
  // Timed rounds (one pass per variant each, interleaved round-robin). `repetitions` given: fixed
  // mode, exactly that many. Absent: adaptive mode (stats/round_controller.hpp), rounds added
  // until every interval's relative half-width is at most `target_rel_half_width`.
  bool adaptive = true;
  int64_t repetitions = 0;           // fixed mode: timed rounds
  int64_t min_repetitions = 0;       // adaptive: rounds before the target is tested
  double target_rel_half_width = 0;  // adaptive: of the 95% throughput and speedup intervals
  double max_time_s = 0;             // adaptive: budget of the timed phase, seconds (0: none)
  double min_time_s = 0;             // keep adding rounds until every variant has this much timed time
  int64_t max_repetitions = 0;       // bound on rounds in either mode
  // Build each batch's input tensors (padding, mask, copy to the device) inside the timed pass,
  // as a serving path does, instead of once before timing. Buffer pooling only matters then.
  bool assemble_inputs = false;
};

// Relative-L2 tolerance of a variant's logits against the baseline's, per precision.
struct check_config {
  std::map<precision_kind, double> tolerance;
  // For precisions registered by techniques (config/technique_catalog.hpp), keyed by their value
  // ("bf16"): only those the config sets; the rest use the technique's default.
  std::map<std::string, double> technique_tolerance;
  // When the float64 study runs (runner/decision_study.hpp): "on-change", only for a precision
  // class some variant of which changed a prediction (the only time its evidence is needed);
  // "always", for every class a variant computes in, reporting its noise (how the class
  // tolerances of common/precision_classes.hpp were derived).
  std::string study = "on-change";
};

struct batching_config {
  std::string kind = "static";  // "static" | "dynamic"
  // static: consecutive samples, a fixed batch size, padded to max_length or the batch's longest
  int64_t batch_size = 0;
  padding_kind padding = padding_kind::max_length;
  // dynamic: samples grouped by length, each batch filled up to a budget of padded tokens
  int64_t max_tokens = 0;       // B × S per batch, padding included
  int64_t max_batch_size = 0;
  grouping_kind grouping = grouping_kind::sorted;
  std::vector<int64_t> boundaries;  // bucketed: ascending bucket upper bounds (pad to the bound)
  // How the length-sorted rows are cut into batches: greedy filling, or the cut that minimises the
  // modelled cost of the pass (workload/cost_planner.hpp).
  planner_kind planner = planner_kind::cost;
  // both
  bool pool = false;            // reuse input buffers per shape instead of allocating per batch
  bool cache = false;           // answer repeated token sequences from a result cache
  double max_queue_delay_ms = 0;  // server scenario: how long the oldest request may wait
  int64_t max_batch() const { return kind == "dynamic" ? max_batch_size : batch_size; }
};

// CPU offloading (techniques/offload_executor.hpp): encoder layers live in host memory and are
// streamed to the device one layer ahead of compute.
struct offload_config {
  int64_t prefetch = 0;        // layers copied ahead of the one computing; resident ≤ prefetch + 1
  bool pinned = true;          // page-locked host copies (CUDA only: async copies need them)
  bool host_in_compute_dtype = false;  // host copies of matrices in the autocast dtype ("host_dtype": "compute")
  std::string target;          // "" = the run's device (an accelerator); "cpu" exercises the mechanism on the CPU
};

// Data parallelism (parallel/): a pass's batches are dealt out among workers by their FLOPs, each
// worker with the whole model. "threads": worker threads of this process, one per entry of `devices`;
// "processes": the ranks of `attnbench launch` (or torchrun, srun), one device each.
enum class parallel_mode { threads, processes };
std::string to_string(parallel_mode m);  // "threads", "processes"

struct parallel_config {
  parallel_mode mode = parallel_mode::threads;
  std::vector<std::string> devices;  // threads: one worker per entry ("cpu", "cuda:N"), "all" expanded
  bool all_gpus = false;             // "devices": "all" (empty devices on a machine without a GPU)
  int64_t threads_per_worker = 0;    // CPU intra-op threads of each worker (or rank); 0 = threads ÷ workers
};

// Pipeline model parallel (techniques/pipeline_executor.hpp): the encoder layers split into
// contiguous stages, one device and one worker thread each, fed micro-batches GPipe-style.
struct pipeline_config {
  std::vector<std::string> stages;  // one device per stage: "cpu", "cuda", "cuda:N"
  int64_t micro_batch = 0;          // rows per micro-batch (the batch's last one may have fewer)
  std::vector<int64_t> layers;      // encoder layers per stage; empty: balanced by parameter count
  int64_t threads_per_stage = 0;    // CPU intra-op threads of each stage thread; 0: the caller's / stages
};

// Activation checkpointing (training): which encoder layers form segments whose activations are
// recomputed in backward instead of kept. No effect in inference, where nothing is kept.
struct checkpointing_config {
  checkpoint_policy policy = checkpoint_policy::none;
  int64_t every = 0;  // policy every: layers per segment, 1 ≤ every ≤ model.layers
};

struct variant_config {
  std::string name;
  std::string description;     // one line: how it differs from the baseline (generated when empty)
  precision_kind precision = precision_kind::fp32;
  // "precision": "amp": the runner picks the device's AMP dtype (techniques/amp_choice.hpp) and
  // sets `precision` to it, or leaves fp32 where no reduced precision is faster, with the reason
  // in `precision_choice`, which every report shows.
  bool precision_auto = false;
  std::string precision_choice;
  attention_kind attention = attention_kind::sdpa;
  std::string kernel;  // custom attention: the kernel's name; "" = the device's (kernels/kernel_catalog.hpp)
  sdpa_backend backend = sdpa_backend::auto_select;
  batching_config batching;
  std::optional<offload_config> offload;  // set when the variant has an enabled offload block
  std::optional<pipeline_config> pipeline;  // set when the variant has a pipeline block
  checkpointing_config checkpointing;
  std::optional<parallel_config> parallel;  // set when the variant has a parallel block
  // Technique blocks not handled by the core schema, keyed by their JSON key: a pending variant's
  // blocks as written, and values registered techniques add to core keys ("precision": "bf16",
  // config/technique_catalog.hpp; `precision` is then fp32: no autocast).
  std::map<std::string, nlohmann::json> techniques;
  // When set the variant is listed as SKIPPED with this reason and never run: rows of the
  // article's table whose technique has not landed yet.
  std::optional<std::string> pending;
};

struct output_config {
  std::string dir;
  std::vector<std::string> formats;  // subset of "json", "csv", "md"
};

// The server scenario: requests arrive over time and each variant's batcher serves them.
struct server_config {
  std::vector<double> rates;   // offered requests/s, one run per rate (a sweep when several)
  int64_t requests = 0;        // bound per rate: requests generated
  double max_time_s = 0;       // bound per rate: arrivals stop after this long
  double latency_bound_ms = 0; // the p99 a rate must meet to count as sustainable
  uint64_t seed = 0;           // Poisson arrivals and request→sample choice
  std::string trace;           // replay: "seconds sample_index" per line (resolved path); replaces rates
};

// The train scenario: every batch of a pass is one forward + backward + AdamW step.
struct train_config {
  double learning_rate = 0;
  double weight_decay = 0;
  double dropout = 0;  // probability for every dropout of the model; 0 runs it in eval mode
  uint64_t seed = 0;   // synthetic labels and dropout masks
};

// The generate scenario (decoders): each prompt is prefilled, then max_new_tokens tokens are
// decoded greedily against a KV cache; variants are checked by the tokens they generate and by
// their logits teacher-forced on the baseline's tokens.
struct generate_config {
  int64_t max_new_tokens = 0;
};

// Ranks of a multi-process run (parallel mode "processes"): how long a rank waits for the
// others before it gives up and names the ranks it is missing.
struct distributed_config {
  double timeout_s = 0;        // rendezvous, each collective, and a silent rank's heartbeat
  std::string backend = "auto";  // "gloo", "nccl", "auto" (NCCL for CUDA devices, else Gloo)
};

struct config {
  int schema_version = config_schema_version;
  std::string name;
  std::string description;     // free text: what the config measures and why its model is what it is
  std::string source_path;     // the file it was read from ("" for in-memory)
  model_config model;
  workload_config workload;
  measure_config measure;
  check_config check;
  std::string scenario = "offline";  // "offline" (every sample at once) | "server" | "train" | "generate"
  server_config server;
  generate_config generate;
  train_config train;
  distributed_config distributed;
  std::string device = "auto"; // "cpu", "cuda", "cuda:N", "auto" (as written; resolved by the runner)
  int64_t threads = 0;         // intra-op threads; 0 = LibTorch's default
  std::vector<variant_config> variants;
  std::string baseline;
  output_config output;
  // A parameter sweep (config/sweep.hpp): the experiment runs once per point of the grid.
  std::optional<sweep_config> sweep;
  nlohmann::ordered_json raw;  // the document as read, for the results' environment block
};

const variant_config* find_variant(const config& c, const std::string& name);

}  // namespace attnbench

namespace attnbench {

// What the machine can run, as the runner sees it through LibTorch. The parser is kept free of
// LibTorch (fast to build, fast to test), so the caller passes this in.
struct device_caps {
  int cuda_devices = 0;        // torch::cuda::device_count()
  bool cpu_amp_fp16 = true;    // CPU autocast accepts float16 (LibTorch >= 2.4)
};

}  // namespace attnbench
