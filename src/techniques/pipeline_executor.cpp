#include "techniques/pipeline_executor.hpp"

#include "common/thread_sync.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include "core/worker_thread.hpp"
#include "techniques/precision.hpp"
#include "core/device.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

torch::Device device_of(torch::nn::Module& m) {
  const auto params = m.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

// Copies every parameter of `from` into the same-named parameter of `to` (which may live on
// another device). Both modules have the same structure, or `to` a subset of it.
void copy_parameters(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.named_parameters(/*recurse=*/true);
  for (auto& item : to.named_parameters(/*recurse=*/true)) {
    const torch::Tensor* src = source.find(item.key());
    TORCH_CHECK(src != nullptr, "pipeline: no parameter ", item.key(), " to copy");
    item.value().copy_(*src);
  }
}

}  // namespace

std::vector<int64_t> balanced_split(const std::vector<int64_t>& layer_parameters, int64_t stages) {
  const auto n = static_cast<int64_t>(layer_parameters.size());
  TORCH_CHECK(stages >= 1 && stages <= n, "pipeline: cannot split ", n, " layers into ", stages, " stages");
  std::vector<int64_t> prefix(static_cast<size_t>(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + layer_parameters[static_cast<size_t>(i)];
  const auto sum = [&](int64_t i, int64_t j) { return prefix[static_cast<size_t>(j)] - prefix[static_cast<size_t>(i)]; };
  const auto at = [](auto& table, int64_t k, int64_t j) -> auto& {
    return table[static_cast<size_t>(k)][static_cast<size_t>(j)];
  };

  // 1. The smallest possible largest stage: worst[k][j] over the first j layers in k stages.
  constexpr int64_t none = std::numeric_limits<int64_t>::max();
  std::vector<std::vector<int64_t>> worst(static_cast<size_t>(stages) + 1, std::vector<int64_t>(static_cast<size_t>(n) + 1, none));
  at(worst, 0, 0) = 0;
  for (int64_t k = 1; k <= stages; ++k)
    for (int64_t j = k; j <= n; ++j)
      for (int64_t i = k - 1; i < j; ++i)
        if (at(worst, k - 1, i) != none) at(worst, k, j) = std::min(at(worst, k, j), std::max(at(worst, k - 1, i), sum(i, j)));
  const int64_t bound = at(worst, stages, n);

  // 2. Within that bound, the least sum of squared stage sizes. long double: the squares of
  // bert-large-sized stages pass 2^53 and ties must compare exactly. Scanning i upwards with <=
  // keeps the largest i on ties: the shortest last stage, so earlier stages take the extras.
  constexpr long double infinite = std::numeric_limits<long double>::infinity();
  std::vector<std::vector<long double>> cost(static_cast<size_t>(stages) + 1,
                                             std::vector<long double>(static_cast<size_t>(n) + 1, infinite));
  std::vector<std::vector<int64_t>> start(static_cast<size_t>(stages) + 1, std::vector<int64_t>(static_cast<size_t>(n) + 1, -1));
  at(cost, 0, 0) = 0;
  for (int64_t k = 1; k <= stages; ++k)
    for (int64_t j = k; j <= n; ++j)
      for (int64_t i = k - 1; i < j; ++i) {
        const int64_t s = sum(i, j);
        if (at(cost, k - 1, i) == infinite || s > bound) continue;
        const long double c = at(cost, k - 1, i) + static_cast<long double>(s) * static_cast<long double>(s);
        if (c <= at(cost, k, j)) at(cost, k, j) = c, at(start, k, j) = i;
      }
  std::vector<int64_t> split(static_cast<size_t>(stages));
  for (int64_t k = stages, j = n; k >= 1; --k) {
    const int64_t i = at(start, k, j);
    split[static_cast<size_t>(k) - 1] = j - i;
    j = i;
  }
  return split;
}

// A CUDA event recorded on the producing stage's stream once a message's tensors are written.
struct handoff_event {
#ifdef ATTNBENCH_WITH_CUDA
  at::cuda::CUDAEvent event;
#endif
};

// One micro-batch (or the stop signal) travelling down the pipeline.
struct pipeline_executor::message {
  bool stop = false;
  int64_t index = 0;                 // micro-batch within its batch
  bool first = false, last = false;  // of its batch
  torch::Tensor x;                   // input ids (b, S) into stage 0, hidden (b, S, H) between, output (b, C) after
  torch::Tensor padding_mask;        // (b, S), undefined when the batch has no padding
  attention_mask mask;
  torch::Device device{torch::kCPU};  // where the tensors are
  std::shared_ptr<handoff_event> ready;  // CUDA producers only
  std::string error;                     // set: a stage failed on this micro-batch; no tensors
  dispatch_context context;              // the dispatching thread's: its memory scope counts the stages
  bool timed = false;                    // of a timed pass: its stage time counts
};

// A blocking queue between two threads, and the count of stages that finished the current batch
// (their timing settled), so forward() returns only when the pipeline is empty (common/thread_sync.hpp:
// tested under ThreadSanitizer).
struct pipeline_executor::channel : blocking_queue<message> {};
struct pipeline_executor::flush_counter : completion_counter {};

struct pipeline_executor::stage {
  int64_t index = 0;
  torch::Device device{torch::kCPU};
  int64_t begin = 0, end = 0;  // encoder layers [begin, end)
  bool shares_weights = true;  // the model's own weights, or copies on another device
  std::vector<EncoderLayer> layers;
  EncoderClassifier front{nullptr};  // embeddings (stage 0) and head (last stage): the model or a copy
  int64_t parameters = 0;      // what the stage runs: its layers, + embeddings, + head
  int64_t layer_parameters = 0;
  channel in;
  channel* out = nullptr;
  std::thread thread;
  std::atomic<int> threads_seen{0};
  std::atomic<int64_t> fault_at{-1};
  double busy_ms = 0;  // written by the stage thread; read after a flush
#ifdef ATTNBENCH_WITH_CUDA
  std::optional<c10::cuda::CUDAStream> stream;
  // Events are created on their first record: every one the stage uses is made (and recorded
  // once) when the executor is built, before any pass is timed, and reused batch after batch.
  struct timing_pair {
    at::cuda::CUDAEvent start{cudaEventDefault}, end{cudaEventDefault};
    bool complete = false;  // both recorded for this batch's micro-batch (not one that failed midway)
  };
  std::vector<timing_pair> timing;                        // one per micro-batch of a batch
  std::size_t timing_used = 0;                            // by the current batch
  std::vector<std::shared_ptr<handoff_event>> handoffs;  // one per micro-batch of a batch
  std::size_t handoffs_used = 0;                          // by the current batch
#endif
};

#ifdef ATTNBENCH_WITH_CUDA
void pipeline_executor::grow_event_pools(stage& s, std::size_t n) {
  // Each event is recorded once on the stage's stream, which creates it, and that work is waited
  // for: creation costs no timed pass anything.
  while (s.timing.size() < n) {
    s.timing.emplace_back();
    s.timing.back().start.record(*s.stream);
    s.timing.back().end.record(*s.stream);
  }
  while (s.handoffs.size() < n) {
    s.handoffs.push_back(std::make_shared<handoff_event>());
    s.handoffs.back()->event.record(*s.stream);
  }
  s.stream->synchronize();
}
#endif

namespace {

// Moves a message's tensors to `to`, ordered after the producer; afterwards they may be used on
// `to`'s current stream of the calling thread.
template <class Message>
void receive(Message& m, torch::Device to) {
  std::vector<torch::Tensor*> tensors{&m.x, &m.padding_mask, &m.mask.keep, &m.mask.additive, &m.mask.key_lengths};
  if (m.device == to && !to.is_cuda()) return;
#ifdef ATTNBENCH_WITH_CUDA
  if (m.device.is_cuda() && m.ready) {
    if (m.device == to) {
      // Same device, another stream: wait for the producer, and keep the memory from being reused
      // by the producer's stream while this one still reads it.
      const auto consumer = c10::cuda::getCurrentCUDAStream(to.index());
      m.ready->event.block(consumer);
      for (auto* t : tensors)
        if (t->defined()) t->record_stream(consumer);
      return;
    }
    if (!to.is_cuda()) {
      m.ready->event.synchronize();
      for (auto* t : tensors)
        if (t->defined()) *t = t->to(to);
      m.device = to;
      return;
    }
    // Device to device: the copy runs on a pool stream of the source device (its current stream
    // inside the guard) after the producer's event; the destination's current stream waits for it.
    const auto copy_stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, m.device.index());
    const c10::cuda::CUDAStreamGuard on_source(copy_stream);
    m.ready->event.block(copy_stream);
    for (auto* t : tensors) {
      if (!t->defined()) continue;
      auto moved = t->to(to, /*non_blocking=*/true);
      t->record_stream(copy_stream);
      *t = std::move(moved);
    }
    m.device = to;
    return;
  }
#endif
  // From the CPU (a pageable source: the copy has read it when it returns), or a CPU-only build.
  for (auto* t : tensors)
    if (t->defined()) *t = t->to(to, /*non_blocking=*/to.is_cuda());
  m.device = to;
}

}  // namespace

pipeline_executor::pipeline_executor(EncoderClassifier model, torch::Device device,
                                     const variant_config& variant, const variant_plan& plan, bool causal)
    : model_(std::move(model)),
      device_(device),
      autocast_(plan.precision.autocast),
      how_{variant.attention, variant.backend, causal, variant.kernel},
      cfg_(*variant.pipeline),
      output_(std::make_unique<channel>()),
      flushed_(std::make_unique<flush_counter>()) {
  torch::NoGradGuard no_grad;
  const auto n_stages = static_cast<int64_t>(cfg_.stages.size());
  const int64_t n_layers = model_->num_layers();
  TORCH_CHECK(n_stages >= 1 && n_stages <= n_layers, "pipeline: ", n_stages, " stages for ", n_layers,
              " encoder layers");
  TORCH_CHECK(cfg_.micro_batch >= 1, "pipeline: micro_batch must be >= 1");
  std::vector<int64_t> layer_parameters;
  for (int64_t i = 0; i < n_layers; ++i) layer_parameters.push_back(parameter_count(*model_->layer(i)));
  std::vector<int64_t> split = cfg_.layers.empty() ? balanced_split(layer_parameters, n_stages) : cfg_.layers;
  TORCH_CHECK(static_cast<int64_t>(split.size()) == n_stages &&
                  std::accumulate(split.begin(), split.end(), int64_t{0}) == n_layers,
              "pipeline: the layer counts must give every stage its layers and add up to ", n_layers);
  const int caller_threads = at::get_num_threads();
  threads_per_stage_ = cfg_.threads_per_stage > 0 ? cfg_.threads_per_stage
                                                  : std::max<int64_t>(1, caller_threads / n_stages);

  const torch::Device model_device = device_of(*model_);
  const int64_t all_parameters = parameter_count(*model_);
  int64_t encoder_parameters = 0;
  for (auto p : layer_parameters) encoder_parameters += p;
  const int64_t head_parameters = model_->config().mean_pool
                                      ? 0
                                      : all_parameters - encoder_parameters - parameter_count(*model_->embeddings());
  int64_t next = 0;
  for (int64_t k = 0; k < n_stages; ++k) {
    auto s = std::make_unique<stage>();
    s->index = k;
    s->device = canonical_device(cfg_.stages[static_cast<size_t>(k)]);
    s->begin = next;
    s->end = next += split[static_cast<size_t>(k)];
    s->shares_weights = s->device == model_device;
    const bool first = k == 0, last = k == n_stages - 1;
    for (int64_t i = s->begin; i < s->end; ++i) {
      s->layer_parameters += layer_parameters[static_cast<size_t>(i)];
      if (s->shares_weights) {
        s->layers.push_back(model_->layer(i));
        continue;
      }
      EncoderLayer copy(model_->config());
      copy->eval();
      copy->to(s->device);
      copy_parameters(*model_->layer(i), *copy);
      s->layers.push_back(copy);
    }
    s->parameters = s->layer_parameters + (first ? parameter_count(*model_->embeddings()) : 0) +
                    (last ? head_parameters : 0);
    if (first || last) {
      if (s->shares_weights) {
        s->front = model_;
      } else {
        // The model without its encoder layers: embeddings and head, copied to the stage's device.
        model_config shell = model_->config();
        shell.layers = 0;
        s->front = EncoderClassifier(shell);
        s->front->eval();
        s->front->to(s->device);
        copy_parameters(*model_, *s->front);
      }
    }
#ifdef ATTNBENCH_WITH_CUDA
    if (s->device.is_cuda()) {
      s->stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, s->device.index());
      // Enough events for the largest batch the variant's batching makes (a bound known here).
      const int64_t max_rows = std::max<int64_t>(1, variant.batching.max_batch());
      grow_event_pools(*s, static_cast<std::size_t>((max_rows + cfg_.micro_batch - 1) / cfg_.micro_batch));
    }
#endif
    stages_.push_back(std::move(s));
  }
#ifdef ATTNBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    inputs_ready_ = std::make_shared<handoff_event>();
    const auto stream = c10::cuda::getCurrentCUDAStream(device_.index());
    inputs_ready_->event.record(stream);
    stream.synchronize();
  }
