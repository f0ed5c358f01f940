#include "parallel/distributed_executor.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "core/process_device.hpp"
#include "parallel/rank_pass_hook.hpp"
#include "parallel/shard.hpp"
#include "stats/summary.hpp"

namespace attnbench {
namespace {

// Sets this thread's intra-op threads for a scope (OpenMP: the calling thread's team size).
class thread_count_scope {
 public:
  explicit thread_count_scope(int64_t threads) : previous_(at::get_num_threads()), active_(threads > 0) {
    if (active_) at::set_num_threads(static_cast<int>(threads));
  }
  ~thread_count_scope() {
    if (active_) at::set_num_threads(previous_);
  }
  thread_count_scope(const thread_count_scope&) = delete;
  thread_count_scope& operator=(const thread_count_scope&) = delete;

 private:
  int previous_;
  bool active_;
};

}  // namespace

torch::Device distributed_executor::rank_device(const distributed_world& world, torch::Device run_device) {
  return process_device(run_device, world.env().local_rank, static_cast<int>(torch::cuda::device_count()));
}

distributed_executor::distributed_executor(distributed_world& world, const EncoderClassifier& model,
                                           torch::Device run_device, const variant_config& variant,
                                           const variant_plan& plan, bool causal, const dataset& data,
                                           const std::vector<int64_t>& rows, const batching_base& batching,
                                           bool assemble_inputs)
    : world_(world), name_(variant.name), threads_(variant.parallel->threads_per_worker) {
  auto shards = shard_batches(data, batching.plan(data, rows), model->config(), world_.size());
  std::vector<batch_plan> mine;
  for (int r = 0; r < world_.size(); ++r) {
    shard& s = shards[static_cast<std::size_t>(r)];
    std::vector<int64_t> order;
    for (const auto& p : s.plans) order.insert(order.end(), p.rows.begin(), p.rows.end());
    order_.push_back(std::move(order));
    samples_.push_back(s.samples);
    tokens_.push_back(s.real_tokens);
    batches_.push_back(static_cast<int64_t>(s.plans.size()));
    all_plans_.insert(all_plans_.end(), s.plans.begin(), s.plans.end());
    if (r == world_.rank()) mine = std::move(s.plans);
  }
  const torch::Device device = rank_device(world_, run_device);
  shard_ = std::make_unique<shard_runner>(device == run_device ? model : replicate(model, device), device,
                                          variant, plan, causal, data, std::move(mine), assemble_inputs);
  rank_s_.resize(static_cast<std::size_t>(world_.size()));
}

distributed_executor::~distributed_executor() = default;

torch::Tensor distributed_executor::do_forward(const batch& /*b*/) {
  throw std::logic_error("distributed_executor runs whole passes: its shard is its own batches");
}

whole_pass distributed_executor::do_run_pass(bool keep_outputs) {
  // The other ranks may still be busy (rank 0 runs the single-process variants alone): meet
  // first, waiting on heartbeats, then start together.
  const std::string tag = fmt::format("{}/{}", name_, passes_++);
  world_.meet(tag);
  // The pass starts before the barrier that releases every rank, and ends when rank 0 holds every
  // output: the same span the thread-parallel executor times, so the two compare as equals. The
  // clock starts before the barrier, not after it, because the ranks leave a barrier at slightly
  // different moments (milliseconds apart on a loaded machine): started after it, rank 0's pass
  // could be shorter than another rank's compute. Started before it, no rank can begin its shard
  // before rank 0's clock runs (it leaves the barrier only once rank 0 has entered it), so the pass
  // covers every rank's compute, at the price of one barrier's latency (all ranks already met).
  const auto t0 = std::chrono::steady_clock::now();
  world_.barrier();
  if (const rank_pass_hook hook = current_rank_pass_hook()) hook(world_.rank(), passes_);
  whole_pass local;
  int64_t threads = 0;
  try {
    const thread_count_scope scope(threads_);
    threads = at::get_num_threads();
    local = shard_->run(/*keep_outputs=*/true);
  } catch (const distributed_error&) {
    throw;
  } catch (const std::exception& e) {
    const auto* c = dynamic_cast<const c10::Error*>(&e);
    throw distributed_error(fmt::format("rank {}: its shard of {} failed: {}", world_.rank(), name_,
                                        c ? c->what_without_backtrace() : e.what()));
  }
  whole_pass out;
  {
    // Output widths first (a rank with no rows has none to tell), then the rows themselves.
    const int64_t width = local.outputs.defined() ? local.outputs.size(1) : 0;
    const auto widths = world_.all_gather({static_cast<double>(width)});
    int64_t c = 0;
    for (const auto& w : widths) c = std::max(c, static_cast<int64_t>(w[0]));
    const auto gathered =
        world_.all_gather_rows(local.outputs.defined() ? local.outputs : torch::zeros({0, c}, torch::kFloat));
    if (keep_outputs) {
      out.outputs = torch::cat(gathered);
      for (const auto& o : order_) out.sample_index.insert(out.sample_index.end(), o.begin(), o.end());
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Untimed bookkeeping: every rank's own compute time and thread count, for the workers table.
  const auto times = world_.all_gather({local.seconds, static_cast<double>(threads)});
  rank_threads_.clear();
  for (std::size_t r = 0; r < times.size(); ++r) {
    rank_threads_.push_back(static_cast<int64_t>(times[r][1]));
    if (timed_phase()) rank_s_[r].push_back(times[r][0]);
  }
  // Every rank's batch latencies (counts differ per rank: gathered as rows).
  const auto latencies =
      world_.all_gather_rows(torch::tensor(local.batch_ms, torch::kDouble).to(torch::kFloat).view({-1, 1}));
  for (const auto& l : latencies)
    for (int64_t i = 0; i < l.size(0); ++i) out.batch_ms.push_back(l[i][0].item<double>());
  out.allocations = local.allocations;
  return out;
}

void distributed_executor::do_annotate(variant_result& r) {
  parallel_info& p = r.parallel;
  p.used = true;
  p.mode = "processes";
  p.world_size = world_.size();
  p.backend = world_.backend();
  p.imbalance = median_imbalance(rank_s_);
  const torch::Device device = shard_->device();
  for (std::size_t i = 0; i < rank_s_.size(); ++i) {
    parallel_worker w;
    w.device = device.is_cuda() ? "cuda (LOCAL_RANK)" : device.str();
    w.host = i < world_.hosts().size() ? world_.hosts()[i] : "";
    w.threads = i < rank_threads_.size() ? rank_threads_[i] : 0;
    w.samples = samples_[i];
    w.real_tokens = tokens_[i];
    w.batches = batches_[i];
    w.median_s = rank_s_[i].empty() ? not_a_number : percentile(rank_s_[i], 50);
    w.samples_per_s = static_cast<double>(w.samples) / w.median_s;
    p.workers.push_back(w);
  }
}

}  // namespace attnbench
