// The attention breakdown on events written by hand: shares add up, peaks per region.
#include <catch2/catch.hpp>

#include <numeric>

#include "profile/region_breakdown.hpp"

using namespace attnbench;

namespace {

trace_event region(const std::string& name, int64_t start, int64_t end) {
  trace_event e;
  e.name = name;
  e.kind = event_kind::region;
  e.start_ns = start;
  e.end_ns = end;
  e.thread = 1;
  return e;
}

trace_event memory(int64_t at, int64_t bytes) {
  trace_event e;
  e.name = "[memory]";
  e.kind = event_kind::memory;
  e.start_ns = e.end_ns = at;
  e.bytes = bytes;
  e.thread = 1;
  return e;
}

// Two layers of 100 ns: qkv 10, scores 20, softmax 30, ffn 25, 15 unlabelled; plus an
// embeddings region outside the layers that must not count. Softmax allocates 300 then frees
// 100 then allocates 50 (peak 300); scores allocates 80 and frees it.
std::vector<trace_event> two_layers() {
  std::vector<trace_event> e{region("embeddings", 0, 50)};
  for (int64_t base : {100, 300}) {
    e.push_back(region("encoder.layer", base, base + 100));
    e.push_back(region("attention.qkv_proj", base, base + 10));
    e.push_back(region("attention.scores", base + 10, base + 30));
    e.push_back(memory(base + 12, 80));
    e.push_back(memory(base + 28, -80));
    e.push_back(region("attention.softmax", base + 30, base + 60));
    e.push_back(memory(base + 31, 300));
    e.push_back(memory(base + 40, -100));
    e.push_back(memory(base + 50, 50));
    e.push_back(region("ffn", base + 70, base + 95));
  }
  return e;
}

}  // namespace

TEST_CASE("breakdown: shares of a layer add up to 1, unlabelled time included", "[profile]") {
  const auto b = make_region_breakdown("naive", two_layers(), /*gpu_memory=*/false);
  CHECK(b.layers == 2);
  CHECK(b.layer_ns == 200);
  REQUIRE(b.rows.size() == 5);
  CHECK(b.rows[0].name == "attention.qkv_proj");
  CHECK(b.rows[1].name == "attention.scores");
  CHECK(b.rows[2].name == "attention.softmax");
  CHECK(b.rows[3].name == "ffn");
  CHECK(b.rows[4].name == "unlabelled");
  CHECK(b.rows[2].share == Approx(0.30));
  CHECK(b.rows[4].total_ns == 30);
  const double total = std::accumulate(b.rows.begin(), b.rows.end(), 0.0,
                                       [](double s, const region_row& r) { return s + r.share; });
  CHECK(total == Approx(1.0).epsilon(1e-12));
  CHECK(b.attention_share == Approx(0.60));
}

TEST_CASE("breakdown: peak memory per region is its largest running allocation", "[profile]") {
  const auto b = make_region_breakdown("naive", two_layers(), false);
  CHECK(b.rows[1].peak_bytes == 80);   // scores
  CHECK(b.rows[2].peak_bytes == 300);  // softmax: 300, then 200, then 250
  CHECK(b.rows[0].peak_bytes == 0);
  CHECK(b.layer_peak_bytes == 300);  // the layer sees 80 − 80 + 300 …
  // GPU memory was asked for and there is none.
  CHECK(make_region_breakdown("naive", two_layers(), true).rows[2].peak_bytes == 0);
}

TEST_CASE("breakdown: markdown puts variants side by side, CSV is long form", "[profile]") {
  auto sdpa_events = two_layers();
  for (auto& e : sdpa_events)
    if (e.name == "attention.scores" || e.name == "attention.softmax") e.name = "attention.sdpa";
  const std::vector<region_breakdown> both{make_region_breakdown("naive", two_layers(), false),
                                           make_region_breakdown("sdpa", sdpa_events, false)};
  const std::string md = region_breakdown_markdown(both);
  CHECK_THAT(md,
             Catch::Contains("| Region | naive: share | naive: ms/layer | naive: peak MiB | sdpa: share |"));
  CHECK_THAT(md, Catch::Contains("| attention.softmax | 30.0% |"));
  CHECK_THAT(md, Catch::Contains("| attention.sdpa | – | – | – | 50.0% |"));
  CHECK_THAT(md, Catch::Contains("**60.0%**"));
  const std::string csv = region_breakdown_csv(both);
  CHECK_THAT(csv, Catch::StartsWith("variant,seq,region,instances,total_ms,ms_per_layer,share,peak_bytes\n"));
  CHECK_THAT(csv, Catch::Contains("sdpa,all,attention.sdpa,4,0.000100,0.000050,0.500000,300\n"));
  CHECK_THAT(csv, Catch::Contains("naive,all,encoder.layer,2,0.000200,0.000100,1.000000,300\n"));
}

TEST_CASE("breakdown: attention share by sequence length, one row per length", "[profile]") {
  auto at128 = make_region_breakdown("naive", two_layers(), false);
  at128.seq = 128;
  auto at256 = at128;
  at256.seq = 256;
  at256.attention_share = 0.75;
  const std::string md = attention_by_length_markdown({at128, at256});
  CHECK_THAT(md, Catch::StartsWith(
                     "| Seq | naive: attention share | naive: ms/layer | naive: attention peak MiB |\n"));
  CHECK_THAT(md, Catch::Contains("| 128 | 60.0% | 0.000 | 0.00 |\n"));
  CHECK_THAT(md, Catch::Contains("| 256 | 75.0% |"));
  CHECK_THAT(region_breakdown_csv({at128}), Catch::Contains("naive,128,attention.softmax,2,"));
}

TEST_CASE("breakdown: without profile_memory every peak is n/a, not 0.00 MiB", "[profile][memory-na]") {
  auto b = make_region_breakdown("naive", two_layers(), false);
  b.memory_recorded = false;
  const std::string md = region_breakdown_markdown({b});
  CHECK_THAT(md, Catch::Contains("| attention.softmax | 30.0% |"));
  CHECK_THAT(md, !Catch::Contains("0.00 |"));
  CHECK_THAT(md, Catch::Contains("| n/a |"));
  CHECK_THAT(region_breakdown_csv({b}), Catch::Contains("naive,all,encoder.layer,2,0.000200,0.000100,1.000000,\n"));
  b.seq = 128;
  CHECK_THAT(attention_by_length_markdown({b}), Catch::Contains("| 128 | 60.0% | 0.000 | n/a |\n"));
}