#endif
  for (int64_t k = 0; k < n_stages; ++k)
    stages_[static_cast<size_t>(k)]->out = k + 1 < n_stages ? &stages_[static_cast<size_t>(k) + 1]->in : output_.get();

  // One thread at a time, each with its own intra-op threads (core/worker_thread.hpp).
  for (auto& s : stages_) {
    stage& st = *s;
    int seen = 0;
    st.thread = start_worker_thread(threads_per_stage_, [this, &st] { run_stage(st); }, &seen);
    st.threads_seen = seen;
  }
}

pipeline_executor::~pipeline_executor() {
  if (stages_.empty()) return;
  message stop;
  stop.stop = true;
  stages_.front()->in.push(std::move(stop));
  for (auto& s : stages_)
    if (s->thread.joinable()) s->thread.join();
}

std::vector<std::pair<int64_t, int64_t>> pipeline_executor::stage_layers() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& s : stages_) out.emplace_back(s->begin, s->end);
  return out;
}

std::vector<int> pipeline_executor::stage_threads() const {
  std::vector<int> out;
  for (const auto& s : stages_) out.push_back(s->threads_seen.load());
  return out;
}

void pipeline_executor::inject_fault_for_test(int64_t stage, int64_t micro_batch) {
  stages_.at(static_cast<size_t>(stage))->fault_at = micro_batch;
}

