// The attention microbenchmark's record: FLOP convention, markdown columns, CSV.
#include <catch2/catch.hpp>

#include "report/attention_table.hpp"

using namespace attnbench;

namespace {

attention_row row(int64_t seq, const std::string& impl, attention_status status, double ms, double speedup) {
  attention_row r;
  r.point = {1, 12, seq, 64, false, "fp32"};
  r.impl = impl;
  r.status = status;
  r.median_ms = ms;
  r.min_ms = ms;
  r.rel_l2 = status == attention_status::ok ? 1e-7 : attention_row::nan;
  r.tolerance = 1e-5;
  r.speedup = speedup;
  r.peak_bytes = status == attention_status::ok ? 3 << 20 : -1;
  r.repetitions = status == attention_status::ok ? 5 : 0;
  if (status != attention_status::ok) r.reason = "over the cap";
  return r;
}

}  // namespace

TEST_CASE("attention FLOPs follow the FlashAttention convention", "[report]") {
  attention_point p{2, 12, 1024, 64, false, "fp32"};
  CHECK(attention_flops(p) == 4.0 * 2 * 12 * 1024 * 1024 * 64);
  p.causal = true;
  CHECK(attention_flops(p) == 2.0 * 2 * 12 * 1024 * 1024 * 64);
}

TEST_CASE("attention markdown shows only the varying dimensions and explains what did not run", "[report]") {
  const std::vector<attention_row> rows{
      row(128, "naive", attention_status::ok, 2.0, 1.0),
      row(128, "sdpa-flash", attention_status::ok, 1.0, 2.0),
      row(4096, "naive", attention_status::oom, attention_row::nan, attention_row::nan)};
  const std::string md = attention_markdown(rows);
  CHECK_THAT(md, Catch::StartsWith("Fixed: batch 1, heads 12, head_dim 64, not causal, fp32.\n"));
  CHECK_THAT(md, Catch::Contains("| Seq | Implementation | Status | rel L2 | Median (ms) | TFLOP/s | Peak "
                                 "MiB | Speedup vs naive |"));
  CHECK_THAT(md, Catch::Contains("| 128 | sdpa-flash | ok | 1.00e-07 | 1.000 | "));
  CHECK_THAT(md, Catch::Contains("| 3.00 | 2.00× |"));
  CHECK_THAT(md, Catch::Contains("| 4096 | naive | OOM | – | – | – | – | – |"));
  CHECK_THAT(md, Catch::Contains("- naive at B=1 H=12 S=4096 D=64 fp32: OOM — over the cap"));
}

TEST_CASE("attention CSV has one line per row with empty cells for undefined values", "[report]") {
  const std::string csv =
      attention_csv({row(4096, "naive", attention_status::oom, attention_row::nan, attention_row::nan)});
  CHECK(csv ==
        "batch,heads,seq,head_dim,causal,dtype,impl,status,reason,rel_l2,tolerance,repetitions,median_ms,min_"
        "ms,"
        "flops,tflops,peak_bytes,speedup_vs_naive,valid,key_length,ceiling_share,code_path\n"
        "1,12,4096,64,false,fp32,naive,OOM,over the cap,,1e-05,0,,,5.15396e+10,,,,1,4096,,\n");
}

TEST_CASE("attention FLOPs with key padding count real keys only", "[report]") {
  attention_point p{2, 12, 1024, 64, false, "fp32", 0.25};
  CHECK(attention_key_length(p) == 256);
  CHECK(attention_flops(p) == 4.0 * 2 * 12 * 1024 * 256 * 64);
  p.causal = true;  // the triangle over real keys: S·L − L²/2 pairs
  CHECK(attention_flops(p) == 4.0 * 2 * 12 * (1024.0 * 256 - 256.0 * 256 / 2) * 64);
  p.valid = 0;  // at least one real key
  CHECK(attention_key_length(p) == 1);
}

TEST_CASE("attention markdown: key padding, the share of the ceiling and the code path that ran", "[report]") {
  auto a = row(1024, "sdpa-flash", attention_status::ok, 2.0, 1.0);
  auto b = row(1024, "cpu-flash", attention_status::ok, 1.0, 2.0);
  a.point.valid = b.point.valid = 0.5;
  a.tflops = 0.1;
  b.tflops = 0.2;
  a.ceiling_share = 0.5;
  b.ceiling_share = 1.0;
  b.code_path = "avx512";
  const std::string md = attention_markdown({a, b}, {{"fp32", 200.0}});
  CHECK_THAT(md, Catch::Contains("fp32, 50% of keys real."));
  CHECK_THAT(md, Catch::Contains("| TFLOP/s | Of ceiling | Peak MiB |"));
  CHECK_THAT(md, Catch::Contains("| cpu-flash | ok | 1.00e-07 | 1.000 | 0.2000 | 100% | 3.00 | 2.00× |"));
  CHECK_THAT(md, Catch::Contains("cpu-flash code paths, chosen at run time from this machine's features: avx512 for "
                                 "fp32."));
  CHECK_THAT(md, Catch::Contains("matmul ceiling measured in this run (fp32 200.0 GFLOP/s"));
  const std::string csv = attention_csv({b});
  CHECK_THAT(csv, Catch::EndsWith(",0.5,512,1,avx512\n"));
}
