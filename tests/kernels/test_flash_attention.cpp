// kernels/cpu/flash_attention: every code path this CPU has, validated against the float64
// reference over dtypes, head dims, block boundaries, causal, key padding and strided inputs;
// padded keys provably unread; a planted online-softmax bug caught; the registry entry and the
// catalog agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "model/attention_impls.hpp"
#include "kernels/cpu/flash_attention.hpp"
#include "kernels/kernel_catalog.hpp"
#include "kernels/kernels.hpp"
#include "runner/attention_bench.hpp"
#include "test_support.hpp"
#include "tensor_support.hpp"

using namespace attnbench;
using kernels::flash_isa;

namespace {

using testing::rel_l2;

// q, k, v as the model makes them: views into one (B, S, 3, H, D) projection, so every
// dimension but D is strided.
struct qkv {
  torch::Tensor q, k, v;
};
qkv strided_inputs(int64_t b, int64_t h, int64_t s, int64_t d, c10::ScalarType dtype, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto all = at::normal(0.0, 1.0, {b, s, 3, h, d}, gen).to(dtype).permute({2, 0, 3, 1, 4});  // (3, B, H, S, D)
  return {all[0], all[1], all[2]};
}

double tolerance(c10::ScalarType dtype) {
  return dtype == torch::kBFloat16 ? attention_tolerance_bf16 : attention_tolerance_fp32;
}

}  // namespace

TEST_CASE("cpu-flash: every code path matches the float64 reference", "[kernels]") {
  const auto isas = cpu_flash_isas();
  REQUIRE(isas.front() == flash_isa::scalar);
  for (flash_isa isa : isas)
    for (auto dtype : {torch::kFloat, torch::kBFloat16})
      for (int64_t d : {32, 64, 128})
        for (int64_t s : {1, 17, 64, 65, 300})  // one key; partial vectors; one tile; two; two key blocks
          for (bool causal : {false, true})
            for (bool padded : {false, true}) {
              const int64_t b = 3, h = 2;
              const auto in = strided_inputs(b, h, s, d, dtype, static_cast<uint64_t>(s * 131 + d));
              // Per-sample lengths: full, about half, one key.
              const auto lengths =
                  padded ? torch::tensor({s, std::max<int64_t>(1, s / 2), int64_t{1}}, torch::kLong) : torch::Tensor();
              const auto ref = reference_attention(in.q, in.k, in.v, causal, lengths);
              const auto out = cpu_flash_attention(in.q, in.k, in.v, causal, lengths, {isa});
              INFO(to_string(isa) << " " << c10::toString(dtype) << " D=" << d << " S=" << s
                                  << (causal ? " causal" : "") << (padded ? " padded" : ""));
              REQUIRE(out.sizes() == in.q.sizes());
              CHECK(out.scalar_type() == dtype);
              CHECK(rel_l2(out, ref) <= tolerance(dtype));
            }
}

TEST_CASE("cpu-flash: bf16 is computed in bf16 only where the CPU has native bf16", "[kernels]") {
  const auto isas = cpu_flash_isas();
  const flash_isa best = isas.back();
  CHECK(cpu_flash_path(torch::kFloat, 64) ==
        (best == flash_isa::avx512_bf16 || best == flash_isa::amx_bf16 ? flash_isa::avx512 : best));
  CHECK(cpu_flash_path(torch::kBFloat16, 64) == best);
  // A head dim that no vector width divides falls back to the scalar path, and still computes.
  CHECK(cpu_flash_path(torch::kFloat, 20) == flash_isa::scalar);
  const auto in = strided_inputs(1, 2, 40, 20, torch::kFloat, 5);
  CHECK(rel_l2(cpu_flash_attention(in.q, in.k, in.v, false), reference_attention(in.q, in.k, in.v, false)) <=
        attention_tolerance_fp32);
  // A path the CPU lacks is an error, not a silent fallback.
  if (std::find(isas.begin(), isas.end(), flash_isa::avx512_bf16) == isas.end())
    CHECK_THROWS_WITH(cpu_flash_path(torch::kBFloat16, 64, flash_isa::avx512_bf16), Catch::Contains("lacks"));
}

