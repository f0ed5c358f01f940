// Writes report.html: one self-contained page (report/html_page.hpp) with the run's environment,
// each variant's throughput with its 95% interval, the speedup table, latency percentiles, the
// output check and the technique metrics, as tables; and, drawn by the inline script, charts of
// throughput and speedup with their intervals. `run --formats json,md,html` and `attnbench report
// --formats html DIR` write it.
#pragma once

#include "report/writer_base.hpp"

namespace attnbench {

class html_writer : public writer_base {
 public:
  html_writer() : writer_base("html") {}
  std::string file_name() const override { return "report.html"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

}  // namespace attnbench
