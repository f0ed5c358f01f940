#include "runner/attention_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "model/attention_impls.hpp"
#include "core/device.hpp"
#include "runner/memory_tracker.hpp"
#include "stats/summary.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

// ‖out − ref‖ / ‖ref‖ in float64 (NaN when out holds NaN or has the wrong shape).
double relative_l2(const torch::Tensor& out, const torch::Tensor& ref) {
  if (out.sizes() != ref.sizes()) return std::nan("");
  const auto o = out.to(torch::kCPU, torch::kDouble);
  return (o - ref).norm().item<double>() / ref.norm().item<double>();
}

// The mean time of `calls` back-to-back calls, in ms. On CUDA: the device's time between two
// events around all of them, so the host work of each call (dispatch, allocation, checks) overlaps
// the kernels before it instead of sitting between a start event and the first kernel (at small
// shapes that host work would be the figure). On the CPU: a host clock around synchronised calls.
double time_calls_ms(const attention_impl& impl, const torch::Tensor& q, const torch::Tensor& k,
                     const torch::Tensor& v, bool causal, const torch::Tensor& lengths, torch::Device device,
                     int64_t calls) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    // Both events are created (by a first record) and waited for before the timed record.
    at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
    const auto stream = c10::cuda::getCurrentCUDAStream(device.index());
    start.record(stream);
    end.record(stream);
    end.synchronize();
    start.record(stream);
    for (int64_t c = 0; c < calls; ++c) impl.run(q, k, v, causal, lengths);
    end.record(stream);
    end.synchronize();
    return static_cast<double>(start.elapsed_time(end)) / static_cast<double>(calls);
  }
#endif
  synchronize(device);
  const auto t0 = clock_type::now();
  for (int64_t c = 0; c < calls; ++c) impl.run(q, k, v, causal, lengths);
  synchronize(device);
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count() / static_cast<double>(calls);
}

void bench_one(attention_row& row, const attention_impl& impl, const torch::Tensor& q, const torch::Tensor& k,
               const torch::Tensor& v, const torch::Tensor& lengths, const torch::Tensor& ref,
               const attention_bench_options& o) {
  const attention_point& p = row.point;
  row.tolerance = attention_tolerance(p.dtype);
  if (auto why = impl.unavailable ? impl.unavailable(o.device) : std::nullopt) {
    row.status = attention_status::unsupported;
    row.reason = *why;
    return;
  }
  const int64_t scratch =
      impl.scratch_bytes ? impl.scratch_bytes(p.batch, p.heads, p.seq, q.element_size()) : 0;
  if (o.memory_cap_bytes > 0 && scratch > o.memory_cap_bytes) {
    row.status = attention_status::oom;
    row.reason = fmt::format(
        "its (B, H, S, S) scores and probabilities need {}, over the --memory-cap of {} "
        "(a configured cap, not an allocation failure)",
        gib(scratch), gib(o.memory_cap_bytes));
    return;
  }
  try {
    if (impl.code_path) row.code_path = impl.code_path(o.device, q.scalar_type(), p.head_dim);
    {
      torch::Tensor out = impl.run(q, k, v, p.causal, lengths);
      row.rel_l2 = relative_l2(out, ref);
    }
    if (!(row.rel_l2 <= row.tolerance)) {  // NaN fails too
      row.status = attention_status::fail;
      row.reason =
          fmt::format("relative L2 error {:.3e} against the float64 reference exceeds {:.0e}; not timed",
                      row.rel_l2, row.tolerance);
      return;
    }
    {
      const peak_memory_scope memory(o.device);
      impl.run(q, k, v, p.causal, lengths);
      synchronize(o.device);
      row.peak_bytes = memory.peak_bytes();
    }
    for (int64_t w = 0; w < o.warmup; ++w) impl.run(q, k, v, p.causal, lengths);
    // On CUDA each sample is the mean of enough back-to-back calls to last about
    // attention_sample_target_ms (from one call timed first); on the CPU one call a sample.
    const int64_t calls =
        o.device.is_cuda()
            ? calls_per_sample(time_calls_ms(impl, q, k, v, p.causal, lengths, o.device, 1),
                               attention_sample_target_ms, attention_max_calls_per_sample)
            : 1;
    if (o.log && calls > 1) o.log(fmt::format("  {}: {} back-to-back calls per timed sample", impl.name, calls));
    std::vector<double> ms;
    for (int64_t r = 0; r < o.repetitions; ++r)
      ms.push_back(time_calls_ms(impl, q, k, v, p.causal, lengths, o.device, calls));
    row.repetitions = o.repetitions;
    row.median_ms = median(ms);
    row.min_ms = *std::min_element(ms.begin(), ms.end());
    row.tflops = attention_flops(p) / (row.median_ms / 1e3) / 1e12;
    for (const auto& c : o.ceilings)
      if (c.dtype == p.dtype && c.gflops > 0) row.ceiling_share = row.tflops * 1e3 / c.gflops;
  } catch (const c10::OutOfMemoryError& e) {
    row.status = attention_status::oom;
    row.reason = e.what_without_backtrace();
  } catch (const c10::Error& e) {
    row.status = attention_status::unsupported;
    row.reason = e.what_without_backtrace();
    // Keep one line: LibTorch's messages carry warnings and context on later lines.
    if (auto nl = row.reason.find('\n'); nl != std::string::npos) row.reason.resize(nl);
  }
}

}  // namespace

