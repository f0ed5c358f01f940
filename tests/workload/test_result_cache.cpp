#include <catch2/catch.hpp>

#include "workload/result_cache.hpp"

using namespace attnbench;

TEST_CASE("the result cache answers identical sequences only", "[workload]") {
  const std::vector<int64_t> a{101, 7, 8, 102}, b{101, 7, 9, 102}, a_again{101, 7, 8, 102};
  result_cache cache;
  CHECK_FALSE(cache.find_or_insert(a, 0));
  CHECK_FALSE(cache.find_or_insert(b, 1));
  auto hit = cache.find_or_insert(a_again, 2);
  REQUIRE(hit);
  CHECK(*hit == 0);
  CHECK(cache.hits() == 1);
  CHECK(cache.lookups() == 3);
  cache.clear();
  CHECK_FALSE(cache.find_or_insert(a_again, 5));
}
