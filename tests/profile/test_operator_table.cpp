// The operator table on events written by hand: self time, shares, memory, top N, CSV.
#include <catch2/catch.hpp>

#include "profile/operator_table.hpp"

using namespace attnbench;

namespace {

trace_event ev(const std::string& name, event_kind kind, int64_t start, int64_t end) {
  trace_event e;
  e.name = name;
  e.kind = kind;
  e.start_ns = start;
  e.end_ns = end;
  e.thread = 1;
  return e;
}

// Two calls of aten::linear (each 3 ms, 2 ms of it in aten::addmm), one aten::softmax of 1 ms
// inside a labelled region; 1 MiB allocated inside addmm, freed inside softmax.
std::vector<trace_event> sample() {
  std::vector<trace_event> e;
  e.push_back(ev("attention.qkv_proj", event_kind::region, 0, 20'000'000));
  for (int64_t at : {0, 5'000'000}) {
    e.push_back(ev("aten::linear", event_kind::op, at, at + 3'000'000));
    e.push_back(ev("aten::addmm", event_kind::op, at + 500'000, at + 2'500'000));
  }
  trace_event m = ev("[memory]", event_kind::memory, 600'000, 600'000);
  m.bytes = 1 << 20;
  e.push_back(m);
  e.push_back(ev("aten::softmax", event_kind::op, 10'000'000, 11'000'000));
  m.start_ns = m.end_ns = 10'500'000;
  m.bytes = -(1 << 20);
  e.push_back(m);
  return e;
}

}  // namespace

TEST_CASE("operator table: self and total time, share, memory, ordered by self time", "[profile]") {
  const auto t = make_operator_table(sample(), 10);
  REQUIRE(t.rows.size() == 3);
  CHECK(t.operators == 3);
  CHECK(t.all_self_ns == 7'000'000);  // 2 × 3 ms of linear (addmm included) + 1 ms softmax
  CHECK(t.rows[0].name == "aten::addmm");
  CHECK(t.rows[0].calls == 2);
  CHECK(t.rows[0].self_ns == 4'000'000);
  CHECK(t.rows[0].total_ns == 4'000'000);
  CHECK(t.rows[0].self_share == Approx(4.0 / 7.0));
  CHECK(t.rows[0].self_bytes == (1 << 20));
  CHECK(t.rows[1].name == "aten::linear");
  CHECK(t.rows[1].self_ns == 2'000'000);
  CHECK(t.rows[1].total_ns == 6'000'000);
  CHECK(t.rows[2].name == "aten::softmax");
  CHECK(t.rows[2].self_bytes == -(1 << 20));
  CHECK_FALSE(t.has_device);
  double shares = 0;
  for (const auto& r : t.rows) shares += r.self_share;
  CHECK(shares == Approx(1.0));
}

TEST_CASE("operator table: top N keeps the largest, the markdown and CSV list them", "[profile]") {
  const auto t = make_operator_table(sample(), 1);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.operators == 3);
  const std::string md = operator_table_markdown(t);
  CHECK_THAT(md, Catch::Contains("| aten::addmm | 2 | 4.000 | 4.000 | 57.1% | 1.00 |"));
  CHECK_THAT(md, Catch::Contains("1 of 3 operators"));
  CHECK(operator_table_csv(t) ==
        "operator,calls,self_cpu_ms,total_cpu_ms,self_cpu_share,cuda_ms,self_memory_bytes\n"
        "aten::addmm,2,4.000,4.000,0.571429,0.000,1048576\n");
}

TEST_CASE("operator table: GPU kernels count for the op that launched them", "[profile]") {
  auto e = sample();
  e[2].correlation = 42;  // the first addmm
  trace_event k = ev("gemm_kernel", event_kind::device, 700'000, 1'200'000);
  k.on_gpu = true;
  k.linked_correlation = 42;
  e.push_back(k);
  const auto t = make_operator_table(e, 10);
  CHECK(t.has_device);
  CHECK(t.all_device_ns == 500'000);
  CHECK(t.rows[0].name == "aten::addmm");
  CHECK(t.rows[0].device_ns == 500'000);
  CHECK_THAT(operator_table_markdown(t), Catch::Contains("CUDA (ms)"));
}