TEST_CASE("cpu-flash: the code path each CPU takes, from injected machines", "[kernels]") {
  using F = flash_isa;
  const std::vector<F> zen3{F::scalar, F::avx2};
  const std::vector<F> zen4{F::scalar, F::avx2, F::avx512, F::avx512_bf16};
  const std::vector<F> spr{F::scalar, F::avx2, F::avx512, F::avx512_bf16, F::amx_bf16};
  const auto bf16 = torch::kBFloat16, fp32 = torch::kFloat;
  CHECK(choose_flash_path(zen3, bf16, 64, std::nullopt) == F::avx2);  // bf16 widened to fp32
  CHECK(choose_flash_path(zen3, fp32, 64, std::nullopt) == F::avx2);
  CHECK(choose_flash_path(zen4, bf16, 64, std::nullopt) == F::avx512_bf16);
  CHECK(choose_flash_path(zen4, fp32, 64, std::nullopt) == F::avx512);
  CHECK(choose_flash_path(spr, bf16, 64, std::nullopt) == F::amx_bf16);
  CHECK(choose_flash_path(spr, bf16, 32, std::nullopt) == F::amx_bf16);  // minilm's head_dim: one tile deep
  CHECK(choose_flash_path(spr, fp32, 64, std::nullopt) == F::avx512);     // fp32 never takes a bf16 path
  CHECK(choose_flash_path(spr, bf16, 48, std::nullopt) == F::avx512_bf16);  // not whole tiles
  CHECK(choose_flash_path(spr, bf16, 24, std::nullopt) == F::avx2);
  CHECK(choose_flash_path(spr, bf16, 20, std::nullopt) == F::scalar);
  CHECK(choose_flash_path(spr, bf16, 64, F::avx512_bf16) == F::avx512_bf16);  // capped by a request
  CHECK_THROWS_WITH(choose_flash_path(zen4, bf16, 64, F::amx_bf16), Catch::Contains("amx_bf16 code path needs"));
  CHECK_THROWS_WITH(choose_flash_path(zen3, bf16, 64, F::avx512), Catch::Contains("lacks"));
}

TEST_CASE("cpu-flash: the AMX path's layouts and bounds, on its tile model", "[kernels]") {
  // The tile model runs flash_tile_amx.cpp's code with each tile instruction replaced by its
  // definition in plain loops: this validates the packing, padding and loop bounds around the
  // instructions on a CPU without AMX, never the instructions (the next test needs AMX for that).
  const auto isas = cpu_flash_isas();
  if (std::find(isas.begin(), isas.end(), flash_isa::avx512_bf16) == isas.end()) {
    testing::skip_test("the AMX tile model runs on AVX512_BF16 CPUs; this one has none");
    return;
  }
  cpu_flash_options model;
  model.amx_tile_model = true;
  for (int64_t d : {32, 64, 128})
    for (int64_t s : {1, 17, 64, 65, 300})
      for (bool causal : {false, true})
        for (bool padded : {false, true}) {
          const int64_t b = 3, h = 2;
          const auto in = strided_inputs(b, h, s, d, torch::kBFloat16, static_cast<uint64_t>(s * 7 + d));
          const auto lengths =
              padded ? torch::tensor({s, std::max<int64_t>(1, s / 2), int64_t{1}}, torch::kLong) : torch::Tensor();
          const auto ref = reference_attention(in.q, in.k, in.v, causal, lengths);
          INFO("D=" << d << " S=" << s << (causal ? " causal" : "") << (padded ? " padded" : ""));
          CHECK(rel_l2(cpu_flash_attention(in.q, in.k, in.v, causal, lengths, model), ref) <= attention_tolerance_bf16);
        }
  // Padded keys unread on the model too: NaN there must not reach the real rows.
  auto in = strided_inputs(2, 2, 300, 64, torch::kBFloat16, 11);
  const auto lengths = torch::tensor({int64_t{137}, int64_t{300}}, torch::kLong);
  const auto before = cpu_flash_attention(in.q, in.k, in.v, false, lengths, model);
  in.k[0].slice(1, 137).fill_(std::nan(""));
  in.v[0].slice(1, 137).fill_(std::nan(""));
  CHECK(torch::equal(before[0], cpu_flash_attention(in.q, in.k, in.v, false, lengths, model)[0]));
  // A planted rescale bug is caught on this path as on the others.
  cpu_flash_options planted = model;
  planted.planted_skip_rescale = true;
  const auto big = strided_inputs(1, 2, 600, 64, torch::kBFloat16, 17);
  CHECK(rel_l2(cpu_flash_attention(big.q, big.k, big.v, false, {}, planted),
               reference_attention(big.q, big.k, big.v, false)) > 1e-2);
}