std::string pipeline_executor::stage_name(const stage& s) const {
  return fmt::format("pipeline stage {} ({}, encoder layers {}-{})", s.index, s.device.str(), s.begin, s.end - 1);
}

void pipeline_executor::run_stage(stage& s) {
  // Thread-local state, set here because a new thread inherits none of the caller's (its
  // intra-op thread count was set by start_worker_thread).
  torch::InferenceMode inference;
#ifdef ATTNBENCH_WITH_CUDA
  std::optional<c10::cuda::CUDAStreamGuard> on_stream;
  if (s.stream) on_stream.emplace(*s.stream);  // also makes the stage's device current
#endif

  std::optional<autocast_scope> amp;
  for (;;) {
    message m = s.in.pop();
    if (m.stop) {
      s.out->push(std::move(m));
      return;
    }
    // Autocast per batch, as the plain executor opens it: its weight casts are cached for a batch.
    if (m.first) amp.emplace(autocast_, s.device.type());
    if (m.error.empty()) {
      const auto t0 = clock_type::now();
      try {
        const c10::DebugInfoGuard adopt(m.context);
        compute(s, m);
      } catch (const std::exception& e) {
        const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
        m.error = fmt::format("{} failed on micro-batch {}: {}", stage_name(s), m.index,
                              c10_error ? c10_error->what_without_backtrace() : e.what());
        m.x = m.padding_mask = torch::Tensor();
        m.mask = attention_mask{};
        m.ready.reset();
      }
      if (!s.device.is_cuda() && m.timed) s.busy_ms += ms_since(t0);
    }
    m.context.reset();
    const bool last = m.last;
    s.out->push(std::move(m));
    if (!last) continue;
    amp.reset();
#ifdef ATTNBENCH_WITH_CUDA
    // The batch is flushed: settle its device time (waiting here only holds this stage's thread).
    // A micro-batch that failed midway has an end event never recorded: it has no time to add.
    try {
      for (std::size_t k = 0; k < s.timing_used; ++k) {
        auto& t = s.timing[k];
        if (!t.complete) continue;
        t.end.synchronize();
        s.busy_ms += t.start.elapsed_time(t.end);
      }
    } catch (const c10::Error&) {
      // The failure itself already reached forward() with its micro-batch.
    }
    // The next batch starts after forward() returned, when every consumer of these events has
    // waited on them: they can be recorded again.
    s.timing_used = 0;
    s.handoffs_used = 0;
#endif
    flushed_->add();
  }
}

