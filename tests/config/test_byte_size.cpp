// "device_memory_limit": the bytes the CUDA caching allocator may hold (issue 16), as bytes or a
// size string, its errors with their path, and the shipped GPU offload config that uses it; and
// check.study_max_memory, the float64 study's budget, read the same way.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "config/byte_size.hpp"
#include "config/config_parser.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

ordered_json with_limit(ordered_json limit) {
  auto doc = ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-mini"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 16}},
    "device": "cpu",
    "variants": [{"name": "base"}],
    "baseline": "base"
  })");
  doc["device_memory_limit"] = std::move(limit);
  return doc;
}

}  // namespace

TEST_CASE("device_memory_limit: bytes or a size string, absent means no limit", "[config]") {
  auto none = with_limit(0);
  none.erase("device_memory_limit");
  CHECK(device_memory_limit(testing::parse(none)) == 0);
  CHECK(device_memory_limit(testing::parse(with_limit(1073741824))) == 1073741824);
  CHECK(device_memory_limit(testing::parse(with_limit("1GiB"))) == 1073741824);
  CHECK(device_memory_limit(testing::parse(with_limit("1.5GiB"))) == 1610612736);
  CHECK(device_memory_limit(testing::parse(with_limit("512MiB"))) == 536870912);
  CHECK(device_memory_limit(testing::parse(with_limit("8589934591GiB"))) == 9223372035781033984);  // 2^63 - 2^30
  // The last three have no int64 byte count (tests/fuzz/corpus/config/memory-limit-overflow.json).
  for (const auto& bad : {ordered_json("4GB"), ordered_json("GiB"), ordered_json("-1MiB"), ordered_json(-5),
                          ordered_json(true), ordered_json("1.5.0GiB"), ordered_json("8589934592GiB"),
                          ordered_json("1e300GiB"), ordered_json("infGiB")}) {
    const auto ps = testing::problems_of(with_limit(bad));
    INFO(bad.dump());
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].path == "device_memory_limit");
    CHECK_THAT(ps[0].message, Catch::Matchers::Contains("expected a size in bytes"));
  }
}

TEST_CASE("check.study_max_memory: a byte size, absent means the host's available memory", "[config][study]") {
  auto doc = with_limit(0);
  doc.erase("device_memory_limit");
  CHECK(study_max_memory(testing::parse(doc)) == -1);
  doc["check"] = {{"study_max_memory", "16GiB"}};
  CHECK(study_max_memory(testing::parse(doc)) == int64_t{16} << 30);
  doc["check"]["study_max_memory"] = 0;
  CHECK(study_max_memory(testing::parse(doc)) == 0);
  doc["check"]["study_max_memory"] = "lots";
  const auto ps = testing::problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "check.study_max_memory");
  CHECK_THAT(ps[0].message, Catch::Matchers::Contains("expected a size in bytes"));
}

TEST_CASE("configs/offload-gpu.json: a limit the whole model exceeds and the offloaded variants fit", "[config]") {
  const config cfg = load_config(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/offload-gpu.json", device_caps{1, true});
  REQUIRE(device_memory_limit(cfg) > 0);
  // The model's weights in fp32, from its dimensions (as model/flops.cpp counts parameters).
  const model_config& m = cfg.model;
  const int64_t layer = 4 * (m.hidden * m.hidden + m.hidden) + 2 * m.hidden * m.ffn + m.ffn + m.hidden + 4 * m.hidden;
  const int64_t embeddings = (m.vocab_size + m.max_positions + m.type_vocab_size) * m.hidden + 2 * m.hidden;
  const int64_t head = m.hidden * m.hidden + m.hidden + m.hidden * m.num_labels + m.num_labels;
  const int64_t whole = 4 * (m.layers * layer + embeddings + head);
  CHECK(whole > 2 * device_memory_limit(cfg));  // the resident variant cannot fit, with room to spare
  for (const auto& v : cfg.variants) {
    if (!v.offload) continue;
    const int64_t bound = 4 * (embeddings + head + (v.offload->prefetch + 1) * layer);
    CHECK(bound < device_memory_limit(cfg) / 2);  // half the limit left for activations and workspaces
  }
  const variant_config* base = find_variant(cfg, cfg.baseline);
  REQUIRE(base != nullptr);
  CHECK(base->offload.has_value());  // the baseline must run for anything to be checked
}
