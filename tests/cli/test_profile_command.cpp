// `attnbench profile` and `run --profile` end to end on bert-tiny: the real binary, the files it
// writes, the errors it refuses with before profiling.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

using testing::read_file;
using testing::run_cli;
using testing::write_config;

struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("profile", tag) {}
};

nlohmann::json tiny_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "profile-test",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "uniform", "min": 8, "max": 32}, "max_length": 32},
    "measure": {"warmup": 0, "repetitions": 1},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "naive", "attention": "naive", "batching": {"batch_size": 4}},
      {"name": "sdpa", "attention": "sdpa", "batching": {"batch_size": 4}}
    ],
    "baseline": "naive",
    "profile": {"wait": 1, "warmup": 1, "active": 2, "repeat": 1, "top": 5}
  })");
  cfg["output"] = {{"dir", out.string()}};
  return cfg;
}

std::set<std::string> region_names(const nlohmann::json& trace) {
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "user_annotation") names.insert(e.value("name", ""));
  return names;
}

}  // namespace

TEST_CASE("profile: traces, TensorBoard runs, operator tables and a breakdown that adds up",
          "[cli][profile]") {
  temp_dir tmp("all");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, tiny_config(out));
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli("profile " + cfg.string() + " --out " + out.string() + " --quiet");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(seconds < 30);  // bert-tiny, 4 steps per variant: seconds, not minutes
  CHECK_THAT(r.output, Catch::Contains("| Region | naive: share |"));

  // The Chrome traces: valid JSON holding every region the variant's path labels.
  const auto naive = nlohmann::json::parse(read_file(out / "naive" / "trace.json"));
  const auto sdpa = nlohmann::json::parse(read_file(out / "sdpa" / "trace.json"));
  const auto naive_regions = region_names(naive);
  for (const char* name :
       {"embeddings", "encoder.layer", "attention.qkv_proj", "attention.scores", "attention.mask",
        "attention.softmax", "attention.dropout", "attention.context", "attention.out_proj", "ffn",
        "layernorm", "pooler", "classifier", "ProfilerStep#2", "ProfilerStep#3"}) {
    INFO(name);
    CHECK(naive_regions.count(name) == 1);
  }
  CHECK(naive_regions.count("attention.sdpa") == 0);
  CHECK(naive_regions.count("ProfilerStep#1") == 0);  // a warm-up step is not recorded
  const auto sdpa_regions = region_names(sdpa);
  CHECK(sdpa_regions.count("attention.sdpa") == 1);
  CHECK(sdpa_regions.count("attention.softmax") == 0);

  // TensorBoard: <logdir>/<run>/<worker>.<timestamp>.pt.trace.json, one per cycle.
  for (const char* v : {"naive", "sdpa"}) {
    int traces = 0;
    for (const auto& e : fs::directory_iterator(out / "tensorboard" / v)) {
      CHECK(std::regex_match(e.path().filename().string(), std::regex(R"(.+_\d+\.\d+\.pt\.trace\.json)")));
      CHECK_NOTHROW(nlohmann::json::parse(read_file(e.path())));
      ++traces;
    }
    CHECK(traces == 1);
  }

  // Operator tables: top 5 by self time, largest first.
  std::istringstream ops(read_file(out / "naive" / "operators.csv"));
  std::string line;
  std::getline(ops, line);
  CHECK(line == "operator,calls,self_cpu_ms,total_cpu_ms,self_cpu_share,cuda_ms,self_memory_bytes");
  int rows = 0;
  double previous = 1e300;
  while (std::getline(ops, line)) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 7);
    CHECK(std::stod(f[2]) <= previous);
    previous = std::stod(f[2]);
  }
  CHECK(rows == 5);

  // The breakdown: per variant, the in-layer shares add up to 1; attention's share is > 0.
  std::map<std::string, double> share_sum;
  std::map<std::string, int64_t> layers;
  std::istringstream csv(read_file(out / "breakdown.csv"));
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 8);
    const std::string key = f[0] + "@" + f[1];
    if (f[2] == "encoder.layer")
      layers[key] = std::stoll(f[3]);
    else
      share_sum[key] += std::stod(f[6]);
  }
  CHECK(share_sum["naive@all"] == Approx(1.0).epsilon(1e-5));
  CHECK(share_sum["sdpa@all"] == Approx(1.0).epsilon(1e-5));
  CHECK(layers["naive@all"] == 2 * 2);  // 2 layers × 2 recorded steps
  CHECK(layers["sdpa@all"] == 2 * 2);
  // The two recorded batches (4 samples each, padded to max_length 32) have one length: no
  // per-length rows.
  CHECK(share_sum.size() == 2);
  const std::string md = read_file(out / "profile.md");
  CHECK_THAT(md, Catch::Contains("## Attention breakdown"));
  CHECK_THAT(md, Catch::Contains("## Operators: sdpa"));

  SECTION("a second profile into the same place is refused without --force") {
    auto again = run_cli("profile " + cfg.string() + " --out " + out.string() + " --variant sdpa --quiet");
    CHECK(again.exit_code == 2);
    CHECK_THAT(again.output, Catch::Contains("--force"));
    auto forced =
        run_cli("profile " + cfg.string() + " --out " + out.string() + " --variant sdpa --quiet --force");
    INFO(forced.output);
    CHECK(forced.exit_code == 0);
    int traces = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(out / "tensorboard" / "sdpa")) ++traces;
    CHECK(traces == 1);  // the earlier trace was replaced, not added to
  }
}

