#include "kernels/cpu/flash_attention.hpp"

#include <ATen/Parallel.h>

// at::parallel_for is compiled here, from ATen's header: with LibTorch's OpenMP backend and no
// -fopenmp it silently becomes a serial loop (it did: the kernel ran on one core whatever the
// thread count). CMakeLists.txt compiles this file with OpenMP; this keeps it that way.
#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "kernels/cpu/flash_attention.cpp must be compiled with -fopenmp: at::parallel_for would run serially"
#endif

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace attnbench {
namespace {

using kernels::flash_isa;

constexpr flash_isa all_isas[] = {flash_isa::scalar, flash_isa::avx2, flash_isa::avx512, flash_isa::avx512_bf16,
                                  flash_isa::amx_bf16};

// Linux gives a process the AMX tile data state (8 KiB of registers per thread) only when asked:
// without it the first tile instruction faults. Asked once; true when granted.
bool amx_permission_granted() {
#if defined(__linux__) && defined(__x86_64__)
  static const bool granted = [] {
    constexpr long arch_req_xcomp_perm = 0x1023;  // ARCH_REQ_XCOMP_PERM, asm/prctl.h
    constexpr long xfeature_xtiledata = 18;       // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

kernels::flash_kernel kernel_for(flash_isa isa) {
  switch (isa) {
    case flash_isa::amx_bf16:
      return kernels::flash_kernel_amx_bf16();
    case flash_isa::avx512_bf16:
      return kernels::flash_kernel_avx512_bf16();
    case flash_isa::avx512:
      return kernels::flash_kernel_avx512();
    case flash_isa::avx2:
      return kernels::flash_kernel_avx2();
    case flash_isa::scalar:
      break;
  }
  return kernels::flash_kernel_scalar();
}

int64_t lanes(flash_isa isa) {
  switch (isa) {
    case flash_isa::amx_bf16:
      return 32;  // a tile's reduction: head_dim in whole tiles
    case flash_isa::avx512_bf16:
    case flash_isa::avx512:
      return 16;
    case flash_isa::avx2:
      return 8;
    case flash_isa::scalar:
      break;
  }
  return 1;
}

std::optional<flash_isa> parse_isa(const std::string& s) {
  for (flash_isa isa : all_isas)
    if (to_string(isa) == s) return isa;
  return std::nullopt;
}

// Runs one small bf16 problem (two query tiles, two key blocks, padding, causal) through `kern` and
// through the avx512_bf16 path: the relative L2 difference of the outputs.
double compare_with_avx512_bf16(const kernels::flash_kernel& kern) {
  kernels::flash_problem p;
  p.batch = 2;
  p.heads = 1;
  p.seq = 300;
  p.head_dim = 64;
  p.block_k = kernels::flash_block_k;
  p.bf16 = true;
  p.causal = true;
  p.scale = 0.125f;
  const int64_t lengths[2] = {300, 141};
  p.key_lengths = lengths;
  const int64_t n = p.batch * p.seq * p.head_dim;
  std::vector<uint16_t> q(n), k(n), v(n), out_a(n), out_b(n);
  uint32_t state = 12345;  // a fixed LCG: values in [-1, 1) as bf16
  for (auto* buf : {&q, &k, &v})
    for (auto& x : *buf) {
      state = state * 1664525u + 1013904223u;
      const float f = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
      uint32_t u;
      std::memcpy(&u, &f, 4);
      x = static_cast<uint16_t>(u >> 16);
    }
  for (int64_t* st : {p.q_stride, p.k_stride, p.v_stride, p.o_stride}) {
    st[0] = p.seq * p.head_dim;
    st[1] = p.seq * p.head_dim;
    st[2] = p.head_dim;
  }
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  const auto run = [&](const kernels::flash_kernel& kk, std::vector<uint16_t>& out) {
    std::vector<uint8_t> kp(static_cast<std::size_t>(std::max<int64_t>(1, kk.k_packed_bytes(p))));
    std::vector<uint8_t> vp(static_cast<std::size_t>(std::max<int64_t>(1, kk.v_packed_bytes(p))));
    std::vector<float> scratch(static_cast<std::size_t>(kk.scratch_floats(p)));
    p.k_packed = kp.data();
    p.v_packed = vp.data();
    p.out = out.data();
    for (int64_t bh = 0; bh < p.batch * p.heads; ++bh) {
      kk.pack(p, bh);
      for (int64_t t = 0; t * kernels::flash_block_q < p.seq; ++t) kk.tile(p, bh, t, scratch.data());
    }
  };
  run(kern, out_a);
  run(kernels::flash_kernel_avx512_bf16(), out_b);
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto widen = [](uint16_t h) {
      const uint32_t u = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return static_cast<double>(f);
    };
    const double a = widen(out_a[i]), b = widen(out_b[i]);
    diff += (a - b) * (a - b);
    norm += b * b;
  }
  return std::isfinite(diff) ? std::sqrt(diff / std::max(norm, 1e-300)) : INFINITY;
}

bool cpu_has(flash_isa isa);

// The AMX path runs only after it has agreed with the avx512_bf16 path on a small problem, once per
// process: a path no machine of this project had validated when it was written must not be able to
// turn a run's outputs wrong silently. The reason it was set aside, or "".
const std::string& amx_refusal() {
  static const std::string why = []() -> std::string {
    if (!cpu_has(flash_isa::avx512_bf16)) return "needs avx512_bf16 beside amx_bf16";
    if (!amx_permission_granted()) return "the kernel did not grant the AMX tile state (arch_prctl)";
    const double err = compare_with_avx512_bf16(kernels::flash_kernel_amx_bf16());
    // Two bf16 paths differ by P's and the output's roundings: ~1e-3; a layout bug is O(1).
    if (!(err <= 2e-2)) return "its self-check against the avx512_bf16 path failed (relative L2 " + std::to_string(err) + ")";
    return "";
  }();
  return why;
}

bool cpu_has(flash_isa isa) {
  switch (isa) {
    case flash_isa::scalar:
      return true;
    case flash_isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case flash_isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("fma");
    case flash_isa::avx512_bf16:
      return cpu_has(flash_isa::avx512) && __builtin_cpu_supports("avx512bf16");
    case flash_isa::amx_bf16:
      return __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16") && amx_refusal().empty();
  }
  return false;
}

// The tests' stand-in for the AMX path on a CPU without AMX (flash_tile_amx.cpp's tile model).
kernels::flash_kernel amx_tile_model_kernel(flash_isa chosen, int64_t head_dim) {
  TORCH_CHECK(cpu_has(flash_isa::avx512_bf16), "cpu-flash: the AMX tile model runs on AVX512_BF16 CPUs only");
  TORCH_CHECK(chosen == flash_isa::avx512_bf16 || chosen == flash_isa::amx_bf16,
              "cpu-flash: the AMX tile model takes bf16 inputs; the path chosen was ", to_string(chosen));
  TORCH_CHECK(head_dim % 32 == 0, "cpu-flash: the AMX tile model needs head_dim a multiple of 32; got ", head_dim);
  return kernels::flash_kernel_amx_tile_model();
}

void set_strides(int64_t (&out)[3], const torch::Tensor& t) {
  out[0] = t.stride(0);
  out[1] = t.stride(1);
  out[2] = t.stride(2);
}

}  // namespace

std::string to_string(kernels::flash_isa isa) {
  switch (isa) {
    case flash_isa::avx2:
      return "avx2";
    case flash_isa::avx512:
      return "avx512";
    case flash_isa::avx512_bf16:
      return "avx512_bf16";
    case flash_isa::amx_bf16:
      return "amx_bf16";
    case flash_isa::scalar:
      break;
  }
  return "scalar";
}

std::vector<flash_isa> cpu_flash_isas() {
  std::vector<flash_isa> out;
  for (flash_isa isa : all_isas)
    if (cpu_has(isa)) out.push_back(isa);
  return out;
}

std::string cpu_flash_amx_note() {
  if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-bf16")) return "";
  return amx_refusal().empty() ? "" : "amx_bf16 not used: " + amx_refusal();
}

flash_isa choose_flash_path(const std::vector<flash_isa>& available, c10::ScalarType dtype, int64_t head_dim,
                            std::optional<flash_isa> requested) {
  TORCH_CHECK(!available.empty(), "cpu-flash: no code path is available");
  flash_isa isa = available.back();
  if (requested) {
    TORCH_CHECK(std::find(available.begin(), available.end(), *requested) != available.end(), "cpu-flash: the ",
                to_string(*requested), " code path needs CPU features this CPU lacks (see lscpu)");
    isa = *requested;
  }
  // The bf16 paths multiply bf16: fp32 inputs take the fp32 path below them.
  if ((isa == flash_isa::amx_bf16 || isa == flash_isa::avx512_bf16) && dtype != torch::kBFloat16)
    isa = flash_isa::avx512;
  if (isa == flash_isa::amx_bf16 && head_dim % lanes(isa) != 0) isa = flash_isa::avx512_bf16;
  while (isa != flash_isa::scalar && head_dim % lanes(isa) != 0)
    isa = isa == flash_isa::avx2 ? flash_isa::scalar : flash_isa::avx2;
  return isa;
}

flash_isa cpu_flash_path(c10::ScalarType dtype, int64_t head_dim, std::optional<flash_isa> requested) {
  if (!requested)
    if (const char* env = std::getenv("ATTNBENCH_CPU_ISA"); env && *env) {
      requested = parse_isa(env);
      TORCH_CHECK(requested, "ATTNBENCH_CPU_ISA=\"", env, "\" names no cpu-flash code path; expected scalar, avx2, "
                  "avx512, avx512_bf16 or amx_bf16");
    }
  return choose_flash_path(cpu_flash_isas(), dtype, head_dim, requested);
}

namespace {

// Checks every input, then runs one call. q (B, H, T, D); k, v (B, Hkv, S, D) with T ≤ S and Hkv
// dividing H; key_lengths and key_begins undefined or (B).
torch::Tensor run_cpu_flash(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                            bool causal, const torch::Tensor& key_lengths, const torch::Tensor& key_begins,
                            const cpu_flash_options& options) {
  TORCH_CHECK(q_in.device().is_cpu() && k_in.device().is_cpu() && v_in.device().is_cpu(),
              "cpu-flash runs on the CPU; got q on ", q_in.device());
  const auto dtype = q_in.scalar_type();
  TORCH_CHECK(dtype == torch::kFloat || dtype == torch::kBFloat16,
              "cpu-flash takes fp32 or bf16 inputs; got ", dtype);
  TORCH_CHECK(k_in.scalar_type() == dtype && v_in.scalar_type() == dtype,
              "cpu-flash: q, k and v must share one dtype");
  TORCH_CHECK(!(torch::GradMode::is_enabled() &&
                (q_in.requires_grad() || k_in.requires_grad() || v_in.requires_grad())),
              "cpu-flash is a forward-only kernel: it has no backward (use sdpa or naive attention for training)");
  const int64_t batch = q_in.size(0), heads = q_in.size(1), q_seq = q_in.size(2), dim = q_in.size(3);
  const int64_t kv_heads = k_in.size(1), seq = k_in.size(2);
  auto contiguous_last = [](const torch::Tensor& t) { return t.stride(3) == 1 ? t : t.contiguous(); };
  const torch::Tensor q = contiguous_last(q_in), k = contiguous_last(k_in), v = contiguous_last(v_in);

  const auto per_sample = [&](const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.dim() == 1 && t.size(0) == batch, "cpu-flash: ", what, " must be (B) = (", batch, "); got ",
                t.sizes());
    return t.to(torch::kCPU, torch::kLong).contiguous();
  };
  torch::Tensor lengths, begins;
  if (key_lengths.defined()) {
    lengths = per_sample(key_lengths, "key_lengths");
    const int64_t lo = lengths.min().item<int64_t>(), hi = lengths.max().item<int64_t>();
    TORCH_CHECK(lo >= 1 && hi <= seq, "cpu-flash: every key length must lie in [1, ", seq, "]; got [", lo, ", ", hi,
                "]");
  }
  if (key_begins.defined()) {
    begins = per_sample(key_begins, "key_begins");
    const auto ends = lengths.defined() ? lengths : torch::full({batch}, seq, torch::kLong);
    TORCH_CHECK(begins.min().item<int64_t>() >= 0 && (begins < ends).all().item<bool>(),
                "cpu-flash: every sample's first real key must lie in [0, its key length); got ", begins);
  }
  // (B, T, H, D) in memory, returned as a (B, H, T, D) view.
  torch::Tensor out = torch::empty({batch, q_seq, heads, dim}, q.options());
  if (out.numel() == 0) return out.transpose(1, 2);

  const flash_isa isa = cpu_flash_path(dtype, dim, options.isa);
  const kernels::flash_kernel kern = options.amx_tile_model ? amx_tile_model_kernel(isa, dim) : kernel_for(isa);
  kernels::flash_problem p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq = seq;
  p.q_seq = q_seq;
  p.head_dim = dim;
  p.block_k = std::min<int64_t>(kernels::flash_block_k, (seq + 31) / 32 * 32);
  p.bf16 = dtype == torch::kBFloat16;
  p.causal = causal;
  p.planted_skip_rescale = options.planted_skip_rescale;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.out = out.data_ptr();
  set_strides(p.q_stride, q);
  set_strides(p.k_stride, k);
  set_strides(p.v_stride, v);
  p.o_stride[0] = out.stride(0);  // (B, T, H, D): batch, head, seq
  p.o_stride[1] = out.stride(2);
  p.o_stride[2] = out.stride(1);
  p.key_lengths = lengths.defined() ? lengths.data_ptr<int64_t>() : nullptr;
  p.key_begins = begins.defined() ? begins.data_ptr<int64_t>() : nullptr;
  const torch::Tensor k_packed = torch::empty({std::max<int64_t>(1, kern.k_packed_bytes(p))}, torch::kByte);
  const torch::Tensor v_packed = torch::empty({std::max<int64_t>(1, kern.v_packed_bytes(p))}, torch::kByte);
  p.k_packed = k_packed.data_ptr();
  p.v_packed = v_packed.data_ptr();

  at::parallel_for(0, batch * kv_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bkv = begin; bkv < end; ++bkv) kern.pack(p, bkv);
  });

  // Tiles longest first (keys visited ≈ the tile's last visible key), handed out one at a time.
  const int64_t bh_count = batch * heads;
  const int64_t q_tiles = (q_seq + kernels::flash_block_q - 1) / kernels::flash_block_q;
  const int64_t offset = causal ? seq - q_seq : 0;  // causal rows align bottom-right
  struct task {
    int64_t cost, bh, tile;
  };
  std::vector<task> tasks;
  tasks.reserve(static_cast<std::size_t>(bh_count * q_tiles));
  for (int64_t bh = 0; bh < bh_count; ++bh) {
    const int64_t b = bh / heads;
    const int64_t len = p.key_lengths ? p.key_lengths[b] : seq, first = p.key_begins ? p.key_begins[b] : 0;
    for (int64_t t = 0; t < q_tiles; ++t) {
      const int64_t last_row = std::min(q_seq, (t + 1) * kernels::flash_block_q);
      tasks.push_back({(causal ? std::min(len, last_row + offset) : len) - first, bh, t});
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(), [](const task& a, const task& b) { return a.cost > b.cost; });
  std::atomic<int64_t> next{0};
  const int64_t n_tasks = static_cast<int64_t>(tasks.size());
  const int64_t scratch_floats = kern.scratch_floats(p);
  const int64_t workers = std::min<int64_t>(at::get_num_threads(), n_tasks);
  at::parallel_for(0, workers, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(scratch_floats));
    for (int64_t w = begin; w < end; ++w)
      for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n_tasks;)
        kern.tile(p, tasks[i].bh, tasks[i].tile, scratch.data());
  });
  return out.transpose(1, 2);  // (B, H, T, D)
}

}  // namespace