void pipeline_executor::compute(stage& s, message& m) {
  TORCH_CHECK(s.fault_at.load() != m.index, "injected test fault");
  receive(m, s.device);
#ifdef ATTNBENCH_WITH_CUDA
  if (s.stream && m.timed) {
    // More micro-batches than the largest batch was expected to have: a late event creation.
    if (s.timing_used == s.timing.size()) grow_event_pools(s, s.timing.size() + 1);
    auto& t = s.timing[s.timing_used++];
    t.complete = false;
    t.start.record(*s.stream);
  }
#endif
  const bool first = s.index == 0, last = s.index + 1 == static_cast<int64_t>(stages_.size());
  torch::Tensor x = first ? s.front->embed(m.x) : m.x;  // (b, S, H)
  for (auto& layer : s.layers) {
    RECORD_USER_SCOPE("encoder.layer");
    // Each attention call selects the variant's backend itself: the stages share one selection
    // (core/sdpa_backend_guard.hpp), so concurrent stages neither race on the flags nor wait.
    x = layer->forward(x, m.mask, how_);  // (b, S, H)
  }
  m.x = last ? s.front->head(x, m.padding_mask) : x;  // (b, C) after the head
#ifdef ATTNBENCH_WITH_CUDA
  if (s.stream) {
    if (m.timed) {
      s.timing[s.timing_used - 1].end.record(*s.stream);
      s.timing[s.timing_used - 1].complete = true;
    }
    if (s.handoffs_used == s.handoffs.size()) grow_event_pools(s, s.handoffs.size() + 1);
    m.ready = s.handoffs[s.handoffs_used++];
    m.ready->event.record(*s.stream);
  } else {
    m.ready.reset();
  }
#endif
}

