// The one result record of a run. Every writer (json, csv, markdown) reads only this; the
// runner and the checker fill it. Field names are the results.json schema (README "Results
// schema"): CI jobs and later issues read them, so rename nothing without bumping the version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/metric.hpp"
#include "stats/summary_types.hpp"

namespace attnbench {

// 2: statistics centred on the geometric mean (summary::geomean and its interval, speedup as the
// geometric mean of per-round ratios), check.output and per-sample cosines. Version 1 files are
// still read: their statistics are recomputed from their samples (result_json.cpp).
// 3: variants carry the open metric record (`metrics`, report/metric.hpp) that techniques fill.
// Version 2 files are read with no metrics.
inline constexpr int results_schema_version = 3;
inline constexpr int oldest_results_schema_version = 1;

// oom and timeout: the variant hit a resource limit (README "What happens when things go wrong"):
// not a wrong output, but not measured either; the other variants are.
enum class status_kind { pass, fail, skipped, oom, timeout };
std::string to_string(status_kind s);  // "PASS", "FAIL", "SKIPPED", "OOM", "TIMEOUT"
// OOM or TIMEOUT.
bool hit_limit(status_kind s);

// What the model outputs, which decides how outputs are compared (check/output_check.hpp).
enum class output_kind {
  logits,     // classifier logits (N, num_labels): top-1 agreement means something
  embedding,  // a mean-pooled embedding (N, hidden): compared by per-sample cosine, no argmax
};
std::string to_string(output_kind k);  // "logits", "embedding"

struct check_result {
  status_kind status = status_kind::skipped;
  std::string message;            // why FAIL (or SKIPPED); empty on PASS
  output_kind output = output_kind::logits;
  double tolerance = not_a_number;  // relative-L2 bound applied
  double max_abs = not_a_number;
  double rel_l2 = not_a_number;   // ||out - ref|| / ||ref||
  double cosine = not_a_number;   // of all outputs as one vector
  double cosine_min = not_a_number;        // per sample (row), the least similar sample
  double cosine_mean = not_a_number;       // per sample, mean over samples
  double cosine_min_bound = not_a_number;  // embeddings: cosine_min must reach it; NaN for logits
  // Predictions (check/output_check.hpp): the top-1 class of logits, or an embedding's nearest
  // neighbour among the run's other samples (semantic search).
  double top1_agreement = not_a_number;           // fraction of samples, 0..1
  double top1_agreement_decisive = not_a_number;  // over the samples whose change was not excused
  int64_t decisive_samples = 0;                   // samples less the excused changes
  // The largest float64 margin among the excused changes (NaN when none was excused): no change
  // with a wider margin in the float64 reference was excused.
  double decisive_margin = not_a_number;
  int64_t samples = 0;           // N compared
  int64_t predictions_kept = 0;  // samples whose prediction is the baseline's
  int64_t exempt_flips = 0;      // changed predictions the float64 study excused
  int64_t topk = 0;              // k of the top-k overlap (5, or fewer candidates)
  double topk_overlap = not_a_number;  // mean over samples of |top-k ∩ baseline's top-k| / k
  // The float64 study behind the excuses (runner/decision_study.hpp): its precision class and
  // number of randomly rounded runs, or why there was none. Empty/0 when no change needed it.
  std::string study_class;
  int64_t study_runs = 0;
  std::string study_note;
  // The model checked has random weights (a seeded preset): its PASS is a numerical check, not
  // evidence about a real model's accuracy (set by the runner; reports say so beside the status).
  bool random_weights = false;
  int64_t nonfinite = 0;          // NaN/Inf values in the variant's outputs
};

// Whether `c` counted predictions: outputs compared with the baseline, by a run that counts them.
bool has_prediction_count(const check_result& c);
// "126 of 128" (and " (2 excused by the float64 study)" when the rule excused some); "n/a" without a count.
std::string predictions_kept_text(const check_result& c);
// The rule that lets a changed prediction pass, one sentence for reports (check/output_check.hpp).
extern const char* const top1_rule_text;
// What a prediction is, for reports: the top-1 class, or the nearest neighbour by cosine.
std::string prediction_text(output_kind kind);
// A verdict with its basis: "PASS (numerical check, random weights)" for a random-weight model.
std::string status_text(status_kind status, const check_result& c);

// One offered request rate of the server scenario (dynamic batching issue): requests arrive by a
// seeded Poisson process (or a trace) and a batcher groups them; latency is completion − arrival.
struct server_point {
  double offered_rate = not_a_number;   // requests/s asked for (NaN for a trace replay)
  double achieved_rate = not_a_number;  // completed requests / (last completion − first arrival)
  int64_t requests = 0;                 // completed
  double p50_ms = not_a_number;
  double p90_ms = not_a_number;
  double p99_ms = not_a_number;
  double p999_ms = not_a_number;
  double mean_batch_size = not_a_number;  // a decoder's: sequences per decode step
  bool within_bound = false;            // p99 ≤ the config's latency bound (a decoder's: TTFT p99)
  // A decoder's generation (runner/generate_server.hpp); NaN for an encoder. p50…p999 above are
  // then end-to-end: last token − arrival.
  double ttft_p50_ms = not_a_number;    // time to first token: first token − arrival
  double ttft_p99_ms = not_a_number;
  double itl_p50_ms = not_a_number;     // inter-token latency: gaps between a request's tokens
  double itl_p99_ms = not_a_number;
  double output_tokens_per_s = not_a_number;
  bool generation() const { return std::isfinite(ttft_p50_ms); }
};

// CPU offloading (offload issue): encoder layers streamed from host memory to the device.
// Byte counts are exact accounting of the tensors the executor holds and copies; times are per
// timed pass (CUDA: events on the copy and compute streams; the CPU mechanism: a host clock).
struct offload_info {
  bool used = false;
  std::string target;                     // where layers are streamed to: "cuda:0", or "cpu" (mechanism)
  std::string host_dtype;                 // "fp32", or the autocast dtype the host matrices are kept in
  bool pinned = false;                    // page-locked host copies
  int64_t layers = 0;                     // offloaded layers
  int64_t prefetch = 0;
  int64_t resident_bound = 0;             // prefetch + 1, at most the layer count
  int64_t max_resident_layers = 0;        // the most offloaded layers on the device at once, measured
  int64_t full_weight_bytes = 0;          // every parameter on the device (no offload)
  int64_t resident_weight_bytes = 0;      // peak with offload: resident parameters + layer slots
  int64_t bytes_per_pass = 0;             // copied: host → device, plus gradients device → host in training
  int64_t d2h_bytes_per_pass = 0;         // of them, gradients device → host (training; 0 in inference)
  std::string optimizer;                  // training: where the optimizer keeps its state and steps; "" in inference
  double copy_ms_per_pass = not_a_number;     // time copies took
  double exposed_ms_per_pass = not_a_number;  // of it, time compute waited for a copy
  double hidden_share = not_a_number;         // 1 − exposed / copy: the share overlapped with compute
  double h2d_gb_per_s = not_a_number;         // host → device bytes / host → device copy time
};

// Data parallelism (parallel issue): a pass's batches dealt out by FLOPs among workers (threads
// of this process, or ranks of a multi-process run), each with the whole model.
struct parallel_worker {
  std::string device;                   // "cpu", "cuda:1"; a rank's: its device
  std::string host;                     // ranks: the host it ran on ("" for threads)
  int64_t threads = 0;                  // intra-op threads it ran with (CPU)
  int64_t samples = 0;                  // in its shard
  int64_t real_tokens = 0;              // in its shard
  int64_t batches = 0;                  // per pass
  double median_s = not_a_number;       // its own compute time per pass (no dispatch, no gather),
                                        // median over the timed passes only
  double samples_per_s = not_a_number;  // samples / median_s: this worker's own throughput
  int64_t peak_memory_bytes = -1;       // ranks: the rank's own check-pass peak (-1: not measured)
};

struct parallel_info {
  bool used = false;
  std::string mode;            // "threads" | "processes"
  int64_t world_size = 0;      // workers (threads) or ranks (processes)
  std::string backend;         // processes: "gloo" | "nccl"; threads: ""
  std::vector<parallel_worker> workers;
  // The slowest worker's busy time over the mean, median over passes: 1 when the shards finish
  // together; the pass waits for the slowest.
  double imbalance = not_a_number;
};

// Pipeline model parallel (issue #6): the encoder layers split into stages, one device and one
// thread each, fed micro-batches. Times are per timed pass (averaged over the timed passes'
// forwards only, scaled to one pass): CPU stages by a host clock around each micro-batch's work,
// CUDA stages by events on the stage's stream.
struct pipeline_stage_info {
  std::string device;            // "cpu", "cuda:1"
  int64_t layer_begin = 0;       // encoder layers [layer_begin, layer_end)
  int64_t layer_end = 0;
  int64_t parameters = 0;        // what the stage runs: its layers, + embeddings (stage 0), + head (last)
  int64_t layer_parameters = 0;  // its encoder layers only: what the balanced split balances
  bool shares_weights = true;    // the model's own weights (same device), or copies on the stage's device
  double busy_ms_per_pass = not_a_number;  // time the stage spent computing
};

struct pipeline_info {
  bool used = false;
  int64_t micro_batch = 0;              // rows per micro-batch
  double micro_batches_per_pass = not_a_number;
  int64_t threads_per_stage = 0;        // intra-op threads of each stage thread
  std::vector<pipeline_stage_info> stages;
  double pass_ms = not_a_number;        // the pipeline's wall time per pass (its forwards, summed)
  double bubble_fraction = not_a_number;  // 1 − mean stage busy / pass_ms, measured
};

// The train scenario (checkpointing issue): each pass is one forward + backward + AdamW step per
// batch from the same initial weights and optimizer state; the check pass's numbers are these.
struct train_result {
  std::string checkpointing;  // the policy as run, e.g. "sqrt: 2 segments of 2 layers"
  int64_t steps = 0;          // optimizer steps per pass (one per batch)
  double dropout = 0;
  std::vector<double> losses;  // per step of the check pass
  // against the baseline after the check pass's steps (relative L2; NaN for the baseline)
  double loss_rel_err = not_a_number;   // over the per-step losses
  double grad_rel_l2 = not_a_number;    // the last step's gradients, every parameter
  double weight_rel_l2 = not_a_number;  // the updated weights after the last step
  // memory (README "Peak memory" for how): fixed sizes, and the measured activation peak
  int64_t weight_bytes = -1;
  int64_t gradient_bytes = -1;
  int64_t optimizer_state_bytes = -1;
  int64_t activation_peak_bytes = -1;  // peak above the level at forward start, over every step
};

// How a variant's timed rounds ended (README "How it measures": adaptive repetitions).
struct repetition_info {
  int64_t rounds = 0;                               // timed passes it ran
  double throughput_rel_half_width = not_a_number;  // (hi − lo) / 2 / centre of its throughput interval
  double speedup_rel_half_width = not_a_number;     // the same for its speedup (NaN: baseline)
  bool target_met = false;  // adaptive: both at most the run's target; fixed mode: no target, false
  bool noisy = false;       // adaptive and the target was missed when the rounds stopped
};

struct variant_result {
  std::string name;
  std::string description;        // how it differs from the baseline
  bool is_baseline = false;
  status_kind status = status_kind::skipped;
  std::string reason;             // for SKIPPED and FAIL
  std::vector<std::string> notes;  // caveats every report shows, e.g. a technique with no effect here
  // what ran
  std::string precision;          // "fp32", "amp-bf16", "amp-fp16", "bf16", "fp16", "amp (bf16)", …
  // "fp32", "bf16" or "fp16": the dtype of its matmuls, whose measured ceiling it is held to
  // ("" in files written before it: result_json.cpp derives it from `precision`)
  std::string compute_dtype;
  std::string attention;          // "naive" | "sdpa"
  std::string sdpa_backend;       // requested backend ("auto", "flash", ...), "" for naive
  std::string sdpa_backend_used;  // what LibTorch chose for the first batch, "" for naive
  std::string batching;           // e.g. "static bs=8 pad=max_length"
  int64_t batches = 0;            // per pass
  int64_t real_tokens = 0;        // per pass, non-padding
  int64_t computed_tokens = 0;    // per pass, padding included
  double padding_efficiency = not_a_number;  // real_tokens / computed_tokens
  double mean_batch_size = not_a_number;     // samples per batch, per pass
  // buffer pooling and the result cache (dynamic batching issue); NaN when not in use
  double allocations_per_batch = not_a_number;  // input-buffer allocations per batch in a timed pass
  double cache_hit_rate = not_a_number;         // share of samples answered from the result cache
  // server scenario: one point per offered rate, and the highest rate whose p99 met the bound
  std::vector<server_point> server;
  double max_sustainable_rate = not_a_number;
  std::optional<train_result> train;  // the train scenario only
  // measurements
  summary throughput;             // samples/s per repetition
  summary tokens_per_s;           // real tokens/s per repetition
  speedup_summary speedup;        // against the baseline's rounds
  latency_summary latency_ms;
  int64_t peak_memory_bytes = -1;  // -1: not measured (peak_memory_method then says why)
  std::string peak_memory_method;
  repetition_info repetition;
  double flops_per_pass = not_a_number;  // analytic, padded tokens included (README "FLOP count")
  double achieved_gflops = not_a_number;  // flops_per_pass × passes/s (geomean) / 1e9
  double ceiling_share = not_a_number;   // achieved_gflops / measured matmul ceiling of its dtype
  check_result check;
  // What the variant's techniques measured about their own work (report/metric.hpp): rendered by
  // every writer without knowing the technique. The blocks below predate it and keep their
  // structured tables (per worker, per stage).
  std::vector<metric> metrics;
  offload_info offload;
  parallel_info parallel;
  pipeline_info pipeline;
};

// The matmul dtype a precision label stands for ("amp-bf16" → "bf16", "amp (fp32)" → "fp32"),
// for files written before variants recorded it; "" for a label it does not know.
std::string compute_dtype_of_label(const std::string& precision);

struct matmul_ceiling {
  std::string dtype;              // "fp32", "bf16", "fp16"
  int64_t size = 0;               // n of the n×n×n GEMM that reached the best
  double gflops = not_a_number;   // best of the timed runs over every size
  std::vector<int64_t> sizes{};   // the n measured (empty in files written before sizes were recorded)
  int repeats = 0;                // timed calls of the winning shape, after one untimed (0: not recorded)
  double measure_s = not_a_number;  // wall time of measuring this ceiling, warm-ups included
  std::vector<std::string> shapes{};  // every product shape measured (squares and the model's)
  std::string shape{};              // the one that reached the best
  // (third-best − best) / best of the winning shape's timed calls (NaN: not recorded): a variant's
  // share above 100% by more than this is a bug in the ceiling (runner/matmul_ceiling.hpp)
  double spread = not_a_number;
};

struct environment_info {
  std::string harness_version;
  std::string git_commit;
  std::string torch_version;
  std::string cuda_version;       // "" when LibTorch was built without CUDA
  std::string device;             // resolved, e.g. "cpu", "cuda:0"
  std::string device_name;        // CPU model or GPU name
  std::string cpu_model;
  // common/cpu_info.hpp: vendor, family, model, stepping ("" in files written before it), and
  // the vector and matrix features that decide what reduced precision costs on this CPU
  std::string cpu_id;
  std::vector<std::string> cpu_features;
  int64_t cpu_count = 0;          // logical CPUs online (0: unknown)
  std::string cpu_caches;         // "L1d 32K, L1i 32K, L2 512K, L3 32768K" per instance; "" unknown
  // CUDA devices ("" on the CPU): compute capability "9.0", driver "13.0", and the dtypes its
  // tensor cores multiply (amp_choice.hpp: from the capability)
  std::string gpu_capability;
  std::string gpu_driver;
  std::vector<std::string> gpu_tensor_core_dtypes;
  int64_t threads = 0;
  std::string hostname;
  std::string date;               // ISO 8601 UTC, start of the run
  std::string config_path;
  std::string config_hash;        // sha256 of the canonical config JSON
  std::vector<matmul_ceiling> ceilings;
  nlohmann::ordered_json config;  // the config as given
};

struct model_info {
  std::string preset;
  int64_t layers = 0, hidden = 0, heads = 0, ffn = 0, vocab_size = 0, max_positions = 0, num_labels = 0;
  int64_t parameters = 0;
  std::string weight_checksum;    // identical for every variant: same seed, same weights
  bool causal = false;
  // "bert" (the encoder classifier), "gpt2" or "llama" (decoders, the generate scenario); "" in
  // files written before decoders, which were all bert. kv_heads: grouped-query attention's key/value heads (0: =heads; files say the resolved count).
  std::string family;
  int64_t kv_heads = 0;
};

struct workload_info {
  int64_t samples = 0;
  int64_t max_length = 0;
  std::string lengths;            // e.g. "lognormal(median=128, sigma=0.6) clipped to [16, 512]"
  int64_t real_tokens = 0;
  int64_t min_length = 0, max_length_seen = 0;
  double mean_length = not_a_number;
  // A text workload's tokenizer file and the FNV-1a 64 of its bytes ("" for token ids, and in
  // files written before they were recorded).
  std::string tokenizer;
  std::string tokenizer_fnv1a64;
};

// What the accuracy check ran on (issue 37 part 3): the model, its weights, its head, the
// samples, what a prediction is and the rule that may excuse a changed one.
struct check_basis {
  std::string weights;          // "checkpoint <path>" or "random (seed N)"
  bool random_weights = false;  // a seeded preset: its PASS is a numerical check only
  std::string weight_checksum;  // model_info's, repeated so the record stands alone
  std::string head;             // "none: mean-pooled embeddings", "decisive (fitted ...)", "random", ...
  std::string corpus;           // the workload's samples (a text file with its fnv1a64, or the generator)
  std::string predictions;      // prediction_text(): top-1 class or nearest neighbour
  std::string rule;             // top1_rule_text
  int64_t study_runs = 0;       // K of the float64 study
};

struct run_result {
  int schema_version = results_schema_version;
  std::string name;
  std::string baseline;
  environment_info environment;
  model_info model;
  check_basis check;
  workload_info workload;
  int64_t warmup = 0;
  int64_t repetitions = 0;                      // timed rounds run (the most any variant ran)
  std::string repetition_mode = "fixed";        // "adaptive" | "fixed"
  double target_rel_half_width = not_a_number;  // adaptive: the target of every interval
  double max_time_s = not_a_number;             // adaptive: the timed phase's budget (NaN: none)
  std::string stop_reason;                      // why the rounds stopped, e.g. "target met"
  std::string scenario = "offline";             // "offline" | "server" | "train"
  double latency_bound_ms = not_a_number;       // server: the p99 bound of the rate sweep
  std::vector<variant_result> variants;
  // false when the run was stopped before the end (a signal): the reports hold what was measured
  // up to then, and incomplete_reason says what stopped it and where
  bool complete = true;
  std::string incomplete_reason;
  bool all_passed() const;        // no variant FAIL (SKIPPED does not fail a run)
  bool any_limit_hit() const;     // some variant OOM or TIMEOUT
};

}  // namespace attnbench
