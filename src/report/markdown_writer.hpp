// Writes report.md: environment, the headline table (throughput and speedup), the chart (when
// one is written beside it), a detail table, the server scenario's rate sweep (when measured)
// and one line per variant. NaN prints as "n/a".
#pragma once

#include <string>

#include "report/writer_base.hpp"

namespace attnbench {

class markdown_writer : public writer_base {
 public:
  // chart_file: an image written into the same directory (svg_writer's throughput.svg), shown
  // under the headline table; empty for none. GitHub renders a referenced .svg but not inline
  // <svg> in markdown, hence a file.
  explicit markdown_writer(std::string chart_file = "")
      : writer_base("md"), chart_file_(std::move(chart_file)) {}
  std::string file_name() const override { return "report.md"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;

 private:
  std::string chart_file_;
};

// Text for one markdown table cell: '|' escaped (it would end the cell), line breaks made spaces
// (they would end the row).
std::string markdown_cell(const std::string& text);

// The server scenario's latency-against-rate tables ("" when no variant has one), as printed on
// the console after the headline table.
std::string markdown_server_tables(const run_result& result);

// Cells and blocks of report.md, for the sweep report: "151.07 ± 1.20", "1.45× [1.42–1.52]",
// and the environment block (machine, versions, model, workload, measurement).
std::string markdown_throughput_cell(const summary& s);
std::string markdown_speedup_cell(const variant_result& v);
std::string markdown_environment(const run_result& r);

// The headline table alone (Method | Throughput | Speedup), as printed on the console.
std::string markdown_table(const run_result& result);

}  // namespace attnbench