TEST_CASE("profile: bad input is refused before anything is profiled", "[cli][profile]") {
  temp_dir tmp("bad");
  const auto out = tmp.path / "out";
  SECTION("an unknown variant") {
    const auto cfg = write_config(tmp.path, tiny_config(out));
    auto r = run_cli("profile " + cfg.string() + " --variant sdpa --variant nave");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output,
               Catch::Contains("error: --variant: no variant named \"nave\"; variants are: naive, sdpa"));
  }
  SECTION("an empty schedule") {
    auto doc = tiny_config(out);
    doc["profile"]["active"] = 0;
    auto r = run_cli("profile " + write_config(tmp.path, doc).string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("profile.active: must be >= 1"));
  }
  SECTION("an output directory that cannot be written") {
    const auto blocker = tmp.path / "file";
    std::ofstream(blocker) << "x";
    const auto cfg = write_config(tmp.path, tiny_config(out));
    auto r = run_cli("profile " + cfg.string() + " --out " + (blocker / "sub").string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("is not writable"));
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("run --profile writes the profile beside the report", "[cli][profile]") {
  temp_dir tmp("run");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, tiny_config(out));
  auto r = run_cli("run " + cfg.string() + " --profile --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(out / "report.md"));
  CHECK(fs::exists(out / "profile" / "breakdown.csv"));
  CHECK(fs::exists(out / "profile" / "naive" / "trace.json"));
  CHECK(fs::exists(out / "profile" / "sdpa" / "operators.md"));
}

TEST_CASE("profile: batches of different lengths get a breakdown per length", "[cli][profile]") {
  temp_dir tmp("lengths");
  const auto out = tmp.path / "out";
  auto doc = tiny_config(out);
  // One sample per batch, padded to its bucket: every recorded step is either 16 or 32 long.
  doc["variants"] = nlohmann::json::parse(R"([{"name": "naive", "attention": "naive",
      "batching": {"kind": "dynamic", "grouping": "bucketed", "boundaries": [16, 32], "max_tokens": 64,
                   "max_batch_size": 1}}])");
  doc["workload"]["lengths"] = {{"kind", "uniform"}, {"min", 8}, {"max", 32}};
  doc["profile"] = {{"wait", 0}, {"warmup", 0}, {"active", 8}, {"repeat", 1}};
  auto r = run_cli("profile " + write_config(tmp.path, doc).string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("### By sequence length"));
  const std::string csv = read_file(out / "profile" / "breakdown.csv");
  std::map<std::string, int64_t> layers;  // seq → recorded layers
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (f.size() == 8 && f[2] == "encoder.layer") layers[f[1]] = std::stoll(f[3]);
  }
  REQUIRE(layers.count("16") == 1);
  REQUIRE(layers.count("32") == 1);
  CHECK(layers["16"] + layers["32"] == layers["all"]);
  CHECK(layers["all"] == 2 * 8);  // 2 layers × 8 recorded steps
}

namespace {

// A generate config on llama-tiny (max_positions 512): two prompts of 8 tokens, a schedule of one
// warm-up and three recorded decode steps, and a data-parallel variant, which a profile skips.
nlohmann::json decoder_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "profile-decoder-test",
    "scenario": "generate",
    "model": {"preset": "llama-tiny", "seed": 1},
    "workload": {"samples": 2, "lengths": {"kind": "fixed", "length": 8}, "max_length": 8, "seed": 1},
    "generate": {"max_new_tokens": 4},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "sdpa", "attention": "sdpa"},
      {"name": "naive", "attention": "naive", "batching": {"batch_size": 2}},
      {"name": "dp", "parallel": {"devices": ["cpu", "cpu"]}}
    ],
    "baseline": "sdpa",
    "profile": {"wait": 0, "warmup": 1, "active": 3, "repeat": 1, "top": 5}
  })");
  cfg["output"] = {{"dir", out.string()}};
  return cfg;
}

// The rows of a variant's operators.csv, without its header.
int64_t operator_rows(const fs::path& csv) {
  std::istringstream in(read_file(csv));
  std::string line;
  std::getline(in, line);
  int64_t rows = 0;
  while (std::getline(in, line)) ++rows;
  return rows;
}

}  // namespace

