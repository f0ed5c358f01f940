#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>

#include <unistd.h>

#include "common/error.hpp"
#include "test_support.hpp"
#include "workload/dataset.hpp"
#include "workload/static_batching.hpp"

using namespace attnbench;

namespace {

workload_config lognormal_workload(uint64_t seed) {
  workload_config w;
  w.samples = 500;
  w.max_length = 128;
  w.seed = seed;
  w.lengths.kind = length_kind::lognormal;
  w.lengths.median = 40;
  w.lengths.sigma = 0.5;
  w.lengths.min = 8;
  w.lengths.max = 128;
  return w;
}

}  // namespace

TEST_CASE("generated samples are seeded, framed and within bounds", "[workload]") {
  const auto m = testing::tiny_model();
  const auto a = make_dataset(lognormal_workload(1), m);
  const auto b = make_dataset(lognormal_workload(1), m);
  const auto c = make_dataset(lognormal_workload(2), m);
  REQUIRE(a.samples.size() == 500);
  CHECK(a.samples == b.samples);
  CHECK(a.samples != c.samples);
  CHECK(a.min_length() >= 8);
  CHECK(a.max_length() <= 128);
  for (const auto& s : a.samples) {
    CHECK(s.front() == 101);
    CHECK(s.back() == 102);
  }
  // The median length of 500 lognormal draws lands near the configured median.
  std::vector<int64_t> lengths;
  for (const auto& s : a.samples) lengths.push_back(static_cast<int64_t>(s.size()));
  std::nth_element(lengths.begin(), lengths.begin() + 250, lengths.end());
  CHECK(lengths[250] == Approx(40).margin(4));
}

TEST_CASE("static batching pads to max_length or to the longest sample", "[workload]") {
  const auto m = testing::tiny_model();
  auto w = lognormal_workload(3);
  w.samples = 10;
  const auto data = make_dataset(w, m);
  std::vector<int64_t> rows(10);
  std::iota(rows.begin(), rows.end(), 0);
  input_assembler assemble(data, torch::kCPU, /*pool=*/false);
  std::vector<batch> padded, longest;
  for (const auto& p : static_batching(4, padding_kind::max_length, 128).plan(data, rows)) padded.push_back(assemble.assemble(p));
  REQUIRE(padded.size() == 3);  // 4 + 4 + 2
  CHECK(padded[2].input_ids.sizes() == torch::IntArrayRef({2, 128}));
  for (const auto& p : static_batching(4, padding_kind::longest, 128).plan(data, rows)) longest.push_back(assemble.assemble(p));
  int64_t real = 0;
  for (const auto& b : longest) {
    int64_t longest_len = 0;
    for (auto i : b.sample_index) longest_len = std::max<int64_t>(longest_len, static_cast<int64_t>(data.samples[static_cast<std::size_t>(i)].size()));
    CHECK(b.padded_length == longest_len);
    CHECK(b.padding_mask.sum().item<int64_t>() == b.real_tokens);
    real += b.real_tokens;
  }
  CHECK(real == data.real_tokens());
  // Padding positions hold [PAD] and are masked out.
  CHECK(padded[0].input_ids.masked_select(padded[0].padding_mask.logical_not()).eq(0).all().item<bool>());
}

TEST_CASE("JSONL workloads are read and bad lines named", "[workload]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnbench_jsonl_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto m = testing::tiny_model();
  workload_config w;
  w.max_length = 8;
  w.file = (dir / "ok.jsonl").string();
  std::ofstream(w.file) << "[101, 2000, 102]\n\n{\"input_ids\": [101, 7, 8, 102]}\n";
  const auto d = make_dataset(w, m);
  REQUIRE(d.samples.size() == 2);
  CHECK(d.samples[1] == std::vector<int64_t>{101, 7, 8, 102});

  w.file = (dir / "bad.jsonl").string();
  std::ofstream(w.file) << "[101, 102]\n[101, 99999999]\nnot json\n[1,2,3,4,5,6,7,8,9]\n";
  try {
    make_dataset(w, m);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    REQUIRE(e.problems().size() == 3);
    CHECK(e.problems()[0].path == "workload.file");
    CHECK_THAT(e.problems()[0].message, Catch::Contains("bad.jsonl:2") && Catch::Contains("99999999"));
    CHECK_THAT(e.problems()[1].message, Catch::Contains(":3") && Catch::Contains("not valid JSON"));
    CHECK_THAT(e.problems()[2].message, Catch::Contains(":4") && Catch::Contains("exceed"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("pooled input buffers are double-buffered: a batch's buffers outlive the next batch", "[workload]") {
  const auto m = testing::tiny_model();
  auto w = lognormal_workload(3);
  w.samples = 12;
  const auto data = make_dataset(w, m);
  std::vector<int64_t> rows(12);
  std::iota(rows.begin(), rows.end(), 0);
  const auto plans = static_batching(4, padding_kind::max_length, 128).plan(data, rows);  // three (4, 128) batches
  REQUIRE(plans.size() == 3);
  input_assembler assemble(data, torch::kCPU, /*pool=*/true);
  const batch first = assemble.assemble(plans[0]);
  const torch::Tensor first_ids = first.input_ids.clone();
  CHECK(assemble.allocations() == 4);  // both sets of (ids, mask), allocated when the shape is first seen
  const batch second = assemble.assemble(plans[1]);
  // Filling the next batch left the previous one's buffers alone: on CUDA the device may still be
  // copying from them.
  CHECK(second.input_ids.data_ptr() != first.input_ids.data_ptr());
  CHECK(torch::equal(first.input_ids, first_ids));
  const batch third = assemble.assemble(plans[2]);
  CHECK(third.input_ids.data_ptr() == first.input_ids.data_ptr());  // the ring comes round
  CHECK(assemble.allocations() == 4);                               // and allocates nothing more
  CHECK(third.padding_mask.sum().item<int64_t>() == third.real_tokens);
}