torch::Tensor pipeline_executor::do_forward(const batch& b) {
  const auto t0 = clock_type::now();
  const int64_t rows = b.input_ids.size(0);
  const int64_t n_micro = (rows + cfg_.micro_batch - 1) / cfg_.micro_batch;
  // Masked or not is decided for the whole batch, as the plain executor does, so a micro-batch
  // without padding runs the same kernels as its rows would in the whole batch.
  const bool padded = b.real_tokens < b.input_ids.numel();
  const attention_mask mask =
      make_attention_mask(padded ? b.padding_mask : torch::Tensor(), how_.causal, how_.kind);
  std::shared_ptr<handoff_event> inputs_ready;
#ifdef ATTNBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    // Made with the executor; recorded again per batch once the previous batch has drained.
    inputs_ready = inputs_ready_;
    inputs_ready->event.record(c10::cuda::getCurrentCUDAStream(device_.index()));
  }
#endif
  flushed_->reset();
  const dispatch_context context = capture_dispatch_context();
  const bool timed = timed_phase();
  for (int64_t k = 0; k < n_micro; ++k) {
    const int64_t start = k * cfg_.micro_batch, len = std::min(cfg_.micro_batch, rows - start);
    message m;
    m.index = k;
    m.first = k == 0;
    m.last = k + 1 == n_micro;
    m.x = b.input_ids.narrow(0, start, len);  // (b, S)
    if (padded) m.padding_mask = b.padding_mask.narrow(0, start, len);
    if (mask.keep.defined()) m.mask.keep = mask.keep.narrow(0, start, len);
    if (mask.additive.defined()) m.mask.additive = mask.additive.narrow(0, start, len);
    if (mask.key_lengths.defined()) m.mask.key_lengths = mask.key_lengths.narrow(0, start, len);
    m.mask.causal = mask.causal;
    m.device = b.input_ids.device();
    m.ready = inputs_ready;
    m.context = context;
    m.timed = timed;
    stages_.front()->in.push(std::move(m));
  }
  // Collect every micro-batch, errors included, so that nothing is left in flight.
  std::vector<torch::Tensor> outputs(static_cast<size_t>(n_micro));
  std::string error;
  for (int64_t k = 0; k < n_micro; ++k) {
    message m = output_->pop();
    if (m.error.empty()) {
      try {
        receive(m, device_);
        outputs[static_cast<size_t>(m.index)] = m.x;
      } catch (const c10::Error& e) {
        m.error = fmt::format("pipeline: moving the outputs to {} failed: {}", device_.str(), e.what_without_backtrace());
      }
    }
    if (!m.error.empty() && error.empty()) error = m.error;
  }
  flushed_->wait_for(stage_count());
  if (timed) {  // the stages' busy times count timed passes only: so does the span they share
    ++forwards_;
    micro_batches_ += n_micro;
    forward_ms_ += ms_since(t0);
  }
  TORCH_CHECK(error.empty(), error);
  return torch::cat(outputs, 0);  // (B, C) in the batch's row order
}

void pipeline_executor::do_annotate(variant_result& r) {
  pipeline_info& p = r.pipeline;
  p.used = true;
  p.micro_batch = cfg_.micro_batch;
  p.threads_per_stage = threads_per_stage_;
  const double per_pass = forwards_ > 0 ? static_cast<double>(r.batches) / static_cast<double>(forwards_) : not_a_number;
  p.micro_batches_per_pass = micro_batches_ * per_pass;
  p.pass_ms = forward_ms_ * per_pass;
  double busy = 0;
  for (const auto& s : stages_) {
    pipeline_stage_info st;
    st.device = s->device.str();
    st.layer_begin = s->begin;
    st.layer_end = s->end;
    st.parameters = s->parameters;
    st.layer_parameters = s->layer_parameters;
    st.shares_weights = s->shares_weights;
    st.busy_ms_per_pass = s->busy_ms * per_pass;
    busy += st.busy_ms_per_pass;
    p.stages.push_back(st);
  }
  if (p.pass_ms > 0) p.bubble_fraction = 1.0 - busy / static_cast<double>(stages_.size()) / p.pass_ms;
}

}  // namespace attnbench