TEST_CASE("cpu-flash: the AMX path matches the float64 reference", "[kernels]") {
  const auto isas = cpu_flash_isas();
  if (std::find(isas.begin(), isas.end(), flash_isa::amx_bf16) == isas.end()) {
    const std::string note = cpu_flash_amx_note();
    testing::skip_test(note.empty() ? "this CPU has no AMX (amx_tile and amx_bf16): the amx_bf16 path is validated "
                                      "only on a CPU that has it"
                                    : note);
    return;
  }
  for (int64_t d : {32, 64, 128})
    for (int64_t s : {1, 17, 65, 300, 1030})
      for (bool causal : {false, true})
        for (bool padded : {false, true}) {
          const auto in = strided_inputs(3, 2, s, d, torch::kBFloat16, static_cast<uint64_t>(s * 5 + d));
          const auto lengths =
              padded ? torch::tensor({s, std::max<int64_t>(1, s / 2), int64_t{1}}, torch::kLong) : torch::Tensor();
          INFO("D=" << d << " S=" << s << (causal ? " causal" : "") << (padded ? " padded" : ""));
          CHECK(rel_l2(cpu_flash_attention(in.q, in.k, in.v, causal, lengths, {flash_isa::amx_bf16}),
                       reference_attention(in.q, in.k, in.v, causal, lengths)) <= attention_tolerance_bf16);
        }
}

