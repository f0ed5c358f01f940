// The server scenario's load thread and its hand-off to the serving thread (the sanitizer build
// runs this under ThreadSanitizer: the only part of the server scenario on two threads).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include "workload/load_generator.hpp"

using namespace attnbench;

namespace {

dataset three_samples() {
  dataset d;
  d.samples = {{101, 7, 102}, {101, 7, 8, 9, 102}, {101, 102}};
  return d;
}

}  // namespace

TEST_CASE("the load thread delivers every arrival in order, and the consumer drains them as they come",
          "[workload][server]") {
  const dataset data = three_samples();
  std::vector<arrival> arrivals;
  for (int i = 0; i < 200; ++i) arrivals.push_back({0.0002 * i, i % 3});
  std::vector<queued_request> got;
  {
    load_generator load(arrivals, data, load_clock::now());
    std::unique_lock<std::mutex> lock(load.mutex);
    // As the serving loop does: take what arrived, work without the lock, wait for more.
    while (true) {
      while (!load.inbox.empty()) {
        got.push_back(load.inbox.front());
        load.inbox.pop_front();
      }
      if (load.all_arrived) break;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // "a batch"
      lock.lock();
      load.wake.wait(lock, [&] { return !load.inbox.empty() || load.all_arrived; });
    }
  }
  REQUIRE(got.size() == 200);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(i);
    CHECK(got[i].id == static_cast<int64_t>(i));
    CHECK(got[i].sample == static_cast<int64_t>(i % 3));
    CHECK(got[i].length == static_cast<int64_t>(data.samples[i % 3].size()));
    CHECK(got[i].arrival_s == arrivals[i].t_s);
  }
}

TEST_CASE("a consumer that leaves early stops the load thread without waiting for the arrivals",
          "[workload][server]") {
  const dataset data = three_samples();
  const std::vector<arrival> arrivals = {{0.0, 0}, {3600.0, 1}};  // the second an hour away
  const auto started = std::chrono::steady_clock::now();
  {
    load_generator load(arrivals, data, load_clock::now());
    std::unique_lock<std::mutex> lock(load.mutex);
    load.wake.wait(lock, [&] { return !load.inbox.empty(); });
    CHECK(load.inbox.size() == 1);
  }  // leaves (as an exception in the serving loop would): stops and joins
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}
