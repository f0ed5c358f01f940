#include "report/junit_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/xml_escape.hpp"

namespace attnbench {
namespace {

using outcome = junit_case::outcome;

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : "n/a"; }
std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:+.1f}%", fraction * 100) : "n/a";
}

// Seconds spent in the timed passes: each throughput sample is one pass over every sample.
double timed_seconds(const variant_result& v, int64_t samples_per_pass) {
  double total = 0;
  for (double s : v.throughput.samples)
    if (std::isfinite(s) && s > 0) total += static_cast<double>(samples_per_pass) / s;
  return total;
}

// Cosines close to 1 need more digits than {:.3g} gives.
std::string cosine(double v) { return std::isfinite(v) ? fmt::format("{:.6f}", v) : "n/a"; }

std::string check_detail(const variant_result& v) {
  const check_result& c = v.check;
  const std::string head = fmt::format(
      "status {}\noutput {}\nrel_l2 {} (tolerance {})\nmax_abs {}\ncosine {}\n", to_string(c.status),
      to_string(c.output), number(c.rel_l2), number(c.tolerance), number(c.max_abs), cosine(c.cosine));
  // Top-1 only for logits: an argmax over embedding dimensions means nothing.
  const std::string agreement =
      c.output == output_kind::embedding
          ? fmt::format("cosine per sample: min {} (bound {}), mean {}\n", cosine(c.cosine_min),
                        cosine(c.cosine_min_bound), cosine(c.cosine_mean))
          : fmt::format("predictions kept {}\ntop1_agreement {}\ntop1_agreement_decisive {} over {} samples\n",
                        predictions_kept_text(c), number(c.top1_agreement), number(c.top1_agreement_decisive),
                        c.decisive_samples);
  return head + agreement + fmt::format("nonfinite {}\n", c.nonfinite);
}

std::string side_text(const compared_side& s) {
  if (!s.present) return "absent";
  const auto rate = [](double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : std::string("n/a"); };
  const std::string interval = std::isfinite(s.geomean_ci_low) && std::isfinite(s.geomean_ci_high)
                                   ? fmt::format("[{}–{}]", rate(s.geomean_ci_low), rate(s.geomean_ci_high))
                                   : "[n/a]";
  return fmt::format("{} (check {}, rel_l2 {}), geometric mean {} samples/s {} over {} repetitions",
                     to_string(s.status), to_string(s.check_status), number(s.rel_l2), rate(s.geomean),
                     interval, s.n);
}

}  // namespace

std::string junit_xml(const junit_suite& suite) {
  const auto count = [&](outcome o) {
    return std::count_if(suite.cases.begin(), suite.cases.end(),
                         [&](const junit_case& c) { return c.result == o; });
  };
  double total_time = 0;
  for (const auto& c : suite.cases)
    if (std::isfinite(c.time_s)) total_time += c.time_s;
  const std::string counts =
      fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.3f}")", suite.cases.size(),
                  count(outcome::failed), count(outcome::error), count(outcome::skipped), total_time);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"attnbench\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"{}\" {}", xml_escape(suite.name), counts);
  if (!suite.timestamp.empty()) out += fmt::format(" timestamp=\"{}\"", xml_escape(suite.timestamp));
  if (!suite.hostname.empty()) out += fmt::format(" hostname=\"{}\"", xml_escape(suite.hostname));
  out += ">\n";
  for (const auto& c : suite.cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(c.classname),
                       xml_escape(c.name), std::isfinite(c.time_s) ? c.time_s : 0.0);
    std::string output;
    if (!c.properties.empty()) {
      output += "      <properties>\n";
      for (const auto& [name, value] : c.properties)
        output += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", xml_escape(name), xml_escape(value));
      output += "      </properties>\n";
    }
    if (!c.output.empty()) output += fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.output));
    switch (c.result) {
      case outcome::passed:
        out += output.empty() ? "/>\n" : ">\n" + output + "    </testcase>\n";
        break;
      case outcome::failed:
        out += fmt::format(">\n      <failure message=\"{}\">{}</failure>\n{}    </testcase>\n",
                           xml_escape(c.message), xml_escape(c.detail), output);
        break;
      case outcome::error:
        out += fmt::format(">\n      <error message=\"{}\"/>\n{}    </testcase>\n", xml_escape(c.message), output);
        break;
      case outcome::skipped:
        out += fmt::format(">\n      <skipped message=\"{}\"/>\n{}    </testcase>\n", xml_escape(c.message),
                           output);
        break;
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

junit_suite junit_suite_of(const run_result& result) {
  junit_suite suite{result.name, result.environment.date, result.environment.hostname, {}};
  for (const auto& v : result.variants) {
    junit_case c;
    c.classname = result.name;
    c.name = v.name;
    c.time_s = timed_seconds(v, result.workload.samples);
    if (v.status == status_kind::skipped) {
      c.result = outcome::skipped;
      c.message = v.reason.empty() ? "skipped" : v.reason;
    } else if (hit_limit(v.status)) {
      c.result = outcome::error;
      c.message = to_string(v.status) + ": " + v.reason;
    } else if (v.status == status_kind::fail || v.check.status == status_kind::fail) {
      c.result = outcome::failed;
      c.message = !v.check.message.empty() ? v.check.message
                  : !v.reason.empty()      ? v.reason
                                           : "output check failed";
      c.detail = check_detail(v);
    }
    const auto width = [](double f) { return std::isfinite(f) ? fmt::format("±{:.1f}%", f * 100) : "n/a"; };
    if (v.repetition.noisy)
      c.output = fmt::format(
          "noisy: after {} rounds the throughput interval is {} and the speedup interval {}, "
          "wider than the run target {}",
          v.repetition.rounds, width(v.repetition.throughput_rel_half_width),
          width(v.repetition.speedup_rel_half_width), width(result.target_rel_half_width));
    for (const auto& m : v.metrics)
      c.properties.emplace_back("metric." + m.name, std::isfinite(m.value)
                                                        ? fmt::format("{} {}", m.value, m.unit)
                                                        : "n/a" + (m.note.empty() ? "" : ": " + m.note));
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

junit_suite junit_suite_of(const comparison& cmp) {
  junit_suite suite{"compare." + cmp.candidate.name, cmp.candidate.date, "", {}};
  const std::string threshold = fmt::format("{:g}%", cmp.options.threshold * 100);
  for (const auto& v : cmp.variants) {
    junit_case c;
    c.classname = suite.name;
    c.name = v.name;
    std::vector<std::string> failures;
    if (v.has_verdict && v.outcome == verdict::slower)
      failures.push_back(fmt::format("SLOWER: throughput {} (p = {}, {}), beyond the {} threshold",
                                     percent(v.change), number(v.p_value), v.method, threshold));
    if (v.newly_failing)
      failures.push_back(fmt::format("output check newly FAIL (BASE {}, NEW {})",
                                     v.base.present ? to_string(v.base.check_status) : "absent",
                                     to_string(v.candidate.check_status)));
    if (!failures.empty()) {
      c.result = outcome::failed;
      for (const auto& f : failures) c.message += (c.message.empty() ? "" : "; ") + f;
      c.detail = fmt::format("BASE: {}\nNEW: {}\n", side_text(v.base), side_text(v.candidate));
    } else if (v.kind == pairing::skipped || v.kind == pairing::removed ||
               (v.has_verdict && v.outcome == verdict::noisy)) {
      c.result = outcome::skipped;
      c.message = v.kind == pairing::removed ? "only in BASE" : v.note;
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

}  // namespace attnbench
