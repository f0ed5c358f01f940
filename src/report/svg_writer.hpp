// Writes throughput.svg: bar charts of throughput (the geometric mean with its 95% CI) and of
// speedup over the baseline (the geometric mean of per-round ratios with its 95% CI), one bar per
// variant that ran. report.md shows it as an image (markdown_writer with a chart file). A FAIL
// variant's bars are red and marked; a SKIPPED variant has no bar, only its reason.
#pragma once

#include "report/writer_base.hpp"

namespace attnbench {

class svg_writer : public writer_base {
 public:
  svg_writer() : writer_base("svg") {}
  std::string file_name() const override { return "throughput.svg"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

}  // namespace attnbench
