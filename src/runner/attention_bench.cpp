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
#include <map>
#include <mutex>

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAGuard.h>
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

#ifdef ATTNBENCH_WITH_CUDA
// Cycles of at::cuda::sleep per millisecond on the current device, from one timed spin (measured
// once per device; the SM clock moves, so it only seeds spin_state below).
double spin_cycles_per_ms(const c10::cuda::CUDAStream& stream) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, double> measured;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = measured.find(stream.device_index()); it != measured.end()) return it->second;
  constexpr int64_t cycles = int64_t{1} << 21;
  at::cuda::CUDAEvent a(cudaEventDefault), b(cudaEventDefault);
  a.record(stream);
  at::cuda::sleep(cycles);
  b.record(stream);
  b.synchronize();
  const double ms = a.elapsed_time(b);
  return measured[stream.device_index()] = ms > 0 ? static_cast<double>(cycles) / ms : 1e6;
}
#endif

// The mean time of `calls` back-to-back calls, in ms, the kernels' and not the host's.
//
// On CUDA: the device's time between two events around all of them. Back-to-back calls alone
// only hide the host's work of each call (dispatch, allocation, checks) while the GPU has queued
// work to run: at S=512, B=1 a call's kernels take a few microseconds, less than LibTorch's
// dispatch of it, so the GPU would wait for the host between calls and the figure would be the
// host's. So the calls are queued behind a spin kernel (at::cuda::sleep) that keeps the GPU busy
// until the host has queued them all: the start event not yet reached when the last call is queued
// proves it. Otherwise the spin is doubled (at least twice the host's queueing time) and the
// sample taken again, up to spin_attempts times; after that the point is logged as host-bound and
// later samples spin no more (a call that synchronises inside can never be covered).
// On the CPU: a host clock around synchronised calls.
struct spin_state {
  double spin_ms = 1.0;
  bool give_up = false;
};
constexpr int spin_attempts = 4;

double time_calls_ms(const attention_impl& impl, const torch::Tensor& q, const torch::Tensor& k,
                     const torch::Tensor& v, bool causal, const torch::Tensor& lengths, torch::Device device,
                     int64_t calls, spin_state& spin, const std::function<void(const std::string&)>& log) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);  // at::cuda::sleep runs on the current device's stream
    const auto stream = c10::cuda::getCurrentCUDAStream(device.index());
    // Both events are created (by a first record) and waited for before the timed record.
    at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
    start.record(stream);
    end.record(stream);
    end.synchronize();
    const double cycles_per_ms = spin.give_up ? 0 : spin_cycles_per_ms(stream);
    for (int attempt = 1;; ++attempt) {
      if (!spin.give_up) at::cuda::sleep(static_cast<int64_t>(spin.spin_ms * cycles_per_ms));
      start.record(stream);
      const auto t0 = clock_type::now();
      for (int64_t c = 0; c < calls; ++c) impl.run(q, k, v, causal, lengths);
      const double host_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      const bool covered = !spin.give_up && !start.query();  // the GPU still spins: all calls were queued
      end.record(stream);
      end.synchronize();
      const double ms = static_cast<double>(start.elapsed_time(end)) / static_cast<double>(calls);
      if (covered || spin.give_up) return ms;
      if (attempt == spin_attempts) {
        spin.give_up = true;
        if (log)
          log(fmt::format("  {}: the host took {:.3f} ms to queue {} calls, longer than a {:.3f} ms spin ahead of "
                          "them: this sample and the later ones may include the host's dispatch",
                          impl.name, host_ms, calls, spin.spin_ms));
        return ms;
      }
      spin.spin_ms = 2 * std::max(spin.spin_ms, host_ms);
    }
  }
#endif
  (void)spin;
  (void)log;
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
    // attention_sample_target_ms (from one call timed first), queued behind a spin (time_calls_ms);
    // on the CPU one call a sample.
    spin_state spin;
    const int64_t calls =
        o.device.is_cuda()
            ? calls_per_sample(time_calls_ms(impl, q, k, v, p.causal, lengths, o.device, 1, spin, o.log),
                               attention_sample_target_ms, attention_max_calls_per_sample)
            : 1;
    if (o.log && calls > 1) o.log(fmt::format("  {}: {} back-to-back calls per timed sample", impl.name, calls));
    std::vector<double> ms;
    for (int64_t r = 0; r < o.repetitions; ++r)
      ms.push_back(time_calls_ms(impl, q, k, v, p.causal, lengths, o.device, calls, spin, o.log));
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
