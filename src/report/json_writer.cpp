#include "report/json_writer.hpp"

#include <ostream>

#include "report/result_json.hpp"

namespace attnbench {
namespace {
constexpr int json_indent = 2;  // readable in diffs of committed results
}

void json_writer::do_write(const run_result& result, std::ostream& out) const {
  out << run_result_to_json(result).dump(json_indent) << '\n';
}

}  // namespace attnbench
