// The parallel executors' hand-offs (common/thread_sync.hpp), on threads: the sanitizer build runs
// these under ThreadSanitizer, standing in for the data-parallel workers and pipeline stages,
// whose tensors TSan cannot follow into LibTorch.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_sync.hpp"

using namespace attnbench;

TEST_CASE("blocking queues chain threads as pipeline stages do: every item once, in order", "[common][threads]") {
  // Three stages, each popping from its queue and pushing to the next; the items carry heap data
  // (as messages carry tensors) that each stage changes.
  constexpr int items = 500;
  blocking_queue<std::unique_ptr<std::vector<int>>> q0, q1, q2, out;
  blocking_queue<std::unique_ptr<std::vector<int>>>* ins[] = {&q0, &q1, &q2};
  blocking_queue<std::unique_ptr<std::vector<int>>>* outs[] = {&q1, &q2, &out};
  completion_counter flushed;
  std::vector<std::thread> stages;
  for (int s = 0; s < 3; ++s)
    stages.emplace_back([&, s] {
      for (;;) {
        auto item = ins[s]->pop();
        if (!item) {  // the stop signal goes down the line
          flushed.add();
          outs[s]->push(nullptr);
          return;
        }
        item->push_back(s);
        outs[s]->push(std::move(item));
      }
    });
  for (int i = 0; i < items; ++i) q0.push(std::make_unique<std::vector<int>>(1, i));
  q0.push(nullptr);
  for (int i = 0; i < items; ++i) {
    const auto item = out.pop();
    REQUIRE(item);
    CHECK(*item == std::vector<int>{i, 0, 1, 2});
  }
  CHECK_FALSE(out.pop());
  flushed.wait_for(3);
  for (auto& t : stages) t.join();
}

TEST_CASE("a round dispatch runs every worker once per round, and the dispatcher sees what they published",
          "[common][threads]") {
  constexpr int workers = 3, rounds = 100;
  round_dispatch<std::shared_ptr<int>> dispatch;  // the context: as the dispatcher's memory scope
  std::vector<int> result(workers, -1);
  std::vector<int> runs(workers, 0);
  std::vector<std::thread> crew;
  for (int w = 0; w < workers; ++w)
    crew.emplace_back([&, w] {
      int64_t seen = 0;
      std::shared_ptr<int> context;
      while (dispatch.next_round(seen, context)) {
        const int value = *context * 10 + w;  // the round's work, outside the lock
        ++runs[w];                            // this worker's own counter: no lock needed
        dispatch.finish([&] { result[w] = value; });
      }
    });
  for (int r = 0; r < rounds; ++r) {
    dispatch.run_round(std::make_shared<int>(r), workers);
    for (int w = 0; w < workers; ++w) CHECK(result[w] == r * 10 + w);
    dispatch.clear_context();
  }
  dispatch.stop();
  for (auto& t : crew) t.join();
  CHECK(runs == std::vector<int>(workers, rounds));
}