namespace {

// A decoder's attention in float64: q (B, H, T, D) at the T newest of S positions, k, v (B, Hkv,
// S, D); query i sees keys [begin_b, S − T + i] (causal) or [begin_b, S); no key at all gives 0.
torch::Tensor reference_cached(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                               const std::vector<int64_t>& begins) {
  const int64_t b = q.size(0), h = q.size(1), t = q.size(2), s = k.size(2), groups = h / k.size(1);
  const auto qd = q.to(torch::kDouble), kd = k.to(torch::kDouble).repeat_interleave(groups, 1),
             vd = v.to(torch::kDouble).repeat_interleave(groups, 1);
  auto scores = torch::matmul(qd, kd.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  auto keep = torch::ones({b, 1, t, s}, torch::kBool);
  const auto cols = torch::arange(s, torch::kLong).view({1, s});
  const auto rows = torch::arange(t, torch::kLong).view({t, 1}) + (s - t);
  for (int64_t i = 0; i < b; ++i) {
    auto m = cols >= (begins.empty() ? 0 : begins[static_cast<std::size_t>(i)]);
    if (causal) m = m & (cols <= rows);
    keep[i][0].copy_(m.expand({t, s}));
  }
  scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  auto probs = torch::softmax(scores, -1).nan_to_num(0.0);  // a row with no key: all −∞ → NaN → 0
  return torch::matmul(probs, vd).to(q.scalar_type());
}

// q (B, H, T, D) strided as a projection's view; k, v the first S positions of a (B, Hkv, C, D)
// cache with room for more, as the decoder's KV cache is.
qkv cached_inputs(int64_t b, int64_t h, int64_t kvh, int64_t t, int64_t s, int64_t d, c10::ScalarType dtype,
                  uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto q = at::normal(0.0, 1.0, {b, t, h, d}, gen).to(dtype).transpose(1, 2);
  const auto k = at::normal(0.0, 1.0, {b, kvh, s + 7, d}, gen).to(dtype).narrow(2, 0, s);
  const auto v = at::normal(0.0, 1.0, {b, kvh, s + 7, d}, gen).to(dtype).narrow(2, 0, s);
  return {q, k, v};
}

}  // namespace

TEST_CASE("cpu-flash: decoder calls against a KV cache match the float64 reference", "[kernels][decoder]") {
  // Prefill (T = S), one-query decode steps (T = 1) and chunks (1 < T < S), grouped-query heads,
  // bottom-right causal rows, and left padding (a first real key per sample) on every code path.
  struct shape {
    int64_t t, s;
  };
  const std::vector<shape> shapes{{1, 1}, {1, 17}, {1, 300}, {5, 300}, {65, 65}, {70, 300}};
  auto isas = cpu_flash_isas();
  for (flash_isa isa : isas)
    for (auto dtype : {torch::kFloat, torch::kBFloat16})
      for (int64_t d : {32, 64})
        for (const shape& sh : shapes)
          for (int64_t kvh : {4, 2, 1})
            for (bool causal : {false, true})
              for (bool padded : {false, true}) {
                const int64_t b = 3, h = 4;
                const auto in = cached_inputs(b, h, kvh, sh.t, sh.s, d, dtype, static_cast<uint64_t>(sh.s * 31 + sh.t + d));
                // First real keys: none, a few, the last key only (a sample whose every row but the
                // last sees nothing when causal).
                const std::vector<int64_t> begins =
                    padded ? std::vector<int64_t>{0, std::min<int64_t>(3, sh.s - 1), sh.s - 1} : std::vector<int64_t>{};
                const auto ref = reference_cached(in.q, in.k, in.v, causal, begins);
                const auto out = cpu_flash_attention_cached(in.q, in.k, in.v, causal,
                                                            padded ? torch::tensor(begins, torch::kLong) : torch::Tensor(),
                                                            {isa});
                INFO(to_string(isa) << " " << c10::toString(dtype) << " D=" << d << " T=" << sh.t << " S=" << sh.s
                                    << " kv_heads=" << kvh << (causal ? " causal" : "") << (padded ? " padded" : ""));
                REQUIRE(out.sizes() == in.q.sizes());
                CHECK(rel_l2(out, ref) <= tolerance(dtype));
              }
  // The AMX path's layouts on its tile model, where the CPU can run it.
  if (std::find(isas.begin(), isas.end(), flash_isa::avx512_bf16) != isas.end()) {
    cpu_flash_options model;
    model.amx_tile_model = true;
    for (const shape& sh : shapes)
      for (bool causal : {false, true}) {
        const auto in = cached_inputs(3, 4, 2, sh.t, sh.s, 64, torch::kBFloat16, static_cast<uint64_t>(sh.s + sh.t));
        const std::vector<int64_t> begins{0, std::min<int64_t>(3, sh.s - 1), sh.s - 1};
        INFO("tile model T=" << sh.t << " S=" << sh.s << (causal ? " causal" : ""));
        CHECK(rel_l2(cpu_flash_attention_cached(in.q, in.k, in.v, causal, torch::tensor(begins, torch::kLong), model),
                     reference_cached(in.q, in.k, in.v, causal, begins)) <= attention_tolerance_bf16);
      }
  }
}

TEST_CASE("cpu-flash: keys before a sample's first real key are never read", "[kernels][decoder]") {
  cpu_flash_options model;
  model.amx_tile_model = true;
  const auto isas = cpu_flash_isas();
  const bool has_model = std::find(isas.begin(), isas.end(), flash_isa::avx512_bf16) != isas.end();
  for (flash_isa isa : isas)
    for (auto dtype : {torch::kFloat, torch::kBFloat16})
      for (bool on_model : {false, true}) {
        if (on_model && (!has_model || dtype != torch::kBFloat16 || isa != isas.back())) continue;
        const int64_t s = 300, first = 261;  // the pad run crosses a key block
        auto in = cached_inputs(2, 4, 2, 1, s, 64, dtype, 23);
        const auto begins = torch::tensor({first, int64_t{0}}, torch::kLong);
        const cpu_flash_options o = on_model ? model : cpu_flash_options{isa};
        const auto before = cpu_flash_attention_cached(in.q, in.k, in.v, true, begins, o);
        in.k[0].slice(1, 0, first).fill_(std::nan(""));
        in.v[0].slice(1, 0, first).fill_(std::nan(""));
        const auto after = cpu_flash_attention_cached(in.q, in.k, in.v, true, begins, o);
        INFO(to_string(isa) << " " << c10::toString(dtype) << (on_model ? " (tile model)" : ""));
        CHECK(torch::equal(before[0], after[0]));
      }
}

TEST_CASE("cpu-flash: a decoder call refuses shapes it cannot compute, by name", "[kernels][decoder]") {
  const auto in = cached_inputs(2, 4, 2, 3, 16, 32, torch::kFloat, 3);
  CHECK_THROWS_WITH(cpu_flash_attention_cached(in.q, in.k, in.q, false), Catch::Contains("of one shape"));
  CHECK_THROWS_WITH(cpu_flash_attention_cached(in.q, in.k.narrow(2, 0, 2), in.v.narrow(2, 0, 2), true),
                    Catch::Contains("T <= S"));
  const auto three = cached_inputs(2, 4, 3, 3, 16, 32, torch::kFloat, 3);
  CHECK_THROWS_WITH(cpu_flash_attention_cached(three.q, three.k, three.v, true), Catch::Contains("multiple of the key/value heads"));
  CHECK_THROWS_WITH(cpu_flash_attention_cached(in.q, in.k, in.v, true, torch::tensor({0, 16}, torch::kLong)),
                    Catch::Contains("first real key"));
  CHECK_THROWS_WITH(cpu_flash_attention_cached(in.q, in.k, in.v, true, torch::tensor({0}, torch::kLong)),
                    Catch::Contains("key_begins must be (B)"));
}

TEST_CASE("cpu-flash: padded keys are never read", "[kernels]") {
  for (flash_isa isa : cpu_flash_isas())
    for (auto dtype : {torch::kFloat, torch::kBFloat16}) {
      const int64_t s = 300, len = 137;
      auto in = strided_inputs(2, 2, s, 64, dtype, 11);
      const auto lengths = torch::tensor({len, s}, torch::kLong);
      const auto before = cpu_flash_attention(in.q, in.k, in.v, false, lengths, {isa});
      // NaN in sample 0's padded keys and values: any read of them would poison its output.
      in.k[0].slice(1, len).fill_(std::nan(""));
      in.v[0].slice(1, len).fill_(std::nan(""));
      const auto after = cpu_flash_attention(in.q, in.k, in.v, false, lengths, {isa});
      INFO(to_string(isa) << " " << c10::toString(dtype));
      CHECK(torch::equal(before[0], after[0]));
    }
}

TEST_CASE("cpu-flash: a planted online-softmax bug is caught, and the benchmark never times it", "[kernels]") {
  // Skipping the rescale of the output accumulator when the running max grows is invisible in a
  // single key block and wrong from the second on.
  const auto in = strided_inputs(1, 2, 600, 64, torch::kFloat, 17);
  const auto ref = reference_attention(in.q, in.k, in.v, false);
  cpu_flash_options planted;
  planted.planted_skip_rescale = true;
  CHECK(rel_l2(cpu_flash_attention(in.q, in.k, in.v, false, {}, planted), ref) > 1e-2);
  CHECK(rel_l2(cpu_flash_attention(in.q, in.k, in.v, false, {}, {}), ref) <= attention_tolerance_fp32);

  attention_impl impl = cpu_flash_attention_impl();
  impl.name = "planted-cpu-flash-no-rescale";
  impl.run = [planted](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                       const torch::Tensor& lengths) { return cpu_flash_attention(q, k, v, causal, lengths, planted); };
  register_attention_impl(impl);
  attention_bench_options o;
  o.grid = {{1}, {2}, {600}, {64}, {false}, {"fp32"}};
  o.impls = {"cpu-flash", "planted-cpu-flash-no-rescale"};
  o.warmup = 0;
  o.repetitions = 1;
  const auto rows = run_attention_bench(o);
  unregister_attention_impl(impl.name);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].status == attention_status::ok);
  CHECK_FALSE(rows[0].code_path.empty());
  CHECK(rows[1].status == attention_status::fail);
  CHECK(rows[1].repetitions == 0);
  CHECK(std::isnan(rows[1].median_ms));
}

