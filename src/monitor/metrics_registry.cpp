#include "monitor/metrics_registry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace attnbench {
namespace {

const char* type_name(metric_type t) {
  switch (t) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"}`, with `extra` (the histogram's le) last; empty when there are no labels.
std::string render_labels(const metric_labels& labels, const std::pair<std::string, std::string>* extra = nullptr) {
  if (labels.empty() && !extra) return "";
  std::string out = "{";
  bool first = true;
  const auto put = [&](const std::string& k, const std::string& v) {
    if (!first) out += ',';
    first = false;
    out += k + "=\"" + escape_label_value(v) + "\"";
  };
  for (const auto& [k, v] : labels) put(k, v);
  if (extra) put(extra->first, extra->second);
  return out + "}";
}

}  // namespace

std::string escape_label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_metric_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);  // shortest text that reads back as the same double
}

std::vector<double> latency_buckets_seconds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

metric_histogram::metric_histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end())) throw std::logic_error("histogram bounds must ascend");
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void metric_histogram::observe(double v) {
  // The first bound >= v: Prometheus' buckets are "less than or equal".
  const auto at = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[at].fetch_add(1, std::memory_order_relaxed);
  sum_.add(v);
  count_.fetch_add(1, std::memory_order_relaxed);
}

uint64_t metric_histogram::cumulative(std::size_t i) const {
  uint64_t n = 0;
  for (std::size_t k = 0; k <= i && k <= bounds_.size(); ++k) n += buckets_[k].load(std::memory_order_relaxed);
  return n;
}

metrics_registry::series& metrics_registry::find_or_add(const std::string& name, const std::string& help,
                                                        metric_type type, const metric_labels& labels,
                                                        const std::vector<double>* bounds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto fam = std::find_if(families_.begin(), families_.end(), [&](const family& f) { return f.name == name; });
  if (fam == families_.end()) {
    families_.push_back(family{name, help, type, {}});
    fam = families_.end() - 1;
  } else if (fam->type != type) {
    throw std::logic_error(fmt::format("metric {} is a {}, not a {}", name, type_name(fam->type), type_name(type)));
  }
  for (auto& s : fam->members)
    if (s.labels == labels) return s;
  series s;
  s.labels = labels;
  if (type == metric_type::counter) s.counter = std::make_unique<metric_counter>();
  if (type == metric_type::gauge) s.gauge = std::make_unique<metric_gauge>();
  if (type == metric_type::histogram) s.histogram = std::make_unique<metric_histogram>(*bounds);
  fam->members.push_back(std::move(s));
  return fam->members.back();
}

metric_counter& metrics_registry::counter(const std::string& name, const std::string& help,
                                          const metric_labels& labels) {
  return *find_or_add(name, help, metric_type::counter, labels, nullptr).counter;
}

metric_gauge& metrics_registry::gauge(const std::string& name, const std::string& help, const metric_labels& labels) {
  return *find_or_add(name, help, metric_type::gauge, labels, nullptr).gauge;
}

metric_histogram& metrics_registry::histogram(const std::string& name, const std::string& help,
                                              const metric_labels& labels, const std::vector<double>& bounds) {
  return *find_or_add(name, help, metric_type::histogram, labels, &bounds).histogram;
}

void metrics_registry::add_collector(std::function<void(metrics_registry&)> collect) {
  const std::lock_guard<std::mutex> lock(collect_mutex_);
  collectors_.push_back(std::move(collect));
}

std::vector<std::string> metrics_registry::family_names() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto& f : families_) names.push_back(f.name);
  return names;
}

std::string metrics_registry::render() {
  {
    const std::lock_guard<std::mutex> lock(collect_mutex_);
    for (const auto& c : collectors_) c(*this);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& f : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape_help(f.help), f.name, type_name(f.type));
    for (const auto& s : f.members) {
      if (s.counter) out += f.name + render_labels(s.labels) + " " + format_metric_value(s.counter->value()) + "\n";
      if (s.gauge) out += f.name + render_labels(s.labels) + " " + format_metric_value(s.gauge->value()) + "\n";
      if (!s.histogram) continue;
      const metric_histogram& h = *s.histogram;
      for (std::size_t i = 0; i <= h.bounds().size(); ++i) {
        const std::pair<std::string, std::string> le{
            "le", i < h.bounds().size() ? format_metric_value(h.bounds()[i]) : std::string("+Inf")};
        out += f.name + "_bucket" + render_labels(s.labels, &le) + " " + std::to_string(h.cumulative(i)) + "\n";
      }
      out += f.name + "_sum" + render_labels(s.labels) + " " + format_metric_value(h.sum()) + "\n";
      // The +Inf bucket's count: equal to it even while another thread observes.
      out += f.name + "_count" + render_labels(s.labels) + " " + std::to_string(h.cumulative(h.bounds().size())) + "\n";
    }
  }
  return out;
}

}  // namespace attnbench
