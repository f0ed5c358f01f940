// Writes results.csv: one row per variant with the headline numbers, for spreadsheets and
// plotting scripts. RFC 4180 quoting; NaN (undefined) is an empty field.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "report/writer_base.hpp"

namespace attnbench {

class csv_writer : public writer_base {
 public:
  csv_writer() : writer_base("csv") {}
  std::string file_name() const override { return "results.csv"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

// Which optional column groups a table has: appended after the fixed columns, only when some
// variant has them (notes, the train scenario, offloading, the pipeline), so existing readers keep theirs.
// Technique metrics (report/metric.hpp) come last, one column per metric name ("metric_<name>", in
// the metric's unit as results.json gives it), in the order variants first report them.
struct csv_layout {
  bool notes = false, train = false, offload = false, parallel = false, pipeline = false, repetition = false;
  std::vector<std::string> metrics;
  void add(const variant_result& v);
};
csv_layout csv_layout_of(const run_result& result);

// The pieces, for writers that add columns (the sweep's combined CSV): the header, one variant's
// fields (already quoted), RFC 4180 quoting, and writing one row.
std::vector<std::string> csv_columns(const csv_layout& layout);
std::vector<std::string> csv_fields(const variant_result& v, const csv_layout& layout);
std::string csv_quoted(const std::string& field);
void write_csv_row(std::ostream& out, const std::vector<std::string>& fields);

}  // namespace attnbench
