#include <catch2/catch.hpp>

#include "workload/batcher.hpp"

using namespace attnbench;

TEST_CASE("a dynamic batcher goes as soon as the queued tokens fill the budget", "[workload]") {
  batching_config c;
  c.kind = "dynamic";
  c.max_tokens = 100;
  c.max_batch_size = 64;
  c.max_queue_delay_ms = 1000;  // the window alone would hold the batch for a second
  batcher b(c, 128);
  b.push({0, 0, 40, 0.0});
  b.push({1, 1, 40, 0.0});
  CHECK_FALSE(b.poll(0.001));  // 80 tokens queued: room for more
  b.push({2, 2, 30, 0.0});
  auto batch = b.poll(0.001);  // 110 ≥ 100: waiting cannot make a bigger batch
  REQUIRE(batch);
  CHECK(batch->padded_length * static_cast<int64_t>(batch->requests.size()) <= 100);
}
