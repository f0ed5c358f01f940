// Renders a sweep_result: the combined CSV (the axes' values, then the run CSV's columns, a row
// per point and variant), report.md (a summary table over every point with only the axes that
// vary, the line chart, then each point's own table) and the line chart of throughput against the
// swept axis.
#pragma once

#include <string>

#include "report/sweep_result.hpp"

namespace attnbench {

std::string sweep_csv(const sweep_result& sweep);

// chart_file: the line chart written beside report.md ("" for none).
std::string sweep_markdown(const sweep_result& sweep, const std::string& chart_file);

// llama-bench's table, for a sweep with a `test` axis (the generate scenario,
// config/sweep.hpp: generate_test): a row per point and variant, in llama-bench's columns —
// model, size, params, backend, threads, test, t/s — with the variant and its output check after
// them. size: the variant's weight_bytes; t/s: prefill_tokens_per_s for pp, decode_tokens_per_s
// for tg, the geometric mean over the timed passes with its 95% interval in brackets (llama-bench
// prints mean ± standard deviation). "" when the sweep has no test axis.
std::string llama_bench_table(const sweep_result& sweep);

// x: the first axis with more than one value (the first axis when none has); one line per variant
// and combination of the other varying axes' values; y: samples/s, geometric mean with its 95% CI.
std::string sweep_svg(const sweep_result& sweep);

}  // namespace attnbench
