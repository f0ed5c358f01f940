// The token-balanced split of a workload, and how a rank reads who it is from the environment.
#include "parallel/shard.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "common/error.hpp"
#include "parallel/rank_env.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

dataset with_lengths(const std::vector<int64_t>& lengths) {
  dataset d;
  for (auto n : lengths) d.samples.emplace_back(static_cast<std::size_t>(n), 7);
  return d;
}

std::vector<int64_t> all_rows(const dataset& d) {
  std::vector<int64_t> rows(d.samples.size());
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

}  // namespace

TEST_CASE("shards: every row once, in dataset order, tokens within one sample of each other", "[parallel]") {
  const dataset d = with_lengths({100, 3, 50, 50, 7, 90, 10, 10, 60, 20});
  for (int64_t workers : {1, 2, 3, 4}) {
    const auto shards = shard_by_tokens(d, all_rows(d), workers);
    REQUIRE(static_cast<int64_t>(shards.size()) == workers);
    std::vector<int64_t> seen;
    int64_t most = 0, least = std::numeric_limits<int64_t>::max();
    for (const auto& s : shards) {
      CHECK(std::is_sorted(s.begin(), s.end()));
      seen.insert(seen.end(), s.begin(), s.end());
      most = std::max(most, tokens_of(d, s));
      least = std::min(least, tokens_of(d, s));
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == all_rows(d));
    CHECK(most - least <= 100);  // the longest sample
  }
  // Greedy longest-first on {100, 90, 60, 50, 50, 20, 10, 10, 7, 3}: 200 against 200.
  const auto two = shard_by_tokens(d, all_rows(d), 2);
  CHECK(tokens_of(d, two[0]) == 200);
  CHECK(tokens_of(d, two[1]) == 200);
  CHECK(two[0] == std::vector<int64_t>{0, 2, 3});  // by tokens, not by halves of the sample list
  CHECK(two[1] == std::vector<int64_t>{1, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("shards: a subset of rows, and more workers than rows", "[parallel]") {
  const dataset d = with_lengths({5, 5, 5, 5});
  const auto shards = shard_by_tokens(d, {1, 3}, 3);
  CHECK(shards[0] == std::vector<int64_t>{1});
  CHECK(shards[1] == std::vector<int64_t>{3});
  CHECK(shards[2].empty());
  CHECK_THROWS_AS(shard_by_tokens(d, {0}, 0), std::invalid_argument);
}

TEST_CASE("imbalance: the slowest worker over the mean per pass, the median over passes", "[parallel]") {
  // pass 0: 3 / 2 = 1.5; pass 1: 2 / 2 = 1; pass 2: 4 / 3 ≈ 1.333
  CHECK(median_imbalance({{1, 2, 2}, {3, 2, 4}}) == Approx(4.0 / 3.0));
  CHECK(median_imbalance({{5}, {5}, {5}}) == 1.0);
  CHECK(std::isnan(median_imbalance({})));
  CHECK(std::isnan(median_imbalance({{}, {}})));
}

namespace {

std::optional<rank_env> env_of(const std::map<std::string, std::string>& vars) {
  return rank_env_from([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string problem_of(const std::map<std::string, std::string>& vars) {
  try {
    env_of(vars);
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("rank environment: torchrun's variables, SLURM's, and none", "[parallel][distributed]") {
  CHECK(!env_of({}));
  CHECK(!env_of({{"SLURM_NTASKS", "1"}, {"SLURM_PROCID", "0"}}));  // a batch script's shell: one process

  const auto t = env_of({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"},
                         {"MASTER_PORT", "29400"}});
  REQUIRE(t);
  CHECK(t->rank == 1);
  CHECK(t->world_size == 4);
  CHECK(t->local_rank == 1);
  CHECK(t->master_addr == "10.0.0.1");
  CHECK(t->master_port == 29400);
  CHECK(t->source == "torchrun");

  const auto s = env_of({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"},
                         {"MASTER_ADDR", "node01"}});
  REQUIRE(s);
  CHECK(s->rank == 5);
  CHECK(s->world_size == 8);
  CHECK(s->local_rank == 1);
  CHECK(s->master_port == default_master_port);
  CHECK(s->source == "slurm");

  const auto single = env_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
  REQUIRE(single);
  CHECK(single->master_addr == "127.0.0.1");
}

TEST_CASE("rank environment: bad values name their variable", "[parallel][distributed]") {
  CHECK_THAT(problem_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}}), Contains("RANK"));
  CHECK_THAT(problem_of({{"RANK", "0"}, {"WORLD_SIZE", "two"}, {"MASTER_ADDR", "a"}}), Contains("WORLD_SIZE"));
  CHECK_THAT(problem_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}), Contains("MASTER_ADDR"));
  CHECK_THAT(problem_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}}),
             Contains("MASTER_PORT"));
  CHECK_THAT(problem_of({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "0"}}), Contains("scontrol show hostnames"));
  CHECK_THAT(problem_of({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}}), Contains("RANK: is not set"));
}
