// The live metrics of a run: counters, gauges and histograms with labels, rendered in the
// Prometheus text exposition format (version 0.0.4). Updating a series is a few atomic operations
// (no lock, no allocation, no I/O), so the measurement loop may update it between timed passes;
// looking a series up by its labels takes the registry's mutex, so callers look a series up once
// and keep the reference (a series lives as long as its registry).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

// (name, value) pairs in the order they are rendered.
using metric_labels = std::vector<std::pair<std::string, std::string>>;

enum class metric_type { counter, gauge, histogram };

// A double updated atomically: fetch_add on std::atomic<double> is C++20.
class atomic_double {
 public:
  void add(double d) {
    double cur = v_.load(std::memory_order_relaxed);
    while (!v_.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
    }
  }
  void set(double d) { v_.store(d, std::memory_order_relaxed); }
  double get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// A counter only goes up; set() is for values read from elsewhere that are counters by nature
// (the process's CPU seconds from /proc).
class metric_counter {
 public:
  void inc(double by = 1) { v_.add(by); }
  void set(double total) { v_.set(total); }
  double value() const { return v_.get(); }

 private:
  atomic_double v_;
};

class metric_gauge {
 public:
  void set(double v) { v_.set(v); }
  void add(double by) { v_.add(by); }
  double value() const { return v_.get(); }

 private:
  atomic_double v_;
};

// Cumulative buckets with upper bounds `bounds` (ascending, +Inf implied).
class metric_histogram {
 public:
  explicit metric_histogram(std::vector<double> bounds);
  void observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Observations <= bounds()[i] (i == bounds().size(): all of them), as rendered.
  uint64_t cumulative(std::size_t i) const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.get(); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket, not cumulative; last: +Inf
  std::atomic<uint64_t> count_{0};
  atomic_double sum_;
};

// Bucket bounds in seconds that fit a batch's or a request's latency: 0.5 ms to 10 s, about
// three per decade.
std::vector<double> latency_buckets_seconds();

class metrics_registry {
 public:
  // The series of family `name` with these labels, created on first use. A family's help text and
  // type are those of its first series; asking for another type under the same name throws
  // std::logic_error (a programming error, not user input).
  metric_counter& counter(const std::string& name, const std::string& help, const metric_labels& labels = {});
  metric_gauge& gauge(const std::string& name, const std::string& help, const metric_labels& labels = {});
  metric_histogram& histogram(const std::string& name, const std::string& help, const metric_labels& labels = {},
                              const std::vector<double>& bounds = latency_buckets_seconds());

  // Run before each render() (outside the registry's lock): refreshes values read on demand, such
  // as /proc or NVML. A collector must not throw.
  void add_collector(std::function<void(metrics_registry&)> collect);

  // Every family in the order it was first created, each series in creation order.
  std::string render();
  // The family names, in that order (the documentation and the dashboard test list them).
  std::vector<std::string> family_names() const;

 private:
  struct series {
    metric_labels labels;
    std::unique_ptr<metric_counter> counter;
    std::unique_ptr<metric_gauge> gauge;
    std::unique_ptr<metric_histogram> histogram;
  };
  struct family {
    std::string name, help;
    metric_type type;
    std::deque<series> members;
  };
  series& find_or_add(const std::string& name, const std::string& help, metric_type type,
                      const metric_labels& labels, const std::vector<double>* bounds);

  mutable std::mutex mutex_;
  std::deque<family> families_;
  std::vector<std::function<void(metrics_registry&)>> collectors_;
  std::mutex collect_mutex_;  // one render's collectors at a time
};

// The text exposition format's pieces, exposed for tests.
std::string escape_label_value(const std::string& v);  // \ " and newline
std::string escape_help(const std::string& v);         // \ and newline
std::string format_metric_value(double v);             // shortest round-trip; +Inf, -Inf, NaN

}  // namespace attnbench