TEST_CASE("profile: a generate config's decode steps, an operator table per variant, SKIPPED ones named",
          "[cli][profile][decoder]") {
  temp_dir tmp("decoder");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, decoder_config(out));
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli("profile " + cfg.string() + " --out " + out.string() + " --quiet");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(seconds < 30);  // llama-tiny, 5 decode steps per variant: about a second alone
  // stdout: a line per variant, the skipped one with its reason.
  CHECK_THAT(r.output, Catch::Contains("| variant | recorded steps | ms per recorded step |"));
  CHECK_THAT(r.output, Catch::Contains("| sdpa | 3 | "));
  CHECK_THAT(r.output, Catch::Contains("| naive | 3 | "));
  CHECK_THAT(r.output, Catch::Contains("| dp | SKIPPED: a profile records one thread's decode steps"));

  const std::string md = read_file(out / "profile.md");
  INFO(md);
  CHECK_THAT(md, Catch::Contains("No attention breakdown: the decoder records no labelled regions"));
  CHECK_THAT(md, Catch::Contains("a step is one greedy decode step"));
  CHECK_THAT(md, !Catch::Contains("## Attention breakdown"));
  // Prefill (8 positions) and the discarded warm cycle's step (9), then the schedule: one warm-up
  // step at context 10 and three recorded at 11, 12 and 13.
  CHECK_THAT(md, Catch::Contains("## Operators: sdpa\n\n3 recorded steps in 1 cycle(s): decode steps of 1 "
                                 "sequence(s) after a 8-token prompt (prefill not recorded), recorded at contexts 11 "
                                 "to 13 tokens; KV cache in fp32"));
  CHECK_THAT(md, Catch::Contains("## Operators: naive\n\n3 recorded steps in 1 cycle(s): decode steps of 2 "
                                 "sequence(s)"));
  CHECK_THAT(md, Catch::Contains("## Operators: dp\n\nSKIPPED: a profile records one thread's decode steps"));
  CHECK(md.find("## Operators: sdpa") < md.find("## Operators: naive"));
  // The breakdown files say why there is none; each variant that ran has its table and trace.
  CHECK_THAT(read_file(out / "breakdown.md"), Catch::Contains("No attention breakdown"));
  for (const char* v : {"sdpa", "naive"}) {
    INFO(v);
    CHECK(operator_rows(out / v / "operators.csv") == 5);
    const auto trace = nlohmann::json::parse(read_file(out / v / "trace.json"));
    const auto regions = region_names(trace);
    CHECK(regions.count("ProfilerStep#1") == 1);
    CHECK(regions.count("ProfilerStep#3") == 1);
    CHECK(regions.count("ProfilerStep#0") == 0);  // the warm-up step is not recorded
  }
  CHECK_FALSE(fs::exists(out / "dp" / "operators.csv"));
}

TEST_CASE("profile: a generate config's schedule past max_positions, and a decoder sweep, are refused",
          "[cli][profile][decoder]") {
  temp_dir tmp("decoder_bad");
  const auto out = tmp.path / "out";
  SECTION("a schedule that decodes past the model's max_positions") {
    auto doc = decoder_config(out);
    doc["profile"] = {{"wait", 500}, {"warmup", 0}, {"active", 4}, {"repeat", 1}};
    auto r = run_cli("profile " + write_config(tmp.path, doc).string() + " --quiet");
    INFO(r.output);
    CHECK(r.exit_code == 2);
    // 500 + 4 schedule steps and the discarded one after an 8-token prompt: 513 > 512.
    CHECK_THAT(r.output, Catch::Contains("error: profile: 505 decode steps after a 8-token prompt pass the model's "
                                         "max_positions (512)"));
    CHECK_FALSE(fs::exists(out / "profile"));
  }
  SECTION("one step fewer fits") {
    auto doc = decoder_config(out);
    doc["profile"] = {{"wait", 499}, {"warmup", 0}, {"active", 4}, {"repeat", 1}};
    doc["variants"] = nlohmann::json::parse(R"([{"name": "sdpa"}])");
    auto r = run_cli("profile " + write_config(tmp.path, doc).string() + " --quiet");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(read_file(out / "profile" / "profile.md"), Catch::Contains("recorded at contexts 509 to 512 tokens"));  // <output.dir>/profile
  }
  SECTION("a sweep") {
    auto doc = decoder_config(out);
    doc["sweep"] = {{"axes", {{"threads", "1"}}}};
    auto r = run_cli("profile " + write_config(tmp.path, doc).string() + " --quiet");
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("error: sweep: a profile sweep compares attention breakdowns, which a decoder "
                                         "(gpt2, llama) does not record"));
    CHECK_FALSE(fs::exists(out));
  }
}
