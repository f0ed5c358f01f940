// The server batcher's window logic, driven by a fake clock: deterministic.
#include <catch2/catch.hpp>

#include "workload/batcher.hpp"

using namespace attnbench;

namespace {

batching_config static_window(int64_t bs, double delay_ms) {
  batching_config c;
  c.kind = "static";
  c.batch_size = bs;
  c.padding = padding_kind::longest;
  c.max_queue_delay_ms = delay_ms;
  return c;
}

}  // namespace

TEST_CASE("a batch goes when the oldest request's window closes", "[workload]") {
  batcher b(static_window(4, 10), 128);
  CHECK_FALSE(b.deadline());
  b.push({0, 0, 20, 1.000});
  b.push({1, 1, 30, 1.004});
  CHECK(*b.deadline() == Approx(1.010));
  CHECK_FALSE(b.poll(1.009));  // window still open, not full
  auto batch = b.poll(1.010);
  REQUIRE(batch);
  CHECK(batch->requests.size() == 2);
  CHECK(batch->padded_length == 30);
  CHECK(b.size() == 0);
}

TEST_CASE("a full queue goes at once, oldest first", "[workload]") {
  batcher b(static_window(2, 1000), 128);
  b.push({0, 0, 8, 0.0});
  CHECK_FALSE(b.poll(0.001));
  b.push({1, 1, 9, 0.001});
  b.push({2, 2, 7, 0.002});
  auto first = b.poll(0.002);
  REQUIRE(first);
  CHECK(first->requests[0].id == 0);
  CHECK(first->requests[1].id == 1);
  CHECK(b.size() == 1);
  CHECK_FALSE(b.poll(0.003));
  auto rest = b.poll(0.003, /*flush=*/true);
  REQUIRE(rest);
  CHECK(rest->requests[0].id == 2);
}

TEST_CASE("dynamic batching groups the oldest request with queued ones of similar length", "[workload]") {
  batching_config c;
  c.kind = "dynamic";
  c.max_tokens = 64;
  c.max_batch_size = 8;
  c.max_queue_delay_ms = 5;
  batcher b(c, 128);
  b.push({0, 0, 30, 0.0});   // oldest
  b.push({1, 1, 60, 0.001});
  b.push({2, 2, 31, 0.002});
  b.push({3, 3, 4, 0.003});
  auto batch = b.poll(0.005);
  REQUIRE(batch);
  // 30 and 31 fit 2·31 = 62 ≤ 64 together; 60 would not fit with them.
  std::vector<int64_t> ids;
  for (const auto& r : batch->requests) ids.push_back(r.id);
  CHECK(std::count(ids.begin(), ids.end(), 0) == 1);
  CHECK(batch->padded_length * static_cast<int64_t>(ids.size()) <= 64);
  CHECK(std::count(ids.begin(), ids.end(), 1) == 0);
  CHECK(b.size() + ids.size() == 4);
}
