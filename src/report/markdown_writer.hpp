// Writes report.md: environment, the headline table (throughput and speedup), a detail table
// and one line per variant. NaN prints as "n/a".
#pragma once

#include <string>

#include "report/writer_base.hpp"

namespace attnbench {

class markdown_writer : public writer_base {
 public:
  markdown_writer() : writer_base("md") {}
  std::string file_name() const override { return "report.md"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

// The headline table alone (Method | Throughput | Speedup), as printed on the console.
std::string markdown_table(const run_result& result);

}  // namespace attnbench