torch::Tensor cpu_flash_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  const torch::Tensor& key_lengths, const cpu_flash_options& options) {
  TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes(),
              "cpu-flash: q, k and v must all be (B, H, S, D) of one shape; got ", q.sizes(), ", ", k.sizes(), ", ",
              v.sizes());
  return run_cpu_flash(q, k, v, causal, key_lengths, {}, options);
}

torch::Tensor cpu_flash_attention_cached(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                         bool causal, const torch::Tensor& key_begins,
                                         const cpu_flash_options& options) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && k.sizes() == v.sizes(),
              "cpu-flash: q must be (B, H, T, D) and k, v (B, Hkv, S, D) of one shape; got ", q.sizes(), ", ",
              k.sizes(), ", ", v.sizes());
  TORCH_CHECK(q.size(0) == k.size(0) && q.size(3) == k.size(3) && q.size(2) <= k.size(2),
              "cpu-flash: q (B, H, T, D) and the cache's k (B, Hkv, S, D) must share B and D, with T <= S; got ",
              q.sizes(), " and ", k.sizes());
  TORCH_CHECK(k.size(1) >= 1 && q.size(1) % k.size(1) == 0, "cpu-flash: the query heads (", q.size(1),
              ") must be a multiple of the key/value heads (", k.size(1), ")");
  return run_cpu_flash(q, k, v, causal, {}, key_begins, options);
}

attention_impl cpu_flash_attention_impl() {
  attention_impl impl;
  impl.name = "cpu-flash";
  impl.unavailable = [](torch::Device device) -> std::optional<std::string> {
    if (!device.is_cpu()) return "cpu-flash runs on the CPU only";
    return std::nullopt;
  };
  impl.run = [](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                const torch::Tensor& key_lengths) { return cpu_flash_attention(q, k, v, causal, key_lengths); };
  // Per thread rows × (block_k + 2·D) floats, and K (and V) repacked: O(S), never S².
  impl.scratch_bytes = [](int64_t, int64_t, int64_t, int64_t) -> int64_t { return 0; };
  impl.code_path = [](torch::Device, c10::ScalarType dtype, int64_t head_dim) {
    const std::string note = cpu_flash_amx_note();
    return to_string(cpu_flash_path(dtype, head_dim)) + (note.empty() ? "" : " (" + note + ")");
  };
  return impl;
}

}  // namespace attnbench