TEST_CASE("cpu-flash: key padding in the benchmark counts only real keys' work", "[kernels]") {
  attention_bench_options o;
  o.grid = {{2}, {2}, {256}, {32}, {false, true}, {"fp32"}, {0.5}};
  o.impls = {"naive", "sdpa-flash", "cpu-flash"};
  o.warmup = 0;
  o.repetitions = 1;
  for (const auto& r : run_attention_bench(o)) {
    INFO(r.impl << (r.point.causal ? " causal" : "") << ": " << r.reason);
    CHECK(r.status == attention_status::ok);  // naive and SDPA with a mask, cpu-flash with lengths
    CHECK(attention_key_length(r.point) == 128);
    CHECK(attention_flops(r.point) == 4.0 * 2 * 2 * (r.point.causal ? 256.0 * 128 - 128.0 * 128 / 2 : 256.0 * 128) * 32);
  }
}

TEST_CASE("cpu-flash: refuses what it cannot compute, by name", "[kernels]") {
  const auto in = strided_inputs(2, 2, 16, 32, torch::kFloat, 3);
  CHECK_THROWS_WITH(cpu_flash_attention(in.q.to(torch::kHalf), in.k.to(torch::kHalf), in.v.to(torch::kHalf), false),
                    Catch::Contains("fp32 or bf16"));
  CHECK_THROWS_WITH(cpu_flash_attention(in.q, in.k, in.v, false, torch::tensor({16, 0}, torch::kLong)),
                    Catch::Contains("[1, 16]"));
  CHECK_THROWS_WITH(cpu_flash_attention(in.q, in.k, in.v, false, torch::tensor({16, 17}, torch::kLong)),
                    Catch::Contains("[1, 16]"));
  const auto q = in.q.clone().requires_grad_(true);
  CHECK_THROWS_WITH(cpu_flash_attention(q, in.k, in.v, false), Catch::Contains("forward-only"));
}

TEST_CASE("kernels: the catalog names exactly the registered kernels, each for its device", "[kernels]") {
  const auto impls = kernel_attention_impls();
  REQUIRE(impls.size() == kernel_catalog.size());
  for (std::size_t i = 0; i < impls.size(); ++i) {
    CHECK(impls[i].name == kernel_catalog[i].name);
    const bool cuda = kernel_catalog[i].device == "cuda";
    CHECK(impls[i].unavailable(cuda ? torch::kCPU : torch::Device(torch::kCUDA, 0)).has_value());
    CHECK(default_kernel(cuda) == (cuda ? "cuda-flash2" : "cpu-flash"));
  }
  CHECK_FALSE(find_attention_impl("cpu-flash")->unavailable(torch::kCPU).has_value());
}
