// The rank-pass hook: none by default (what the attnbench binary runs with), set and removed by
// the program that wants one (the test-hooks binary).
#include <catch2/catch.hpp>

#include "parallel/rank_pass_hook.hpp"

using namespace attnbench;

namespace {

int calls = 0;
void count_call(int /*rank*/, int64_t /*pass*/) { ++calls; }

}  // namespace

TEST_CASE("no rank-pass hook is set unless a program sets one", "[parallel]") {
  REQUIRE(current_rank_pass_hook() == nullptr);
  set_rank_pass_hook(count_call);
  CHECK(current_rank_pass_hook() == &count_call);
  current_rank_pass_hook()(1, 3);
  CHECK(calls == 1);
  set_rank_pass_hook(nullptr);
  CHECK(current_rank_pass_hook() == nullptr);
}
