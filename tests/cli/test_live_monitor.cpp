// The --metrics-* options end to end: the real binary serves /metrics, writes metrics.prom, and
// refuses a port it cannot have with exit 2 (README "Live monitoring").
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"
#include "monitor/metric_catalog.hpp"

namespace fs = std::filesystem;
using namespace attnbench;
using testing::read_file;
using testing::run_cli;
using testing::write_config;

namespace {

struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("monitor", tag) {}
};

// A loopback socket held open on a port the kernel picked: the port is free of other users while
// the test holds it, and taken for attnbench.
struct held_port {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  explicit held_port(bool listening) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    if (listening) REQUIRE(listen(fd, 1) == 0);
    port = ntohs(addr.sin_port);
  }
  void release() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  ~held_port() { release(); }
};

nlohmann::json tiny_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "monitor-cli",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 16, "lengths": {"kind": "uniform", "min": 8, "max": 32}, "max_length": 32},
    "measure": {"warmup": 1, "repetitions": 2},
    "device": "cpu",
    "variants": [
      {"name": "baseline", "precision": "fp32", "attention": "naive"},
      {"name": "sdpa \"quoted\"", "attention": "sdpa", "batching": {"batch_size": 8, "padding": "longest"}}
    ],
    "baseline": "baseline"
  })");
  cfg["output"] = {{"dir", out.string()}, {"formats", {"json"}}};
  return cfg;
}

// The metric family of each sample line of a text exposition.
std::set<std::string> families(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (name.size() > std::string(suffix).size() &&
          name.compare(name.size() - std::string(suffix).size(), std::string::npos, suffix) == 0 &&
          name.find("latency") != std::string::npos)
        name.erase(name.size() - std::string(suffix).size());
    out.insert(name);
  }
  return out;
}

}  // namespace

TEST_CASE("run --metrics-port writes metrics.prom with the run's final values", "[cli][monitor]") {
  temp_dir tmp("final");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, tiny_config(out));
  held_port free(false);
  const int port = free.port;
  free.release();
  const auto r = run_cli("run " + cfg.string() + " --quiet --metrics-port " + std::to_string(port));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string prom = read_file(out / "metrics.prom");
  INFO(prom);
  // 16 samples x (1 warm-up + 2 timed passes), each variant; escaped label values.
  CHECK_THAT(prom, Catch::Contains("attnbench_samples_total{run=\"monitor-cli\",variant=\"baseline\"} 48\n"));
  CHECK_THAT(prom, Catch::Contains("attnbench_samples_total{run=\"monitor-cli\",variant=\"sdpa \\\"quoted\\\"\"} 48\n"));
  CHECK_THAT(prom, Catch::Contains("attnbench_phase{run=\"monitor-cli\",variant=\"\",phase=\"done\"} 1\n"));
  CHECK_THAT(prom, Catch::Contains("attnbench_batch_latency_seconds_count{run=\"monitor-cli\",variant=\"baseline\"} 4\n"));
  CHECK_THAT(prom, Catch::Contains("# TYPE process_cpu_seconds_total counter\n"));
  std::set<std::string> catalog;
  for (const metric_spec* m : metric_catalog()) catalog.insert(m->name);
  for (const auto& f : families(prom)) {
    INFO(f);
    CHECK(catalog.count(f) == 1);
  }
}

TEST_CASE("a run without --metrics-port writes no metrics.prom", "[cli][monitor]") {
  temp_dir tmp("off");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, tiny_config(out));
  const auto r = run_cli("run " + cfg.string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(out / "metrics.prom"));
  CHECK(r.output.find("live metrics") == std::string::npos);
}

TEST_CASE("a metrics port that cannot be had is exit 2, naming it", "[cli][monitor]") {
  temp_dir tmp("badport");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, tiny_config(out));
  held_port taken(true);
  auto r = run_cli("run " + cfg.string() + " --quiet --metrics-port " + std::to_string(taken.port));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--metrics-port: cannot serve metrics on 127.0.0.1:" +
                                       std::to_string(taken.port)));
  CHECK_FALSE(fs::exists(out / "results.json"));  // refused before anything ran

  r = run_cli("run " + cfg.string() + " --metrics-port 70000");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--metrics-port"));
  r = run_cli("launch --nproc 2 " + cfg.string() + " --metrics-port 65535");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--metrics-port: rank 1 would serve on port 65536"));
}

TEST_CASE("launch: rank r serves its metrics on PORT + r and writes its own file", "[cli][monitor][distributed]") {
  temp_dir tmp("launch");
  const auto out = tmp.path / "out";
  auto doc = nlohmann::json::parse(R"({
    "name": "monitor-launch",
    "model": {"preset": "bert-tiny", "seed": 5},
    "workload": {"samples": 8, "lengths": {"kind": "uniform", "min": 4, "max": 16}, "max_length": 16},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "distributed": {"timeout_s": 60},
    "variants": [
      {"name": "single", "batching": {"batch_size": 4}},
      {"name": "ranks", "batching": {"batch_size": 4}, "parallel": {"mode": "processes", "threads_per_worker": 1}}
    ],
    "baseline": "single"
  })");
  doc["output"] = {{"dir", out.string()}, {"formats", {"json"}}};
  const auto cfg = write_config(tmp.path, doc);
  // Two consecutive free ports: the kernel's pick and the next one, tried a few times.
  int port = 0;
  for (int attempt = 0; attempt < 20 && port == 0; ++attempt) {
    held_port first(true);  // released at the end of the attempt, for the ranks to take
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(first.port + 1));
    if (first.port < 65535 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) port = first.port;
    close(fd);
  }
  REQUIRE(port > 0);
  const auto r = run_cli("launch --nproc 2 " + cfg.string() + " --quiet --metrics-port " + std::to_string(port));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string rank0 = read_file(out / "metrics.prom");
  const std::string rank1 = read_file(out / "metrics-rank1.prom");
  INFO(rank0 << "\n---\n" << rank1);
  CHECK_THAT(rank0, Catch::Contains("attnbench_samples_total{run=\"monitor-launch\",rank=\"0\",variant=\"ranks\"}"));
  CHECK_THAT(rank1, Catch::Contains("attnbench_samples_total{run=\"monitor-launch\",rank=\"1\",variant=\"ranks\"}"));
  CHECK_THAT(rank1, Catch::Contains("phase=\"done\"} 1\n"));
}
