#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "monitor/metrics_registry.hpp"

using namespace attnbench;

TEST_CASE("metrics render in the Prometheus text exposition format", "[monitor]") {
  metrics_registry reg;
  reg.counter("attnbench_samples_total", "Samples processed", {{"run", "ci"}, {"variant", "fp32"}}).inc(96);
  reg.counter("attnbench_samples_total", "Samples processed", {{"run", "ci"}, {"variant", "fp32"}}).inc(32);
  reg.counter("attnbench_samples_total", "ignored: the family's first help wins", {{"run", "ci"}, {"variant", "amp"}})
      .inc(0.5);
  reg.gauge("attnbench_phase", "Current phase", {{"phase", "timed"}}).set(1);
  reg.gauge("process_resident_memory_bytes", "Resident memory").set(123456789);
  CHECK(reg.render() ==
        "# HELP attnbench_samples_total Samples processed\n"
        "# TYPE attnbench_samples_total counter\n"
        "attnbench_samples_total{run=\"ci\",variant=\"fp32\"} 128\n"
        "attnbench_samples_total{run=\"ci\",variant=\"amp\"} 0.5\n"
        "# HELP attnbench_phase Current phase\n"
        "# TYPE attnbench_phase gauge\n"
        "attnbench_phase{phase=\"timed\"} 1\n"
        "# HELP process_resident_memory_bytes Resident memory\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes 123456789\n");
  CHECK(reg.family_names() ==
        std::vector<std::string>{"attnbench_samples_total", "attnbench_phase", "process_resident_memory_bytes"});
}

TEST_CASE("histograms render cumulative buckets, +Inf, _sum and _count", "[monitor]") {
  metrics_registry reg;
  auto& h = reg.histogram("attnbench_batch_latency_seconds", "Batch latency", {{"variant", "a"}}, {0.001, 0.01, 0.1});
  for (double v : {0.0005, 0.001, 0.002, 0.05, 3.0}) h.observe(v);  // 0.001 falls in le="0.001": bounds are <=
  CHECK(reg.render() ==
        "# HELP attnbench_batch_latency_seconds Batch latency\n"
        "# TYPE attnbench_batch_latency_seconds histogram\n"
        "attnbench_batch_latency_seconds_bucket{variant=\"a\",le=\"0.001\"} 2\n"
        "attnbench_batch_latency_seconds_bucket{variant=\"a\",le=\"0.01\"} 3\n"
        "attnbench_batch_latency_seconds_bucket{variant=\"a\",le=\"0.1\"} 4\n"
        "attnbench_batch_latency_seconds_bucket{variant=\"a\",le=\"+Inf\"} 5\n"
        "attnbench_batch_latency_seconds_sum{variant=\"a\"} 3.0535\n"
        "attnbench_batch_latency_seconds_count{variant=\"a\"} 5\n");
  CHECK(h.count() == 5);
}

TEST_CASE("label values and help text are escaped", "[monitor]") {
  CHECK(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  CHECK(escape_help("x\\y\nz \"q\"") == "x\\\\y\\nz \"q\"");  // quotes stay in help
  metrics_registry reg;
  reg.gauge("g", "line one\nline two", {{"variant", "my \"fast\" one"}}).set(2);
  CHECK(reg.render() ==
        "# HELP g line one\\nline two\n# TYPE g gauge\ng{variant=\"my \\\"fast\\\" one\"} 2\n");
}

TEST_CASE("metric values use Prometheus' spellings of the special floats", "[monitor]") {
  CHECK(format_metric_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_metric_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_metric_value(std::nan("")) == "NaN");
  CHECK(format_metric_value(0.1) == "0.1");
  CHECK(format_metric_value(1e21) == "1e+21");
  CHECK(format_metric_value(42) == "42");
}

TEST_CASE("a family keeps its type, and collectors run before each render", "[monitor]") {
  metrics_registry reg;
  reg.counter("c_total", "c");
  CHECK_THROWS_AS(reg.gauge("c_total", "c"), std::logic_error);
  int calls = 0;
  reg.add_collector([&](metrics_registry& r) { r.gauge("collected", "by a collector").set(++calls); });
  CHECK(reg.render().find("collected 1\n") != std::string::npos);
  CHECK(reg.render().find("collected 2\n") != std::string::npos);
}

TEST_CASE("concurrent updates are not lost", "[monitor]") {
  metrics_registry reg;
  auto& c = reg.counter("n_total", "n");
  auto& h = reg.histogram("h_seconds", "h");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(0.003);
      }
    });
  std::string during = reg.render();  // rendering while they run must be safe
  for (auto& t : threads) t.join();
  CHECK(c.value() == 40000);
  CHECK(h.count() == 40000);
  CHECK(h.sum() == Approx(120).epsilon(1e-9));
  CHECK(reg.render().find("h_seconds_bucket{le=\"+Inf\"} 40000\n") != std::string::npos);
}

TEST_CASE("series are created and updated from several threads while another renders", "[monitor]") {
  // What a run does: the runner adds a variant's series as it reaches it while the endpoint renders
  // and a collector refreshes its values (the sanitizer build runs this under ThreadSanitizer).
  metrics_registry reg;
  reg.add_collector([](metrics_registry& r) { r.gauge("collected", "by a collector").add(1); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&reg, t] {
      const metric_labels labels{{"variant", "v" + std::to_string(t)}};
      for (int i = 0; i < 200; ++i) {
        reg.counter("runs_total", "runs", labels).inc();
        reg.histogram("pass_seconds", "passes", labels).observe(0.01 * t);
        reg.gauge("phase", "phase", labels).set(i);
      }
    });
  std::string during;
  for (int i = 0; i < 20; ++i) during = reg.render();
  for (auto& t : threads) t.join();
  const std::string after = reg.render();
  for (int t = 0; t < 3; ++t) {
    const std::string v = "{variant=\"v" + std::to_string(t) + "\"}";
    CHECK(after.find("runs_total" + v + " 200\n") != std::string::npos);
    CHECK(after.find("pass_seconds_count" + v + " 200\n") != std::string::npos);
    CHECK(after.find("phase" + v + " 199\n") != std::string::npos);
  }
  CHECK(after.find("collected 21\n") != std::string::npos);
}