int64_t calls_per_sample(double one_call_ms, double target_ms, int64_t max_calls) {
  if (max_calls < 1) return 1;
  if (!(one_call_ms > 0)) return max_calls;  // too short to time (or NaN): as many as allowed
  const double n = std::ceil(target_ms / one_call_ms);
  return n < 1 ? 1 : n > static_cast<double>(max_calls) ? max_calls : static_cast<int64_t>(n);
}

double attention_tolerance(const std::string& dtype) {
  if (dtype == "bf16") return attention_tolerance_bf16;
  if (dtype == "fp16") return attention_tolerance_fp16;
  return attention_tolerance_fp32;
}

c10::ScalarType attention_dtype(const std::string& dtype) {
  if (dtype == "fp32") return torch::kFloat;
  if (dtype == "bf16") return torch::kBFloat16;
  if (dtype == "fp16") return torch::kHalf;
  throw input_error("--dtype", fmt::format("expected one of fp32, bf16, fp16; got \"{}\"", dtype));
}

std::vector<attention_point> grid_points(const attention_grid& g) {
  std::vector<attention_point> out;
  for (const auto& dtype : g.dtype)
    for (bool causal : g.causal)
      for (int64_t b : g.batch)
        for (int64_t h : g.heads)
          for (int64_t d : g.head_dim)
            for (double valid : g.valid)
              for (int64_t s : g.seq) out.push_back({b, h, s, d, causal, dtype, valid});
  return out;
}

std::vector<attention_row> run_attention_bench(const attention_bench_options& o) {
  std::vector<attention_impl> impls;
  for (auto& impl : attention_impls())
    if (o.impls.empty() || std::count(o.impls.begin(), o.impls.end(), impl.name))
      impls.push_back(std::move(impl));
  torch::InferenceMode inference;
  std::vector<attention_row> rows;
  const auto points = grid_points(o.grid);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const attention_point& p = points[i];
    if (o.log)
      o.log(fmt::format("B={} H={} S={} D={}{} {}{}", p.batch, p.heads, p.seq, p.head_dim,
                        p.causal ? " causal" : "", p.dtype,
                        p.valid == 1.0 ? "" : fmt::format(" keys {}/{}", attention_key_length(p), p.seq)));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed + i);
    const auto make = [&] {
      return at::normal(0.0, 1.0, {p.batch, p.heads, p.seq, p.head_dim}, gen)  // (B, H, S, D)
          .to(o.device, attention_dtype(p.dtype));
    };
    const torch::Tensor q = make(), k = make(), v = make();
    // Every sample the same key length; undefined (no mask at all) when every key is real.
    const torch::Tensor lengths =
        p.valid == 1.0 ? torch::Tensor() : torch::full({p.batch}, attention_key_length(p), torch::kLong);
    const torch::Tensor ref = reference_attention(q, k, v, p.causal, lengths);  // float64, CPU
    // On the device once per point, so no timed call copies them (cuda-flash2 then reads them
    // without a check on the host: they are in [1, S] by construction).
    const torch::Tensor device_lengths = lengths.defined() ? lengths.to(o.device) : lengths;
    const std::size_t first = rows.size();
    for (const auto& impl : impls) {
      attention_row row;
      row.point = p;
      row.impl = impl.name;
      bench_one(row, impl, q, k, v, device_lengths, ref, o);
      rows.push_back(std::move(row));
    }
    double naive_ms = std::nan("");
    for (std::size_t r = first; r < rows.size(); ++r)
      if (rows[r].impl == "naive" && rows[r].status == attention_status::ok) naive_ms = rows[r].median_ms;
    for (std::size_t r = first; r < rows.size(); ++r)
      if (rows[r].status == attention_status::ok) rows[r].speedup = naive_ms / rows[r].median_ms;
  }
  return rows;
}

}  // namespace attnbench
