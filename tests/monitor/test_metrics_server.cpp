#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "monitor/metrics_server.hpp"

using namespace attnbench;

namespace {

// A port free now: bind to 0 and ask. (Another process could take it before the test does; the
// test then fails loudly with "cannot serve metrics", never silently.)
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace

TEST_CASE("the metrics server answers a scrape (httplib client) with the registry's current text", "[monitor]") {
  metrics_registry reg;
  auto& c = reg.counter("attnbench_samples_total", "Samples", {{"variant", "x"}});
  const int port = free_port();
  REQUIRE(port > 0);
  metrics_server server(reg, "127.0.0.1", port, "--metrics-port");
  c.inc(3);
  http_response res = http_get("127.0.0.1", port, "/metrics");
  CHECK(res.status == 200);
  CHECK(res.content_type == prometheus_content_type);
  CHECK(res.body == "# HELP attnbench_samples_total Samples\n# TYPE attnbench_samples_total counter\n"
                     "attnbench_samples_total{variant=\"x\"} 3\n");
  c.inc(2);
  res = http_get("127.0.0.1", port, "/metrics");
  CHECK(res.body.find("attnbench_samples_total{variant=\"x\"} 5\n") != std::string::npos);
  CHECK(http_get("127.0.0.1", port, "/nothing-here").status == 404);
}

TEST_CASE("a port in use is an input error naming the option and the port", "[monitor]") {
  metrics_registry reg;
  const int port = free_port();
  metrics_server first(reg, "127.0.0.1", port, "--metrics-port");
  try {
    metrics_server second(reg, "127.0.0.1", port, "--metrics-port");
    FAIL("a second server bound the same port");
  } catch (const input_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "--metrics-port");
    CHECK_THAT(e.problems()[0].message, Catch::Contains(std::to_string(port)) && Catch::Contains("cannot serve"));
  }
  CHECK_THROWS_AS(metrics_server(reg, "192.0.2.1", port, "--metrics-port"), input_error);  // not this host's
}

TEST_CASE("scrapes from several clients are served while the run updates the registry", "[monitor]") {
  // The endpoint renders on httplib's threads while the run's thread updates and adds series (the
  // sanitizer build runs this under ThreadSanitizer).
  metrics_registry reg;
  auto& samples = reg.counter("attnbench_samples_total", "Samples");
  const int port = free_port();
  REQUIRE(port > 0);
  metrics_server server(reg, "127.0.0.1", port, "--metrics-port");
  // One scrape on this thread first: it initialises the client's function-local statics in
  // cpp-httplib (its regexes) before any scraper thread exists. The sanitizer build tells
  // ThreadSanitizer to ignore what that uninstrumented library calls (sanitizer_options.cpp),
  // the static-initialisation guard included, so two threads racing to the first scrape would
  // be reported against the library, not against our code.
  REQUIRE(http_get("127.0.0.1", port, "/metrics").status == 200);
  std::vector<int> statuses(2 * 5);
  std::vector<std::thread> scrapers;
  for (int c = 0; c < 2; ++c)
    scrapers.emplace_back([&statuses, port, c] {
      for (int i = 0; i < 5; ++i) statuses[c * 5 + i] = http_get("127.0.0.1", port, "/metrics").status;
    });
  for (int i = 0; i < 1000; ++i) {
    samples.inc();
    reg.gauge("attnbench_phase", "Phase", {{"phase", "timed"}, {"step", std::to_string(i % 10)}}).set(i);
  }
  for (auto& t : scrapers) t.join();
  for (int status : statuses) CHECK(status == 200);
  const std::string last = http_get("127.0.0.1", port, "/metrics").body;
  CHECK(last.find("attnbench_samples_total 1000\n") != std::string::npos);
}
