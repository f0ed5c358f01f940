// Multi-process runs through the real binary, on loopback: `attnbench launch --nproc 2` with Gloo
// gives the single-process outputs; a rank killed mid-run, a rank that never joins and a port in
// use end in bounded time with a message naming the rank or the port, no report, no process left.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

using namespace attnbench::testing;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

nlohmann::ordered_json launch_config(const fs::path& out, double timeout_s, int samples) {
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "launch-test",
    "model": {"preset": "bert-tiny", "seed": 5},
    "workload": {"lengths": {"kind": "uniform", "min": 4, "max": 32}, "max_length": 32},
    "measure": {"warmup": 1, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "check": {"tolerances": {"fp32": 1e-6}},
    "variants": [
      {"name": "single", "batching": {"batch_size": 4}},
      {"name": "ranks", "batching": {"batch_size": 4}, "parallel": {"mode": "processes", "threads_per_worker": 1}}
    ],
    "baseline": "single"
  })");
  doc["workload"]["samples"] = samples;
  doc["distributed"] = {{"timeout_s", timeout_s}};
  doc["output"] = {{"dir", out.string()}};
  return doc;
}

// Processes whose command line mentions `needle` (the test's own temp dir): none may outlive a run.
int processes_mentioning(const std::string& needle) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos && cmdline.find("attnbench") != std::string::npos) ++n;
  }
  return n;
}

// A port nobody listens on now.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("launch --nproc 2: Gloo ranks give the single-process logits, rank 0 reports", "[parallel][distributed][cli]") {
  temp_dir dir("launch", "ok");
  const auto cfg = write_config(dir.path, launch_config(dir.path / "out", 60, 14));
  const auto r = run_cli("launch --nproc 2 " + cfg.string() + " --save-outputs");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto results = nlohmann::json::parse(read_file(dir.path / "out" / "results.json"));
  const auto& ranks = results["variants"][1];
  CHECK(ranks["status"] == "PASS");
  CHECK(ranks["check"]["rel_l2"].get<double>() <= 1e-6);  // in sample order: a shuffle would be far off
  CHECK(ranks["parallel"]["mode"] == "processes");
  CHECK(ranks["parallel"]["world_size"] == 2);
  CHECK(ranks["parallel"]["backend"] == "gloo");
  REQUIRE(ranks["parallel"]["workers"].size() == 2);
  CHECK(ranks["parallel"]["workers"][0]["samples"].get<int>() + ranks["parallel"]["workers"][1]["samples"].get<int>() == 14);
  CHECK(ranks["parallel"]["workers"][1]["threads"] == 1);
  // Memory: each rank's own peak; the variant's would be one process's share, so none.
  CHECK(ranks["peak_memory_bytes"].is_null());
  CHECK_THAT(ranks["peak_memory_method"].get<std::string>(), Contains("separate processes"));
  for (const auto& w : ranks["parallel"]["workers"]) CHECK(w["peak_memory_bytes"].get<int64_t>() > 0);
  // The pass spans every rank's compute and the gather to rank 0: never shorter than a rank's compute.
  const double slowest_pass_s = 14.0 / ranks["throughput"]["min"].get<double>();
  for (const auto& w : ranks["parallel"]["workers"]) CHECK(slowest_pass_s >= w["median_s"].get<double>());
  CHECK(fs::exists(dir.path / "out" / "outputs" / "ranks.npy"));
  CHECK_THAT(read_file(dir.path / "out" / "report.md"), Contains("rank 1"));
  CHECK(processes_mentioning(dir.path.string()) == 0);
}

TEST_CASE("launch: a rank killed mid-run ends the run in bounded time, naming it, with no report",
          "[parallel][distributed][cli]") {
  temp_dir dir("launch", "kill");
  const auto cfg = write_config(dir.path, launch_config(dir.path / "out", 5, 8));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_cli_with_test_hooks("launch --nproc 2 " + cfg.string(), "ATTNBENCH_TEST_KILL_RANK=1");
  const double took = seconds_since(t0);
  INFO(r.output);
  CHECK(r.exit_code == 5);
  CHECK_THAT(r.output, Contains("rank 1 was killed by signal 9"));
  CHECK_THAT(r.output, Contains("rank 1 stopped responding"));
  CHECK(took < 60);
  CHECK(!fs::exists(dir.path / "out" / "results.json"));
  CHECK(processes_mentioning(dir.path.string()) == 0);
}

TEST_CASE("launch: rank 0 stays until a slow rank has seen the last meeting complete", "[parallel][distributed][cli]") {
  // Rank 1 announces itself at each meeting, then sleeps 3 s before it looks for the others; rank
  // 0, which serves the store, sees the meeting complete at once. Were rank 0 to finish and exit
  // then, rank 1 would find the store gone ("lost the rendezvous store … at end-of-passes"), as
  // it once did now and then in CI.
  temp_dir dir("launch", "hold");
  const auto cfg = write_config(dir.path, launch_config(dir.path / "out", 10, 8));
  const auto r = run_cli_with_test_hooks("launch --nproc 2 " + cfg.string(), "ATTNBENCH_TEST_HOLD_RANK_AT_MEET=1");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, !Contains("lost the rendezvous store"));
  CHECK(fs::exists(dir.path / "out" / "results.json"));
  CHECK(processes_mentioning(dir.path.string()) == 0);
}

TEST_CASE("a rank whose peers never join gives up after the timeout, naming them", "[parallel][distributed][cli]") {
  temp_dir dir("launch", "alone");
  const auto cfg = write_config(dir.path, launch_config(dir.path / "out", 2, 8));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_cli("run " + cfg.string(), "RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()));
  INFO(r.output);
  CHECK(r.exit_code == 5);
  CHECK_THAT(r.output, Contains("ranks 1, 2 of 3 never joined within 2 s"));
  CHECK(seconds_since(t0) < 30);
  CHECK(!fs::exists(dir.path / "out" / "results.json"));
}

TEST_CASE("a rendezvous port already in use is a clear error naming it", "[parallel][distributed][cli]") {
  temp_dir dir("launch", "port");
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(fd, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const int port = ntohs(addr.sin_port);
  const auto cfg = write_config(dir.path, launch_config(dir.path / "out", 5, 8));
  const auto r = run_cli("launch --nproc 2 --master-port " + std::to_string(port) + " " + cfg.string());
  close(fd);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains(fmt::format("MASTER_PORT: port {} is already in use", port)));
  CHECK(processes_mentioning(dir.path.string()) == 0);
}

TEST_CASE("a rank environment with nothing to run across ranks is a config error", "[parallel][distributed][cli]") {
  temp_dir dir("launch", "none");
  auto doc = launch_config(dir.path / "out", 5, 8);
  doc["variants"].erase(1);
  const auto cfg = write_config(dir.path, doc);
  const auto r = run_cli("run " + cfg.string(), "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("no variant has \"parallel\": {\"mode\": \"processes\"}"));
}
