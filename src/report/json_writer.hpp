// Writes results.json: the whole record, as defined by result_json.hpp.
#pragma once

#include "report/writer_base.hpp"

namespace attnbench {

class json_writer : public writer_base {
 public:
  json_writer() : writer_base("json") {}
  std::string file_name() const override { return "results.json"; }

 protected:
  void do_write(const run_result& result, std::ostream& out) const override;
};

}  // namespace attnbench
