// The process-wide SDPA backend selection: concurrent guards of one backend share it, guards of
// different backends are serialised, and the flags come back as they were (issue 16, 2.2).
#include "core/sdpa_backend_guard.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include <ATen/Context.h>

using namespace attnbench;

namespace {

struct flags {
  bool flash, efficient, math, cudnn;
  bool operator==(const flags& o) const {
    return flash == o.flash && efficient == o.efficient && math == o.math && cudnn == o.cudnn;
  }
};

flags now() {
  auto& ctx = at::globalContext();
  return {ctx.userEnabledFlashSDP(), ctx.userEnabledMemEfficientSDP(), ctx.userEnabledMathSDP(),
          ctx.userEnabledCuDNNSDP()};
}

// Waits (bounded) until `pred` holds; false on timeout.
template <class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 2000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

const c10::Device cpu(c10::kCPU);

}  // namespace

TEST_CASE("sdpa backend guard: sets the backend's flags and restores the saved ones", "[core]") {
  const flags before = now();
  {
    const sdpa_backend_guard g(sdpa_backend::math, cpu);
    CHECK(now() == flags{false, false, true, false});
    CHECK(current_sdpa_selection().holders == 1);
    CHECK(current_sdpa_selection().backend == sdpa_backend::math);
  }
  CHECK(now() == before);
  CHECK(current_sdpa_selection().holders == 0);
  {
    const sdpa_backend_guard g(sdpa_backend::auto_select, cpu);
    CHECK(now() == before);  // "auto" leaves the flags alone
  }
}

TEST_CASE("sdpa backend guard: threads asking for one backend hold it together", "[core]") {
  const flags before = now();
  std::atomic<bool> release{false};
  std::thread other([&] {
    const sdpa_backend_guard g(sdpa_backend::math, cpu);
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  REQUIRE(eventually([] { return current_sdpa_selection().holders == 1; }));
  {
    // Not serialised: this guard joins while the other thread still holds it.
    const sdpa_backend_guard g(sdpa_backend::math, cpu);
    CHECK(current_sdpa_selection().holders == 2);
    release = true;
    other.join();
    // The other thread's guard ended; the flags stay this one's until it ends too.
    CHECK(current_sdpa_selection().holders == 1);
    CHECK(now() == flags{false, false, true, false});
  }
  CHECK(now() == before);
}

TEST_CASE("sdpa backend guard: another backend waits until the current one is released", "[core]") {
  const flags before = now();
  std::atomic<bool> forced_ran{false};
  std::atomic<bool> auto_saw_saved_flags{false};
  std::thread forced, automatic;
  {
    const sdpa_backend_guard math(sdpa_backend::math, cpu);
    forced = std::thread([&] {
      const sdpa_backend_guard g(sdpa_backend::flash, cpu);
      forced_ran = now() == flags{true, false, false, false};
    });
    automatic = std::thread([&] {
      const sdpa_backend_guard g(sdpa_backend::auto_select, cpu);
      // A forced backend never leaks into an "auto" call: it runs under the saved flags.
      auto_saw_saved_flags = now() == before;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(!forced_ran);                                 // still waiting
    CHECK(now() == flags{false, false, true, false});  // and it changed nothing meanwhile
    CHECK(current_sdpa_selection().holders == 1);
  }
  forced.join();
  automatic.join();
  CHECK(forced_ran);
  CHECK(auto_saw_saved_flags);
  CHECK(now() == before);
  CHECK(current_sdpa_selection().holders == 0);
}

TEST_CASE("sdpa backend guard: another backend nested on the same thread is refused, not a deadlock", "[core]") {
  const flags before = now();
  {
    const sdpa_backend_guard outer(sdpa_backend::math, cpu);
    CHECK_THROWS_WITH(sdpa_backend_guard(sdpa_backend::flash, cpu), Catch::Matchers::Contains("wait for itself"));
    const sdpa_backend_guard same(sdpa_backend::math, cpu);  // the same backend nests
    CHECK(current_sdpa_selection().holders == 2);
  }
  CHECK(now() == before);
}
