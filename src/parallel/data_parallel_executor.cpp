#include "parallel/data_parallel_executor.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "core/device.hpp"
#include "parallel/shard.hpp"
#include "core/worker_thread.hpp"
#include "stats/summary.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

}  // namespace

struct data_parallel_executor::worker {
  std::unique_ptr<shard_runner> shard;
  int64_t threads = 0;           // asked for (CPU)
  int64_t threads_seen = 0;      // at::get_num_threads() in the worker thread after setting it
  int64_t samples = 0;
  int64_t real_tokens = 0;
  whole_pass last;               // the current pass's result
  std::exception_ptr error;
  std::vector<double> pass_s;  // its own compute time per timed pass
  int64_t seen_generation = 0;
  std::thread thread;
};

data_parallel_executor::data_parallel_executor(const EncoderClassifier& model, const variant_config& variant,
                                               const variant_plan& plan, bool causal, const dataset& data,
                                               const std::vector<int64_t>& rows,
                                               const batching_base& batching, bool assemble_inputs) {
  const parallel_config& pc = *variant.parallel;
  const auto n = static_cast<int64_t>(pc.devices.size());
  const int64_t threads =
      pc.threads_per_worker > 0 ? pc.threads_per_worker : std::max<int64_t>(1, at::get_num_threads() / n);
  auto shards = shard_batches(data, batching.plan(data, rows), model->config(), n);
  for (int64_t i = 0; i < n; ++i) {
    auto w = std::make_unique<worker>();
    const torch::Device device = canonical_device(pc.devices[static_cast<std::size_t>(i)]);
    shard& s = shards[static_cast<std::size_t>(i)];
    w->samples = s.samples;
    w->real_tokens = s.real_tokens;
    w->threads = device.is_cpu() ? threads : 0;
    w->shard = std::make_unique<shard_runner>(replicate(model, device), device, variant, plan, causal, data,
                                              std::move(s.plans), assemble_inputs);
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) {
    int seen = 0;
    w->thread = start_worker_thread(w->threads, [this, &w = *w] { work(w); }, &seen);
    w->threads_seen = seen;
  }
}

data_parallel_executor::~data_parallel_executor() {
  rounds_.stop();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

void data_parallel_executor::work(worker& w) {
#ifdef ATTNBENCH_WITH_CUDA
  std::optional<c10::cuda::CUDAGuard> guard;
  if (w.shard->device().is_cuda()) guard.emplace(w.shard->device().index());
#endif
  for (;;) {
    dispatch_context context;
    if (!rounds_.next_round(w.seen_generation, context)) return;
    whole_pass result;
    std::exception_ptr error;
    try {
      // The dispatcher's memory scope counts this thread's allocations too.
      const c10::DebugInfoGuard adopt(context);
      // Outputs only when the pass keeps them (the check pass): a timed pass does the work the
      // plain executor's does, no gathering, concatenation or device-to-host copy besides. It
      // still ends when every worker has finished its shard.
      result = w.shard->run(keep_outputs_.load());
    } catch (...) {
      error = std::current_exception();
    }
    rounds_.finish([&] {
      w.last = std::move(result);
      w.error = error;
    });
  }
}

whole_pass data_parallel_executor::do_run_pass(bool keep_outputs) {
  keep_outputs_.store(keep_outputs);
  const auto t0 = clock_type::now();
  rounds_.run_round(capture_dispatch_context(), static_cast<int64_t>(workers_.size()));
  whole_pass out;
  std::vector<torch::Tensor> outputs;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    worker& w = *workers_[i];
    if (w.error) {
      try {
        std::rethrow_exception(w.error);
      } catch (const c10::Error& e) {
        throw std::runtime_error(fmt::format("worker {} ({}): {}", i, w.shard->device().str(),
                                             e.what_without_backtrace()));
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("worker {} ({}): {}", i, w.shard->device().str(), e.what()));
      }
    }
    if (timed_phase()) w.pass_s.push_back(w.last.seconds);
    out.batch_ms.insert(out.batch_ms.end(), w.last.batch_ms.begin(), w.last.batch_ms.end());
    out.allocations += w.last.allocations;
    if (w.last.outputs.defined()) {
      outputs.push_back(w.last.outputs);
      ++worker_outputs_gathered_;
    }
    out.sample_index.insert(out.sample_index.end(), w.last.sample_index.begin(), w.last.sample_index.end());
  }
  if (!outputs.empty()) out.outputs = torch::cat(outputs);
  out.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  rounds_.clear_context();  // the scope that it carries may end with this pass
  if (!keep_outputs) {
    out.outputs = torch::Tensor();
    out.sample_index.clear();
  }
  return out;
}

torch::Tensor data_parallel_executor::do_forward(const batch& /*b*/) {
  throw std::logic_error("data_parallel_executor runs whole passes: its shards are its own batches");
}

std::vector<batch_plan> data_parallel_executor::plans() const {
  std::vector<batch_plan> all;
  for (const auto& w : workers_) all.insert(all.end(), w->shard->plans().begin(), w->shard->plans().end());
  return all;
}

std::vector<int64_t> data_parallel_executor::worker_threads() const {
  std::vector<int64_t> out;
  for (const auto& w : workers_) out.push_back(w->threads_seen);
  return out;
}

std::vector<std::vector<double>> data_parallel_executor::worker_pass_seconds() const {
  std::vector<std::vector<double>> out;
  for (const auto& w : workers_) out.push_back(w->pass_s);
  return out;
}

void data_parallel_executor::do_annotate(variant_result& r) {
  parallel_info& p = r.parallel;
  p.used = true;
  p.mode = "threads";
  p.world_size = static_cast<int64_t>(workers_.size());
  std::vector<std::vector<double>> pass_s;
  for (const auto& w : workers_) pass_s.push_back(w->pass_s);
  p.imbalance = median_imbalance(pass_s);
  for (const auto& w : workers_) {
    parallel_worker pw;
    pw.device = w->shard->device().str();
    pw.threads = w->threads_seen;
    pw.samples = w->samples;
    pw.real_tokens = w->real_tokens;
    pw.batches = static_cast<int64_t>(w->shard->plans().size());
    pw.median_s = w->pass_s.empty() ? not_a_number : percentile(w->pass_s, 50);
    pw.samples_per_s = static_cast<double>(w->samples) / pw.median_s;
    p.workers.push_back(pw);
  }
}

}  // namespace attnbench
