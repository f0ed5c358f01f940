// Writes results.csv: one row per variant with the headline numbers, for spreadsheets and
// plotting scripts. RFC 4180 quoting; NaN (undefined) is an empty field.
#pragma once

#include "report/writer_base.hpp"

namespace attnbench {

class csv_writer : public writer_base {
 public:
  csv_writer() : writer_base("csv") {}
  std::string file_name() const override { return "results.csv"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

}  // namespace attnbench
