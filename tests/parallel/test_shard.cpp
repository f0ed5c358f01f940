// The FLOP-balanced split of a pass, and how a rank reads who it is from the environment.
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


}  // namespace

TEST_CASE("assign by cost: every item once, in order, loads within one item of each other", "[parallel]") {
  const std::vector<double> cost{100, 3, 50, 50, 7, 90, 10, 10, 60, 20};
  for (int64_t workers : {1, 2, 3, 4}) {
    const auto parts = assign_by_cost(cost, workers);
    REQUIRE(static_cast<int64_t>(parts.size()) == workers);
    std::vector<std::size_t> seen;
    double most = 0, least = 1e300;
    for (const auto& p : parts) {
      CHECK(std::is_sorted(p.begin(), p.end()));
      seen.insert(seen.end(), p.begin(), p.end());
      double load = 0;
      for (auto i : p) load += cost[i];
      most = std::max(most, load);
      least = std::min(least, load);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::size_t> all(cost.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    CHECK(seen == all);
    CHECK(most - least <= 100);  // the costliest item
  }
  // Costliest first on {100, 90, 60, 50, 50, 20, 10, 10, 7, 3}: 200 against 200.
  const auto two = assign_by_cost(cost, 2);
  CHECK(two[0] == std::vector<std::size_t>{0, 2, 3});  // by cost, not by halves of the list
  CHECK(two[1] == std::vector<std::size_t>{1, 4, 5, 6, 7, 8, 9});
  CHECK(assign_by_cost({5, 5}, 3)[2].empty());  // more workers than items: some idle
  CHECK_THROWS_AS(assign_by_cost({1}, 0), std::invalid_argument);
}

TEST_CASE("shard batches: whole batches by forward FLOPs, samples and tokens counted", "[parallel]") {
  const dataset d = with_lengths({30, 30, 30, 30, 8, 8, 8, 8, 8, 8, 8, 8});
  model_config m;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 2;
  m.ffn = 256;
  m.num_labels = 2;
  // Two long batches and two short ones: each worker gets one of each, not the two long ones.
  const std::vector<batch_plan> plans{{{0, 1}, 30}, {{2, 3}, 30}, {{4, 5, 6, 7}, 8}, {{8, 9, 10, 11}, 8}};
  const auto shards = shard_batches(d, plans, m, 2);
  REQUIRE(shards.size() == 2);
  CHECK(shards[0].plans.size() == 2);
  CHECK(shards[0].plans[0].rows == std::vector<int64_t>{0, 1});
  CHECK(shards[0].plans[1].rows == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(shards[1].plans[0].rows == std::vector<int64_t>{2, 3});
  CHECK(shards[0].samples == 6);
  CHECK(shards[0].real_tokens == 92);
  CHECK(shards[0].flops == Approx(shards[1].flops));
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
